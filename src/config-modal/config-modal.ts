import { Task, TaskStatus } from '@lit/task';
import { html, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { property, query, state } from 'lit/decorators.js';
import { ifDefined } from 'lit/directives/if-defined.js';
import { live } from 'lit/directives/live.js';
import { ForgeApiError } from '../api/client.js';
import type { Integration, VariableValue } from '../api/types.js';
import { emit, type ForgeErrorCode, type HideReason } from '../events.js';
import { ConfigError, ForgeElement } from '../forge-element.js';
import { themeStyles } from '../theme.js';
import type { TokenSource } from '../token/token-source.js';
import { TokenError } from '../token/token-source.js';
import { configModalStyles } from './config-modal.styles.js';
import { OAuthError, openOAuthPopup, waitForOAuth } from './oauth-popup.js';
import { byBlock, fieldKey, parseField, placeErrors, settingFields, valuesOf } from './settings.js';
import {
  integrationsToConnect,
  loadSetup,
  type Setup,
  type SetupTarget,
  type SetupWorkflow,
  WorkflowNotOfferedError,
} from './setup.js';
import { type ConfigModalStrings, defaultConfigModalStrings } from './strings.js';
import { alertGlyph, checkGlyph, closeGlyph, iconImage, renderField } from './templates.js';

type Step = 'choose' | 'connect' | 'configure' | 'done';

/** What this open of the modal does: enable a new workflow, edit the user's copy, or pick from an integration's. */
type Mode = 'install' | 'edit' | 'integration';

/** The user's copy of a parent workflow, as far as this modal knows it. */
interface Installed {
  workflowId: string;
  active: boolean;
  /** The values the service holds, by field key: what a save compares against. */
  saved: Map<string, VariableValue>;
}

type ConnectRequest =
  | { integration: Integration; popup: Window | null }
  | { integration: Integration; parameters: Record<string, string> };

/** Where focus goes after the next render: into the step, to the main button, or to the first invalid field. */
type FocusTarget = 'body' | 'primary' | 'invalid';

/** The tab-order controls focus may move to; `aria-disabled` ones stay focusable on purpose. */
const FOCUSABLE = 'input:not([disabled]), button:not([disabled]), [tabindex="0"]';

/**
 * The configuration modal an end user meets when they enable an integration workflow: it
 * connects the accounts the workflow needs, asks for its settings and installs it, or edits the
 * user's existing copy. A fresh user token is fetched on every open.
 *
 * Open it for one parent workflow (`workflow-id`) or for an integration (`integration`: the
 * user switches on the workflows they want; switching an installed one off turns it off on
 * save). `workflow-id` wins when both are set. Changes to these attributes apply at the next
 * open. After a save, a success view says so; the modal closes when the user presses Done
 * (no timer, so nobody misses the confirmation).
 *
 * @event forge-show - The modal starts to open.
 * @event forge-after-show - The modal is open; `show()` settles now.
 * @event forge-hide - The modal is about to close; `detail.reason` is `button`, `escape`, `backdrop`, `done` (cancelable: `preventDefault()` keeps it open) or `method` (`hide()`, not cancelable).
 * @event forge-after-hide - The modal closed, with the same `detail.reason`; `hide()` settles now.
 * @event forge-install - The user enabled a workflow: `{parentId, workflowId}` (the new child's id).
 * @event forge-update - The user saved new settings: `{workflowId, blockIds}` (the variable blocks changed).
 * @event forge-toggle - In the integration view, a save switched an installed workflow on or off: `{workflowId, active}`.
 * @event forge-error - Something failed; the modal shows it too: `{code, message, status?}`.
 *
 * @slot success - Extra content under the success message, e.g. a link to the host's help.
 *
 * @csspart dialog - The native `<dialog>`.
 * @csspart panel - The column inside it: header, body, footer.
 * @csspart header - The title bar.
 * @csspart icon - An integration icon.
 * @csspart title - The heading that labels the dialog.
 * @csspart subtitle - The line under the title.
 * @csspart close-button - The × button.
 * @csspart body - The scrolling content of the current step.
 * @csspart steps - The list of steps.
 * @csspart integration - One row of the connect step.
 * @csspart workflow - One row of the integration view.
 * @csspart switch - A workflow's on/off switch in the integration view.
 * @csspart block - A group of settings (one variable block).
 * @csspart field - A label, input, help text and error.
 * @csspart label - A field's label.
 * @csspart input - A field's input.
 * @csspart help - A field's help text.
 * @csspart field-error - A field's error message.
 * @csspart message - An error or notice about the whole step.
 * @csspart footer - The bar with the step's buttons.
 *
 * @cssproperty [--forge-modal-width=34rem] - Width of the modal on wide screens.
 * @cssproperty [--forge-color-backdrop=rgb(15 17 21 / 0.55)] - Colour over the page behind the modal.
 * @cssproperty --forge-font-family - Font of everything inside.
 * @cssproperty [--forge-font-size=0.9375rem] - Base font size.
 * @cssproperty [--forge-radius=0.625rem] - Corner radius of controls; the modal's is larger.
 * @cssproperty [--forge-spacing=1rem] - The spacing unit.
 * @cssproperty --forge-color-surface - Background of the modal.
 * @cssproperty --forge-color-surface-raised - Background of the footer and of rows.
 * @cssproperty --forge-color-text - Text colour.
 * @cssproperty --forge-color-text-muted - Help text and secondary text.
 * @cssproperty --forge-color-border - Borders and dividers.
 * @cssproperty --forge-color-accent - Main buttons, switches, the current step.
 * @cssproperty --forge-color-accent-text - Text on the accent colour.
 * @cssproperty --forge-color-danger - Errors.
 * @cssproperty --forge-color-success - Connected and success states.
 * @cssproperty --forge-focus-ring - The `box-shadow` of a focused control.
 */
export class ForgeConfigModal extends ForgeElement {
  static override styles = [themeStyles, configModalStyles];

  @query('dialog') private dialog!: HTMLDialogElement;

  /** Whether the modal is open. Prefer `show()` and `hide()`, which answer when the transition is over. */
  @property({ type: Boolean, reflect: true }) open = false;

  /** The parent workflow to enable or edit (its `workflowId` in `GET /workflow`). */
  @property({ attribute: 'workflow-id', reflect: true }) workflowId = '';

  /** Instead of `workflow-id`: an integration name; the user picks which of its workflows to enable. */
  @property({ reflect: true }) integration = '';

  /** Replacements for any of the texts shown; English by default. */
  @property({ attribute: false }) strings: Partial<ConfigModalStrings> = {};

  /** Pins the colour scheme; without it the modal follows `prefers-color-scheme`. */
  @property({ reflect: true }) theme?: 'light' | 'dark';

  /** How long to wait for an OAuth sign-in window before giving up, in milliseconds. */
  @property({ attribute: 'oauth-timeout', type: Number }) oauthTimeout = 3 * 60_000;

  @state() private mode: Mode = 'install';
  @state() private step: Step = 'configure';
  /** Parent ids of the workflows switched on (always the one workflow outside the integration view). */
  @state() private selected = new Set<string>();
  @state() private connected = new Set<string>();
  /** What the user typed in the settings form, by field key. */
  @state() private values = new Map<string, string>();
  /** Required-parameter values by `integration` and name, dropped once stored. */
  @state() private parameters = new Map<string, string>();
  @state() private fieldErrors = new Map<string, string>();
  /** A problem with the whole step (a failed save, or a step left unfinished). */
  @state() private stepMessage?: string;
  @state() private connectFailure?: { integration: string; message: string };
  /** Connected required-parameter integrations whose form is open again to replace the values. */
  @state() private reconnecting = new Set<string>();
  /** The integration the current connect run is for. */
  @state() private connecting?: string;

  private text: ConfigModalStrings = defaultConfigModalStrings;
  private installed = new Map<string, Installed>();
  private heldTokens?: TokenSource;
  private focusAfterRender?: FocusTarget;
  private returnFocusTo?: HTMLElement;
  /** Set by a close the user asked for, after `forge-hide` was not canceled. */
  private closeReason?: HideReason;
  private pointerDownOnBackdrop = false;
  /** An open's work has started (and not yet been stopped by a close or a removal). */
  private inSession = false;
  /** `close` events still to come from our own `dialog.close()` calls (they are dispatched later). */
  private ownCloseEvents = 0;
  private showWaiters: Array<() => void> = [];
  private hideWaiters: Array<() => void> = [];

  private readonly loadTask = new Task<[], Setup>(this, {
    autoRun: false,
    task: (_args, { signal }) => this.load(signal),
  });

  private readonly connectTask = new Task<[ConnectRequest], void>(this, {
    autoRun: false,
    task: ([request], { signal }) => this.connect(request, signal),
  });

  private readonly saveTask = new Task<[Map<string, VariableValue>], void>(this, {
    autoRun: false,
    task: ([values], { signal }) => this.save(values, signal),
  });

  override connectedCallback(): void {
    super.connectedCallback();
    // Reattached while open: the removal ended the session, so start again.
    if (this.open && this.hasUpdated) this.requestUpdate();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    if (!this.open) return;
    this.endSession();
    // A removed dialog keeps its `open` attribute but leaves the top layer; close it so a
    // reattached element can show it as a modal again.
    this.closeDialogElement();
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('strings')) this.text = { ...defaultConfigModalStrings, ...this.strings };
    // Starting here rather than after render means the first frame already shows "loading".
    if (this.open && !this.inSession && this.isConnected) {
      this.inSession = true;
      this.resetSession();
      void this.loadTask.run([]);
    }
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (this.open && !this.dialog.open && this.isConnected) this.openDialog();
    else if (!this.open && changed.has('open') && changed.get('open') === true) this.closeDialog();
    if (this.focusAfterRender && this.dialog.open) this.moveFocus(this.focusAfterRender);
  }

  // Opening and closing ---------------------------------------------------------------------

  private openDialog(): void {
    this.returnFocusTo = deepActiveElement();
    emit(this, 'forge-show', {});
    this.dialog.showModal();
    void this.updateComplete.then(() => {
      if (!this.open) return;
      emit(this, 'forge-after-show', {});
      this.settle(this.showWaiters);
    });
  }

  private closeDialog(): void {
    const reason = this.closeReason ?? 'method';
    this.closeReason = undefined;
    if (reason === 'method') emit(this, 'forge-hide', { reason });
    this.endSession();
    this.closeDialogElement();
    emit(this, 'forge-after-hide', { reason });
    if (this.returnFocusTo?.isConnected) this.returnFocusTo.focus();
    this.returnFocusTo = undefined;
    this.settle(this.hideWaiters);
    this.settle(this.showWaiters);
  }

  private closeDialogElement(): void {
    if (!this.dialog.open) return;
    this.ownCloseEvents++;
    this.dialog.close();
  }

  /** A close the user asked for: the host may keep the modal open by canceling `forge-hide`. */
  private requestClose(reason: HideReason): void {
    if (!emit(this, 'forge-hide', { reason }, { cancelable: true })) return;
    this.closeReason = reason;
    this.open = false;
  }

  private settle(waiters: Array<() => void>): void {
    for (const resolve of waiters.splice(0)) resolve();
  }

  private resetSession(): void {
    this.step = 'configure';
    this.stepMessage = undefined;
    this.connectFailure = undefined;
    this.fieldErrors = new Map();
    this.parameters = new Map();
    this.reconnecting = new Set();
  }

  /** Stops everything this open started: requests, a waiting sign-in popup, the token refresh timer. */
  private endSession(): void {
    this.inSession = false;
    this.loadTask.abort();
    this.connectTask.abort();
    this.saveTask.abort();
    this.heldTokens?.keepFresh(false);
    this.heldTokens = undefined;
    this.parameters = new Map();
  }

  private handleCancel(event: Event): void {
    // Chrome makes `cancel` uncancelable when Escape is pressed twice without other input
    // (https://github.com/whatwg/html/issues/10046); the dialog then closes and `close` handles it.
    if (!event.cancelable) return;
    event.preventDefault();
    this.requestClose('escape');
  }

  private handleNativeClose(): void {
    // Anything but our own close (an Escape Chrome did not let us cancel) lands here.
    if (this.ownCloseEvents > 0) {
      this.ownCloseEvents--;
      return;
    }
    if (!this.open) return;
    if (!emit(this, 'forge-hide', { reason: 'escape' }, { cancelable: true })) {
      this.dialog.showModal();
      return;
    }
    this.closeReason = 'escape';
    this.open = false;
  }

  private handlePointerDown(event: PointerEvent): void {
    this.pointerDownOnBackdrop = this.isBackdropEvent(event);
  }

  private handleDialogClick(event: MouseEvent): void {
    // A drag that starts in a field and ends outside must not close the modal.
    if (this.pointerDownOnBackdrop && this.isBackdropEvent(event)) this.requestClose('backdrop');
    this.pointerDownOnBackdrop = false;
  }

  /** Clicks on the backdrop target the dialog itself, outside the box its content fills. */
  private isBackdropEvent(event: MouseEvent): boolean {
    if (event.target !== this.dialog) return false;
    const box = this.dialog.getBoundingClientRect();
    return (
      event.clientX < box.left || event.clientX > box.right || event.clientY < box.top || event.clientY > box.bottom
    );
  }

  private moveFocus(target: FocusTarget): void {
    this.focusAfterRender = undefined;
    const root = this.renderRoot;
    const candidates = [
      target === 'invalid' ? root.querySelector<HTMLElement>('[aria-invalid="true"]') : null,
      target !== 'primary' ? root.querySelector<HTMLElement>(`.body :is(${FOCUSABLE})`) : null,
      root.querySelector<HTMLElement>('.footer .primary'),
      root.querySelector<HTMLElement>('.close'),
    ];
    candidates.find((element) => element)?.focus();
  }

  // Loading -------------------------------------------------------------------------------

  private async load(signal: AbortSignal): Promise<Setup> {
    try {
      const { client, tokens } = this.connection();
      if (this.heldTokens !== tokens) {
        this.heldTokens?.keepFresh(false);
        tokens.keepFresh(true);
        this.heldTokens = tokens;
      }
      const target: SetupTarget | undefined = this.workflowId
        ? { workflowId: this.workflowId }
        : this.integration
          ? { integration: this.integration }
          : undefined;
      if (!target) {
        throw new ConfigError(`Set workflow-id or integration on <${this.localName}> to say what to set up.`);
      }
      const setup = await loadSetup(client, tokens, target, signal);
      this.begin(setup);
      return setup;
    } catch (error) {
      if (!signal.aborted) {
        this.report(error, 'load-failed');
        this.focusAfterRender = 'primary';
      }
      throw error;
    }
  }

  /** Fills the form from what was loaded: the user's values when they have the workflow, else the defaults. */
  private begin(setup: Setup): void {
    this.mode = setup.integration ? 'integration' : setup.workflows[0]!.child ? 'edit' : 'install';
    this.installed = new Map();
    const values = new Map<string, string>();
    for (const { parent, child } of setup.workflows) {
      const saved = child ? valuesOf(parent.workflowId, child.blocks) : new Map<string, VariableValue>();
      if (child) this.installed.set(parent.workflowId, { workflowId: child._id, active: child.active, saved });
      const defaults = valuesOf(parent.workflowId, parent.blocks);
      for (const field of settingFields(parent)) {
        values.set(field.key, String(saved.get(field.key) ?? defaults.get(field.key) ?? ''));
      }
    }
    this.values = values;
    this.connected = setup.connected;
    this.selected = new Set(
      setup.workflows
        .filter((w) => !setup.integration || this.installed.get(w.parent.workflowId)?.active)
        .map((w) => w.parent.workflowId),
    );
    this.step = setup.integration ? 'choose' : this.stepAfterChoosing(setup);
    this.focusAfterRender = 'body';
  }

  private selectedWorkflows(setup: Setup): SetupWorkflow[] {
    return setup.workflows.filter((w) => this.selected.has(w.parent.workflowId));
  }

  /** Straight to the settings when every account is already connected; Back still reaches the accounts. */
  private stepAfterChoosing(setup: Setup): Step {
    const missing = integrationsToConnect(this.selectedWorkflows(setup)).some((i) => !this.connected.has(i.name));
    return missing ? 'connect' : 'configure';
  }

  private steps(setup: Setup): Step[] {
    const steps: Step[] = setup.integration ? ['choose'] : [];
    if (integrationsToConnect(this.selectedWorkflows(setup)).length > 0) steps.push('connect');
    steps.push('configure');
    return steps;
  }

  private goTo(step: Step): void {
    this.step = step;
    this.stepMessage = undefined;
    this.focusAfterRender = 'body';
  }

  // Connecting ----------------------------------------------------------------------------

  private handleOAuthClick(integration: Integration): void {
    if (this.connectTask.status === TaskStatus.PENDING) return;
    // Before any await: a popup opened later in the task would be blocked.
    const popup = openOAuthPopup(integration.name);
    void this.connectTask.run([{ integration, popup }]);
  }

  private handleParametersSubmit(event: SubmitEvent, integration: Integration): void {
    event.preventDefault();
    if (this.connectTask.status === TaskStatus.PENDING) return;
    const parameters: Record<string, string> = {};
    const errors = new Map(this.fieldErrors);
    for (const parameter of integration.requiredParameters ?? []) {
      const key = parameterKey(integration, parameter.name);
      const value = (this.parameters.get(key) ?? '').trim();
      if (value) parameters[parameter.name] = value;
      else errors.set(key, this.text.parameterRequired(parameter.displayName));
    }
    this.fieldErrors = errors;
    if (Object.keys(parameters).length < (integration.requiredParameters?.length ?? 0)) {
      this.focusAfterRender = 'invalid';
      return;
    }
    void this.connectTask.run([{ integration, parameters }]);
  }

  private async connect(request: ConnectRequest, signal: AbortSignal): Promise<void> {
    const { integration } = request;
    this.connecting = integration.name;
    this.connectFailure = undefined;
    try {
      const { client } = this.connection();
      if ('parameters' in request) {
        await client.saveCredential(integration.name, request.parameters, { signal });
        // Secrets stay in memory no longer than needed.
        this.parameters = new Map([...this.parameters].filter(([key]) => !key.startsWith(`${integration.name}\n`)));
        this.reconnecting = new Set([...this.reconnecting].filter((name) => name !== integration.name));
      } else {
        const { popup } = request;
        if (!popup) throw new OAuthError('oauth-blocked');
        let url: string;
        try {
          ({ url } = await client.startOAuth(integration.name, { signal }));
        } catch (error) {
          popup.close();
          throw error;
        }
        const serviceOrigin = new URL(this.apiBase).origin;
        const timeoutMs = this.oauthTimeout;
        await waitForOAuth({ popup, url, serviceOrigin, integration: integration.name, timeoutMs, signal });
      }
      // The service decides what is connected, so read it back rather than assume.
      this.connected = new Set((await client.listCredentials({ signal })).map((c) => c.integration));
      const setup = this.loadTask.value!;
      const allConnected = integrationsToConnect(this.selectedWorkflows(setup)).every((i) =>
        this.connected.has(i.name),
      );
      if (allConnected) this.stepMessage = undefined;
      this.focusAfterRender = allConnected ? 'primary' : 'body';
    } catch (error) {
      if (signal.aborted) throw error;
      if (error instanceof ForgeApiError && 'parameters' in request) {
        const errors = new Map(this.fieldErrors);
        for (const { path, message } of error.errors) {
          const parameter = integration.requiredParameters?.find((p) => path === `body.${p.name}`);
          if (parameter) errors.set(parameterKey(integration, parameter.name), message);
        }
        this.fieldErrors = errors;
      }
      const { message } = this.report(error, 'connect-failed', integration.displayName);
      this.connectFailure = { integration: integration.name, message };
      throw error;
    }
  }

  private handleContinueFromConnect(setup: Setup): void {
    const missing = integrationsToConnect(this.selectedWorkflows(setup)).filter((i) => !this.connected.has(i.name));
    if (missing.length === 0) this.goTo('configure');
    else this.stepMessage = this.text.connectAllFirst;
  }

  // Saving --------------------------------------------------------------------------------

  private handleSave(event: Event): void {
    event.preventDefault();
    // The button only looks disabled (it keeps focus); a second click while saving must not install twice.
    if (this.saveTask.status === TaskStatus.PENDING) return;
    const setup = this.loadTask.value!;
    const parsed = new Map<string, VariableValue>();
    const errors = new Map<string, string>();
    for (const { parent } of this.selectedWorkflows(setup)) {
      for (const field of settingFields(parent)) {
        const value = parseField(field, this.values.get(field.key) ?? '');
        if (value === undefined) errors.set(field.key, this.text.numberRequired(field.label));
        else parsed.set(field.key, value);
      }
    }
    this.fieldErrors = errors;
    if (errors.size > 0) {
      this.stepMessage = this.text.fieldErrors;
      this.focusAfterRender = 'invalid';
      return;
    }
    void this.saveTask.run([parsed]);
  }

  /**
   * Installs what is new and PATCHes only the blocks that changed, one workflow after another.
   * Each success is recorded (and its event fired) as it happens, so a retry after a failure
   * repeats only what did not go through.
   */
  private async save(values: Map<string, VariableValue>, signal: AbortSignal): Promise<void> {
    const setup = this.loadTask.value!;
    this.stepMessage = undefined;
    try {
      const { client } = this.connection();
      for (const { parent } of setup.workflows) {
        const parentId = parent.workflowId;
        const fields = settingFields(parent);
        let installed = this.installed.get(parentId);
        if (!this.selected.has(parentId)) {
          if (this.mode === 'integration' && installed?.active) {
            await client.deactivateWorkflow(installed.workflowId, { signal });
            installed.active = false;
            emit(this, 'forge-toggle', { workflowId: installed.workflowId, active: false });
          }
          continue;
        }
        if (!installed) {
          const mine = new Map(fields.map((f) => [f.key, values.get(f.key)!]));
          try {
            const { workflowId } = await client.installWorkflow(
              parentId,
              { variables: byBlock(fields, mine) },
              { signal },
            );
            this.installed.set(parentId, { workflowId, active: true, saved: mine });
            emit(this, 'forge-install', { parentId, workflowId });
            continue;
          } catch (error) {
            const existing =
              error instanceof ForgeApiError && error.status === 409 ? error.problem.workflowId : undefined;
            if (typeof existing !== 'string') throw this.placeFieldErrors(error, fields);
            // Installed meanwhile (another tab, or a double submit that got through): save the
            // values into that copy; what it holds is unknown, so every block is written.
            installed = { workflowId: existing, active: true, saved: new Map() };
            this.installed.set(parentId, installed);
          }
        }
        if (this.mode === 'integration' && !installed.active) {
          await client.activateWorkflow(installed.workflowId, { signal });
          installed.active = true;
          emit(this, 'forge-toggle', { workflowId: installed.workflowId, active: true });
        }
        await this.saveChangedBlocks(installed, fields, values, signal);
      }
      this.fieldErrors = new Map();
      this.step = 'done';
      this.focusAfterRender = 'primary';
    } catch (error) {
      if (signal.aborted) throw error;
      const { message } = this.report(error, 'save-failed');
      this.stepMessage = this.fieldErrors.size > 0 ? this.text.fieldErrors : this.text.saveFailed(message);
      this.focusAfterRender = this.fieldErrors.size > 0 ? 'invalid' : undefined;
      throw error;
    }
  }

  private async saveChangedBlocks(
    installed: Installed,
    fields: ReturnType<typeof settingFields>,
    values: Map<string, VariableValue>,
    signal: AbortSignal,
  ): Promise<void> {
    const changed = fields.filter((f) => installed.saved.get(f.key) !== values.get(f.key));
    const blocks = byBlock(changed, values);
    const blockIds: string[] = [];
    try {
      for (const [blockId, blockValues] of Object.entries(blocks)) {
        try {
          await this.connection().client.setVariables(installed.workflowId, blockId, blockValues, { signal });
        } catch (error) {
          throw this.placeFieldErrors(error, fields, blockId);
        }
        const parentId = fields[0]!.parentId;
        for (const [name, value] of Object.entries(blockValues)) {
          installed.saved.set(fieldKey(parentId, blockId, name), value);
        }
        blockIds.push(blockId);
      }
    } finally {
      if (blockIds.length > 0) emit(this, 'forge-update', { workflowId: installed.workflowId, blockIds });
    }
  }

  /** Puts the service's field errors next to their fields; answers the error to rethrow. */
  private placeFieldErrors(error: unknown, fields: ReturnType<typeof settingFields>, blockId?: string): unknown {
    if (error instanceof ForgeApiError && error.errors.length > 0) {
      const { byField } = placeErrors(error.errors, fields, blockId);
      if (byField.size > 0) this.fieldErrors = byField;
    }
    return error;
  }

  // Errors --------------------------------------------------------------------------------

  /** Says what went wrong in the modal's words and fires `forge-error` with the same message. */
  private report(
    error: unknown,
    fallback: ForgeErrorCode,
    integrationName = '',
  ): { code: ForgeErrorCode; message: string; status?: number } {
    const t = this.text;
    let detail: { code: ForgeErrorCode; message: string; status?: number };
    if (error instanceof TokenError) {
      detail = { code: error.code, message: error.message, ...(error.status ? { status: error.status } : {}) };
    } else if (error instanceof ConfigError) {
      detail = { code: 'config', message: error.message };
    } else if (error instanceof WorkflowNotOfferedError) {
      detail = { code: 'load-failed', message: t.workflowNotOffered(error.workflowId), status: 404 };
    } else if (error instanceof OAuthError) {
      const messages = {
        'oauth-blocked': t.oauthBlocked,
        'oauth-closed': t.oauthClosed,
        'oauth-timeout': t.oauthTimeout,
        'oauth-denied': t.oauthDenied,
        'connect-failed': (name: string) => t.connectFailed(name, error.reason),
      };
      detail = { code: error.code, message: messages[error.code](integrationName) };
    } else {
      const reason =
        error instanceof ForgeApiError ? error.detail || error.title : error instanceof Error ? error.message : '';
      const status = error instanceof ForgeApiError ? error.status : undefined;
      detail = {
        code: fallback,
        message: fallback === 'connect-failed' ? t.connectFailed(integrationName, reason) : reason,
        ...(status ? { status } : {}),
      };
    }
    emit(this, 'forge-error', detail);
    return detail;
  }

  // Public methods ------------------------------------------------------------------------

  /** Opens the modal (fetching a fresh user token); settles after `forge-after-show`. */
  show(): Promise<void> {
    if (this.open && this.dialog?.open) return Promise.resolve();
    this.open = true;
    return new Promise((resolve) => this.showWaiters.push(resolve));
  }

  /** Closes the modal, stopping any work under way; settles after `forge-after-hide`. */
  hide(): Promise<void> {
    if (!this.open) return Promise.resolve();
    this.open = false;
    return new Promise((resolve) => this.hideWaiters.push(resolve));
  }

  // Rendering -----------------------------------------------------------------------------

  override render() {
    const setup = this.loadTask.status === TaskStatus.COMPLETE ? this.loadTask.value : undefined;
    const subtitle = setup ? this.subtitle(setup) : undefined;
    return html`<dialog
      part="dialog"
      aria-labelledby="title"
      aria-describedby=${ifDefined(subtitle ? 'subtitle' : undefined)}
      @cancel=${this.handleCancel}
      @close=${this.handleNativeClose}
      @pointerdown=${this.handlePointerDown}
      @click=${this.handleDialogClick}
    >
      <div part="panel" class="panel">
        <header part="header" class="header">
          ${setup ? this.renderHeaderIcons(setup) : nothing}
          <div class="heading">
            <h2 part="title" id="title">${setup ? this.heading(setup) : this.text.titleLoading}</h2>
            ${subtitle ? html`<p part="subtitle" id="subtitle" class="subtitle">${subtitle}</p>` : nothing}
          </div>
          <button part="close-button" class="close" aria-label=${this.text.close} @click=${() => this.requestClose('button')}>
            ${closeGlyph}
          </button>
        </header>
        ${this.loadTask.render({
          initial: () => this.renderLoading(),
          pending: () => this.renderLoading(),
          complete: (loaded) => this.renderStep(loaded),
          error: (error) => this.renderLoadError(error),
        })}
      </div>
    </dialog>`;
  }

  private heading(setup: Setup): string {
    const t = this.text;
    if (setup.integration) return t.titleIntegration(setup.integration.displayName);
    const name = setup.workflows[0]!.parent.name;
    return this.mode === 'edit' ? t.titleEdit(name) : t.titleInstall(name);
  }

  private subtitle(setup: Setup): string | undefined {
    if (setup.integration) return this.text.subtitleIntegration;
    const { parent } = setup.workflows[0]!;
    const active = this.installed.get(parent.workflowId)?.active;
    if (this.mode === 'edit') return active === false ? this.text.subtitleEditInactive : this.text.subtitleEdit;
    return parent.description || this.text.subtitleInstall;
  }

  private renderHeaderIcons(setup: Setup) {
    const integrations = setup.integration ? [setup.integration] : setup.workflows[0]!.parent.integrations;
    return html`<div class="header-icons">${integrations.slice(0, 3).map((i) => iconImage(i.icon))}</div>`;
  }

  private layout(body: unknown, footer: unknown, busy = false): TemplateResult {
    return html`<div part="body" class="body" aria-busy=${busy ? 'true' : 'false'}>${body}</div>
      ${footer === nothing ? nothing : html`<footer part="footer" class="footer">${footer}</footer>`}`;
  }

  private renderLoading() {
    return this.layout(
      html`<div class="loading" role="status"><span class="spinner" aria-hidden="true"></span>${this.text.loading}</div>`,
      nothing,
      true,
    );
  }

  private renderLoadError(error: unknown) {
    if ((error as Error)?.name === 'AbortError') return this.renderLoading();
    const message = this.describe(error);
    return this.layout(
      html`<div part="message" class="message error" role="alert">
        ${alertGlyph}
        <div><p class="message-title">${this.text.loadFailed}</p><p>${message}</p></div>
      </div>`,
      html`<button class="button" @click=${() => this.requestClose('button')}>${this.text.close}</button>
        <button class="button primary" @click=${() => this.retryLoad()}>${this.text.retry}</button>`,
    );
  }

  /** The message `report()` gave for an error, for views rendered from the task's state. */
  private describe(error: unknown): string {
    if (error instanceof WorkflowNotOfferedError) return this.text.workflowNotOffered(error.workflowId);
    if (error instanceof ForgeApiError) return error.detail || error.title;
    return error instanceof Error ? error.message : String(error);
  }

  private retryLoad(): void {
    this.resetSession();
    this.focusAfterRender = 'body';
    void this.loadTask.run([]);
  }

  private renderStep(setup: Setup) {
    switch (this.step) {
      case 'choose':
        return this.renderChoose(setup);
      case 'connect':
        return this.renderConnect(setup);
      case 'configure':
        return this.renderConfigure(setup);
      case 'done':
        return this.renderDone(setup);
    }
  }

  private renderSteps(setup: Setup) {
    const steps = this.steps(setup);
    if (steps.length < 2) return nothing;
    const names = { choose: this.text.stepChoose, connect: this.text.stepConnect, configure: this.text.stepConfigure };
    const current = steps.indexOf(this.step);
    return html`<ol part="steps" class="steps" aria-label=${this.text.stepsLabel}>
      ${steps.map(
        (step, i) =>
          html`<li class=${i < current ? 'past' : ''} aria-current=${ifDefined(i === current ? 'step' : undefined)}>
            ${names[step as keyof typeof names]}
          </li>`,
      )}
    </ol>`;
  }

  private renderMessage() {
    return this.stepMessage
      ? html`<div part="message" class="message error" role="alert">${alertGlyph}<p>${this.stepMessage}</p></div>`
      : nothing;
  }

  private renderChoose(setup: Setup) {
    const t = this.text;
    const name = setup.integration!.displayName;
    if (setup.workflows.length === 0) {
      return this.layout(
        html`<p class="empty">${t.noWorkflows(name)}</p>`,
        html`<button class="button primary" @click=${() => this.requestClose('button')}>${t.close}</button>`,
      );
    }
    const toggle = (parentId: string, on: boolean) => {
      const selected = new Set(this.selected);
      if (on) selected.add(parentId);
      else selected.delete(parentId);
      this.selected = selected;
    };
    return this.layout(
      html`${this.renderSteps(setup)}
        <p class="intro">${t.chooseIntro(name)}</p>
        <ul class="rows" role="list">
          ${setup.workflows.map(
            ({ parent }, i) => html`<li part="workflow" class="row">
              <label class="workflow">
                <span class="row-text">
                  <span class="row-name" id="workflow-${i}">${parent.name}</span>
                  ${parent.description ? html`<span class="help" id="workflow-${i}-help">${parent.description}</span>` : nothing}
                </span>
                <input
                  part="switch"
                  class="switch"
                  type="checkbox"
                  role="switch"
                  aria-labelledby="workflow-${i}"
                  aria-describedby=${ifDefined(parent.description ? `workflow-${i}-help` : undefined)}
                  .checked=${live(this.selected.has(parent.workflowId))}
                  @change=${(event: Event) => toggle(parent.workflowId, (event.target as HTMLInputElement).checked)}
                />
              </label>
            </li>`,
          )}
        </ul>`,
      html`<button class="button primary" @click=${() => this.goTo(this.stepAfterChoosing(setup))}>
        ${t.continue}
      </button>`,
    );
  }

  private renderConnect(setup: Setup) {
    const t = this.text;
    return this.layout(
      html`${this.renderSteps(setup)}
        <p class="intro">${t.connectIntro}</p>
        <ul class="rows" role="list">
          ${integrationsToConnect(this.selectedWorkflows(setup)).map((integration, i) =>
            this.renderIntegration(integration, i),
          )}
        </ul>
        ${this.renderMessage()}`,
      html`${setup.integration ? html`<button class="button" @click=${() => this.goTo('choose')}>${t.back}</button>` : nothing}
        <button class="button primary" @click=${() => this.handleContinueFromConnect(setup)}>${t.continue}</button>`,
    );
  }

  private renderIntegration(integration: Integration, index: number) {
    const t = this.text;
    const name = integration.displayName;
    const connected = this.connected.has(integration.name);
    const busy = this.connectTask.status === TaskStatus.PENDING && this.connecting === integration.name;
    const failure = this.connectFailure?.integration === integration.name ? this.connectFailure.message : undefined;
    const hasParameters = (integration.requiredParameters?.length ?? 0) > 0;
    const formOpen = hasParameters && (!connected || this.reconnecting.has(integration.name));
    const id = `integration-${index}`;
    const status = busy && !hasParameters ? t.waitingForPopup(name) : connected ? t.connected : t.notConnected;
    let action: unknown = nothing;
    if (!hasParameters) {
      action = html`<button
        class="button ${connected ? '' : 'primary'}"
        aria-describedby="${id}-name ${id}-status"
        aria-disabled=${busy ? 'true' : 'false'}
        @click=${() => this.handleOAuthClick(integration)}
      >
        ${busy ? html`<span class="spinner" aria-hidden="true"></span>` : nothing}
        ${failure ? t.retry : connected ? t.reconnect : t.connect}
      </button>`;
    } else if (connected) {
      const toggle = () => {
        const reconnecting = new Set(this.reconnecting);
        if (formOpen) reconnecting.delete(integration.name);
        else reconnecting.add(integration.name);
        this.reconnecting = reconnecting;
      };
      action = html`<button class="button" aria-describedby="${id}-name" aria-expanded=${formOpen ? 'true' : 'false'} @click=${toggle}>
        ${formOpen ? t.cancel : t.reconnect}
      </button>`;
    }
    return html`<li part="integration" class="row integration">
      <div class="row-head">
        ${iconImage(integration.icon)}
        <span class="row-text">
          <span class="row-name" id="${id}-name">${name}</span>
          <span class="status ${connected ? 'connected' : ''}" id="${id}-status">
            ${connected && !busy ? checkGlyph : nothing}${status}
          </span>
        </span>
        ${action}
      </div>
      ${formOpen ? this.renderParameterForm(integration, id, busy) : nothing}
      ${failure ? html`<p class="row-error" role="alert">${alertGlyph}<span>${failure}</span></p>` : nothing}
    </li>`;
  }

  private renderParameterForm(integration: Integration, id: string, busy: boolean) {
    const t = this.text;
    return html`<form class="parameters" novalidate @submit=${(event: SubmitEvent) => this.handleParametersSubmit(event, integration)}>
      ${(integration.requiredParameters ?? []).map((parameter, i) => {
        const key = parameterKey(integration, parameter.name);
        return renderField({
          id: `${id}-parameter-${i}`,
          label: parameter.displayName,
          description: parameter.description,
          error: this.fieldErrors.get(key),
          value: this.parameters.get(key) ?? '',
          // Keys and secrets are masked; other parameters (a server prefix) are easier to check when visible.
          type: /key|secret|token|password/i.test(parameter.name) ? 'password' : 'text',
          onInput: (value) => this.setParameter(key, value),
        });
      })}
      <div class="form-actions">
        <button class="button primary" type="submit" aria-describedby="${id}-name" aria-disabled=${busy ? 'true' : 'false'}>
          ${busy ? html`<span class="spinner" aria-hidden="true"></span>${t.saving}` : t.saveParameters}
        </button>
      </div>
    </form>`;
  }

  private setParameter(key: string, value: string): void {
    this.parameters = new Map(this.parameters).set(key, value);
    if (this.fieldErrors.has(key)) this.clearFieldError(key);
  }

  private setValue(key: string, value: string): void {
    this.values = new Map(this.values).set(key, value);
    if (this.fieldErrors.has(key)) this.clearFieldError(key);
  }

  private clearFieldError(key: string): void {
    const errors = new Map(this.fieldErrors);
    errors.delete(key);
    this.fieldErrors = errors;
  }

  private renderConfigure(setup: Setup) {
    const t = this.text;
    const workflows = this.selectedWorkflows(setup);
    const saving = this.saveTask.status === TaskStatus.PENDING;
    const steps = this.steps(setup);
    const previous = steps[steps.indexOf('configure') - 1];
    let index = 0;
    const sections = workflows.map(({ parent }) => {
      const fields = settingFields(parent);
      const blocks = [...new Set(fields.map((f) => f.blockId))];
      return html`<section class="workflow-settings">
        ${setup.integration ? html`<h3 class="section-title">${parent.name}</h3>` : nothing}
        ${blocks.map((blockId) => {
          const block = parent.blocks.find((b) => b.id === blockId)!;
          return html`<fieldset part="block" class="block">
            <legend>${block.name}</legend>
            ${fields
              .filter((f) => f.blockId === blockId)
              .map((field) =>
                renderField({
                  id: `field-${index++}`,
                  label: field.label,
                  description: field.description,
                  error: this.fieldErrors.get(field.key),
                  value: this.values.get(field.key) ?? '',
                  type: field.numeric ? 'number' : 'text',
                  onInput: (value) => this.setValue(field.key, value),
                }),
              )}
          </fieldset>`;
        })}
      </section>`;
    });
    const label = this.mode === 'install' ? t.enable : this.mode === 'edit' ? t.saveChanges : t.apply;
    return this.layout(
      html`${this.renderSteps(setup)}
        <p class="intro">${index === 0 ? t.noSettings : t.configureIntro}</p>
        ${this.renderMessage()}
        <form id="settings" class="settings" novalidate @submit=${this.handleSave}>${sections}</form>`,
      html`${previous ? html`<button class="button" @click=${() => this.goTo(previous)}>${t.back}</button>` : nothing}
        <button
          class="button primary"
          type="submit"
          form="settings"
          aria-disabled=${saving ? 'true' : 'false'}
        >
          ${saving ? html`<span class="spinner" aria-hidden="true"></span>${t.saving}` : label}
        </button>`,
      saving,
    );
  }

  private renderDone(setup: Setup) {
    const t = this.text;
    const names = this.selectedWorkflows(setup)
      .map((w) => w.parent.name)
      .join(', ');
    const title =
      this.mode === 'install' ? t.successInstall : this.mode === 'edit' ? t.successEdit : t.successIntegration;
    return this.layout(
      html`<div class="success" role="status">
        <span class="success-mark">${checkGlyph}</span>
        <h3 class="success-title">${title}</h3>
        ${names ? html`<p>${t.successText(names)}</p>` : nothing}
        <slot name="success"></slot>
      </div>`,
      html`<button class="button primary" @click=${() => this.requestClose('done')}>${t.done}</button>`,
    );
  }
}

const parameterKey = (integration: Integration, name: string) => `${integration.name}\n${name}`;

/** The focused element, looking inside shadow roots, so focus can return to a button in one. */
function deepActiveElement(): HTMLElement | undefined {
  let active = document.activeElement;
  while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
  return active instanceof HTMLElement ? active : undefined;
}
