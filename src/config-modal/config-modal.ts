import { Task, TaskStatus } from '@lit/task';
import { html, nothing, type PropertyValues } from 'lit';
import { property, state } from 'lit/decorators.js';
import { ForgeApiError } from '../api/client.js';
import type { Integration, VariableValue } from '../api/types.js';
import { emit, type ForgeErrorCode } from '../events.js';
import { ConfigError } from '../forge-element.js';
import { themeStyles } from '../theme.js';
import type { TokenSource } from '../token/token-source.js';
import { configModalStyles } from './config-modal.styles.js';
import { renderConnect } from './connect-view.js';
import { describeFailure, type Failure } from './failures.js';
import { ForgeModalDialog } from './modal-dialog.js';
import { OAuthError, openOAuthPopup, waitForOAuth } from './oauth-popup.js';
import { SaveError, saveWorkflows } from './save.js';
import { parseField, settingFields, valuesOf } from './settings.js';
import {
  type Installed,
  integrationsToConnect,
  loadSetup,
  type Mode,
  parameterKey,
  type Setup,
  type SetupTarget,
  type Step,
  selectedWorkflows,
} from './setup.js';
import { type ConfigModalStrings, defaultConfigModalStrings } from './strings.js';
import { alertGlyph, closeGlyph, iconImage, layout, spinner } from './templates.js';
import { renderChoose, renderConfigure, renderDone, type StepView } from './views.js';

type ConnectRequest =
  | { integration: Integration; popup: Window | null }
  | { integration: Integration; parameters: Record<string, string> };

/** Where focus goes after the next render: into the step, to its main button, or to the first invalid field. */
type FocusTarget = 'body' | 'primary' | 'invalid';

/** Controls focus may move to; `aria-disabled` ones stay focusable on purpose. */
const FOCUSABLE = 'input:not([disabled]), button:not([disabled])';

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
 * @event forge-hide - The modal is about to close. `detail.reason`: `button`, `escape`, `backdrop` or `done` (cancelable: `preventDefault()` keeps it open), or `method` (`hide()`; not cancelable).
 * @event forge-after-hide - The modal closed, with the same `detail.reason`; `hide()` settles now.
 * @event forge-install - The user enabled a workflow: `{parentId, workflowId}` (the new copy's id).
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
 * @csspart message - An error about the whole step.
 * @csspart footer - The bar with the step's buttons.
 *
 * @cssproperty [--forge-modal-width=34rem] - Width of the modal on wide screens.
 * @cssproperty [--forge-color-backdrop=rgb(15 17 21 / 0.55)] - Colour over the page behind the modal.
 * @cssproperty --forge-font-family - Font of everything inside.
 * @cssproperty [--forge-font-size=0.9375rem] - Base font size.
 * @cssproperty [--forge-radius=0.625rem] - Corner radius of controls; the modal's is larger.
 * @cssproperty [--forge-spacing=1rem] - The spacing unit.
 * @cssproperty --forge-color-surface - Background of the modal.
 * @cssproperty --forge-color-surface-raised - Background of the footer.
 * @cssproperty --forge-color-text - Text colour.
 * @cssproperty --forge-color-text-muted - Help text and secondary text.
 * @cssproperty --forge-color-border - Borders and dividers.
 * @cssproperty --forge-color-accent - Main buttons, switches, the current step.
 * @cssproperty --forge-color-accent-text - Text on the accent colour.
 * @cssproperty --forge-color-danger - Errors.
 * @cssproperty --forge-color-success - Connected and success states.
 * @cssproperty --forge-focus-ring - The `box-shadow` of a focused control.
 */
export class ForgeConfigModal extends ForgeModalDialog {
  static override styles = [themeStyles, configModalStyles];

  /** The parent workflow to enable or edit (its `workflowId` in `GET /workflow`). */
  @property({ attribute: 'workflow-id', reflect: true }) workflowId = '';

  /** Instead of `workflow-id`: an integration name; the user picks which of its workflows to enable. */
  @property({ reflect: true }) integration = '';

  /** Replacements for any of the texts shown; English by default. */
  @property({ attribute: false }) strings: Partial<ConfigModalStrings> = {};

  /** How long to wait for an OAuth sign-in window before giving up, in milliseconds. */
  @property({ attribute: 'oauth-timeout', type: Number }) oauthTimeout = 3 * 60_000;

  @state() private mode: Mode = 'install';
  @state() private step: Step = 'configure';
  /** Parent ids of the workflows switched on (always the one workflow outside the integration view). */
  @state() private selected = new Set<string>();
  @state() private connected = new Set<string>();
  /** What the user typed in the settings form, by field key. */
  @state() private values = new Map<string, string>();
  /** Required-parameter values by `parameterKey`, dropped once stored. */
  @state() private parameters = new Map<string, string>();
  @state() private fieldErrors = new Map<string, string>();
  /** A problem with the whole step (a failed save, or a step left unfinished). */
  @state() private stepMessage?: string;
  @state() private connectFailure?: { integration: string; message: string };
  @state() private reconnecting = new Set<string>();
  /** The integration the latest connect run is for. */
  @state() private connecting?: string;

  private text: ConfigModalStrings = defaultConfigModalStrings;
  /** The user's copies by parent id; a save updates them as it goes. */
  private installed = new Map<string, Installed>();
  private heldTokens?: TokenSource;
  private focusAfterRender?: FocusTarget;

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

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('strings')) this.text = { ...defaultConfigModalStrings, ...this.strings };
    super.willUpdate(changed);
  }

  protected override updated(changed: PropertyValues<this>): void {
    super.updated(changed);
    // The load task settles a little after the state it sets, so wait for it before moving focus.
    const settled = this.loadTask.status !== TaskStatus.PENDING;
    if (this.focusAfterRender && this.dialog.open && settled) this.moveFocus(this.focusAfterRender);
    // A message may appear far from where the user is looking (the body scrolls).
    if ((changed as Map<PropertyKey, unknown>).has('stepMessage') && this.stepMessage) {
      this.renderRoot.querySelector('.body .message')?.scrollIntoView({ block: 'nearest' });
    }
  }

  protected override sessionStarted(): void {
    this.step = 'configure';
    this.stepMessage = undefined;
    this.connectFailure = undefined;
    this.fieldErrors = new Map();
    this.reconnecting = new Set();
    void this.loadTask.run([]);
  }

  /** Stops everything this open started: requests, a waiting sign-in popup, the token refresh timer. */
  protected override sessionEnded(): void {
    this.loadTask.abort();
    this.connectTask.abort();
    this.saveTask.abort();
    this.heldTokens?.keepFresh(false);
    this.heldTokens = undefined;
    // Typed secrets do not outlive the open.
    this.parameters = new Map();
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

  /** Fires `forge-error` for a failure and answers it, worded for the modal. */
  private report(error: unknown, fallback: ForgeErrorCode, integrationName?: string): Failure {
    const failure = describeFailure(error, this.text, fallback, integrationName);
    emit(this, 'forge-error', failure);
    return failure;
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

  private retryLoad(): void {
    this.focusAfterRender = 'body';
    void this.loadTask.run([]);
  }

  // Steps ---------------------------------------------------------------------------------

  private missingConnections(setup: Setup): Integration[] {
    return integrationsToConnect(selectedWorkflows(setup, this.selected)).filter((i) => !this.connected.has(i.name));
  }

  /** Straight to the settings when every account is already connected; Back still reaches the accounts. */
  private stepAfterChoosing(setup: Setup): Step {
    return this.missingConnections(setup).length > 0 ? 'connect' : 'configure';
  }

  private steps(setup: Setup): Step[] {
    const steps: Step[] = setup.integration ? ['choose'] : [];
    if (integrationsToConnect(selectedWorkflows(setup, this.selected)).length > 0) steps.push('connect');
    steps.push('configure');
    return steps;
  }

  private goTo(step: Step): void {
    this.step = step;
    this.stepMessage = undefined;
    this.focusAfterRender = 'body';
  }

  private toggleWorkflow(parentId: string, on: boolean): void {
    const selected = new Set(this.selected);
    if (on) selected.add(parentId);
    else selected.delete(parentId);
    this.selected = selected;
  }

  private continueFromConnect(setup: Setup): void {
    if (this.missingConnections(setup).length === 0) this.goTo('configure');
    else this.stepMessage = this.text.connectAllFirst;
  }

  // Connecting ----------------------------------------------------------------------------

  private connectOAuth(integration: Integration): void {
    if (this.connectTask.status === TaskStatus.PENDING) return;
    // Before any await: a popup opened later would be blocked.
    const popup = openOAuthPopup(integration.name);
    void this.connectTask.run([{ integration, popup }]);
  }

  private submitParameters(event: SubmitEvent, integration: Integration): void {
    event.preventDefault();
    if (this.connectTask.status === TaskStatus.PENDING) return;
    const parameters: Record<string, string> = {};
    const errors = new Map(this.fieldErrors);
    for (const parameter of integration.requiredParameters ?? []) {
      const key = parameterKey(integration.name, parameter.name);
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
        this.forgetParameters(integration.name);
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
      const allConnected = this.missingConnections(this.loadTask.value!).length === 0;
      if (allConnected) this.stepMessage = undefined;
      this.focusAfterRender = allConnected ? 'primary' : 'body';
    } catch (error) {
      if (signal.aborted) throw error;
      if (error instanceof ForgeApiError && 'parameters' in request) this.placeParameterErrors(integration, error);
      const { message } = this.report(error, 'connect-failed', integration.displayName);
      this.connectFailure = { integration: integration.name, message };
      throw error;
    } finally {
      if (!signal.aborted) this.connecting = undefined;
    }
  }

  private placeParameterErrors(integration: Integration, error: ForgeApiError): void {
    const errors = new Map(this.fieldErrors);
    for (const { path, message } of error.errors) {
      const parameter = integration.requiredParameters?.find((p) => path === `body.${p.name}`);
      if (parameter) errors.set(parameterKey(integration.name, parameter.name), message);
    }
    this.fieldErrors = errors;
  }

  private forgetParameters(integration: string): void {
    const prefix = parameterKey(integration, '');
    this.parameters = new Map([...this.parameters].filter(([key]) => !key.startsWith(prefix)));
    this.reconnecting = new Set([...this.reconnecting].filter((name) => name !== integration));
  }

  private toggleReconnect(integration: string): void {
    const reconnecting = new Set(this.reconnecting);
    if (!reconnecting.delete(integration)) reconnecting.add(integration);
    this.reconnecting = reconnecting;
  }

  private setParameter(key: string, value: string): void {
    this.parameters = new Map(this.parameters).set(key, value);
    this.clearFieldError(key);
  }

  // Saving --------------------------------------------------------------------------------

  private setValue(key: string, value: string): void {
    this.values = new Map(this.values).set(key, value);
    this.clearFieldError(key);
  }

  private clearFieldError(key: string): void {
    if (!this.fieldErrors.has(key)) return;
    const errors = new Map(this.fieldErrors);
    errors.delete(key);
    this.fieldErrors = errors;
  }

  private handleSave(event: Event): void {
    event.preventDefault();
    // The button only looks disabled (so it keeps focus): a second press while saving must not install twice.
    if (this.saveTask.status === TaskStatus.PENDING) return;
    const parsed = new Map<string, VariableValue>();
    const errors = new Map<string, string>();
    for (const { parent } of selectedWorkflows(this.loadTask.value!, this.selected)) {
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

  private async save(values: Map<string, VariableValue>, signal: AbortSignal): Promise<void> {
    this.stepMessage = undefined;
    try {
      await saveWorkflows({
        client: this.connection().client,
        setup: this.loadTask.value!,
        mode: this.mode,
        selected: this.selected,
        installed: this.installed,
        values,
        signal,
        notify: (name, detail) => emit(this, name, detail),
      });
      this.step = 'done';
      this.focusAfterRender = 'primary';
    } catch (error) {
      if (signal.aborted) throw error;
      const { message } = this.report(error, 'save-failed');
      const fieldErrors = error instanceof SaveError ? error.fieldErrors : new Map<string, string>();
      this.fieldErrors = fieldErrors;
      this.stepMessage = fieldErrors.size > 0 ? this.text.fieldErrors : this.text.saveFailed(message);
      if (fieldErrors.size > 0) this.focusAfterRender = 'invalid';
      throw error;
    }
  }

  // Rendering -----------------------------------------------------------------------------

  override render() {
    const setup = this.loadTask.status === TaskStatus.COMPLETE ? this.loadTask.value : undefined;
    const subtitle = setup && this.subtitle(setup);
    return this.renderDialog(
      html`<div part="panel" class="panel">
        <header part="header" class="header">
          ${setup ? this.renderHeaderIcons(setup) : nothing}
          <div class="heading">
            <h2 part="title" id="title">${setup ? this.heading(setup) : this.text.titleLoading}</h2>
            ${subtitle ? html`<p part="subtitle" id="subtitle" class="subtitle">${subtitle}</p>` : nothing}
          </div>
          <button
            part="close-button"
            class="close"
            aria-label=${this.text.close}
            @click=${() => this.requestClose('button')}
          >
            ${closeGlyph}
          </button>
        </header>
        ${this.loadTask.render({
          initial: () => this.renderLoading(),
          pending: () => this.renderLoading(),
          complete: (loaded) => this.renderStep(loaded),
          error: (error) => this.renderLoadError(error),
        })}
      </div>`,
      { describedBy: subtitle ? 'subtitle' : undefined },
    );
  }

  private heading(setup: Setup): string {
    if (setup.integration) return this.text.titleIntegration(setup.integration.displayName);
    const name = setup.workflows[0]!.parent.name;
    return this.mode === 'edit' ? this.text.titleEdit(name) : this.text.titleInstall(name);
  }

  private subtitle(setup: Setup): string {
    if (setup.integration) return this.text.subtitleIntegration;
    const { parent } = setup.workflows[0]!;
    if (this.mode === 'install') return parent.description || this.text.subtitleInstall;
    return this.installed.get(parent.workflowId)?.active === false
      ? this.text.subtitleEditInactive
      : this.text.subtitleEdit;
  }

  private renderHeaderIcons(setup: Setup) {
    const integrations = setup.integration ? [setup.integration] : setup.workflows[0]!.parent.integrations;
    return html`<div class="header-icons">${integrations.slice(0, 3).map((i) => iconImage(i.icon))}</div>`;
  }

  private renderLoading() {
    return layout(html`<div class="loading" role="status">${spinner}${this.text.loading}</div>`, nothing, {
      busy: true,
    });
  }

  private renderLoadError(error: unknown) {
    // Aborted by a close: nothing to say, and the next open starts over.
    if ((error as Error)?.name === 'AbortError') return this.renderLoading();
    const { message } = describeFailure(error, this.text, 'load-failed');
    return layout(
      html`<div part="message" class="message error" role="alert">
        ${alertGlyph}
        <div><p class="message-title">${this.text.loadFailed}</p><p>${message}</p></div>
      </div>`,
      html`<button class="button" @click=${() => this.requestClose('button')}>${this.text.close}</button>
        <button class="button primary" @click=${() => this.retryLoad()}>${this.text.retry}</button>`,
    );
  }

  private renderStep(setup: Setup) {
    const view: StepView = {
      text: this.text,
      setup,
      mode: this.mode,
      step: this.step,
      steps: this.steps(setup),
      selected: this.selected,
      connected: this.connected,
      values: this.values,
      parameters: this.parameters,
      fieldErrors: this.fieldErrors,
      reconnecting: this.reconnecting,
      stepMessage: this.stepMessage,
      connectFailure: this.connectFailure,
      connecting: this.connectTask.status === TaskStatus.PENDING ? this.connecting : undefined,
      saving: this.saveTask.status === TaskStatus.PENDING,
      on: {
        close: (reason) => this.requestClose(reason),
        goTo: (step) => this.goTo(step),
        continueFromChoose: () => this.goTo(this.stepAfterChoosing(setup)),
        continueFromConnect: () => this.continueFromConnect(setup),
        toggleWorkflow: (parentId, on) => this.toggleWorkflow(parentId, on),
        connectOAuth: (integration) => this.connectOAuth(integration),
        submitParameters: (event, integration) => this.submitParameters(event, integration),
        toggleReconnect: (integration) => this.toggleReconnect(integration),
        setParameter: (key, value) => this.setParameter(key, value),
        setValue: (key, value) => this.setValue(key, value),
        save: (event) => this.handleSave(event),
      },
    };
    const renderers = { choose: renderChoose, connect: renderConnect, configure: renderConfigure, done: renderDone };
    return renderers[this.step](view);
  }
}
