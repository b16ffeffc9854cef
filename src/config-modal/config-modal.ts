import { Task, TaskStatus } from '@lit/task';
import { html, nothing, type PropertyDeclarations, type PropertyValues } from 'lit';
import type { ForgeApiError } from '../api/embed-client.js';
import type { Integration, ParentWorkflow, VariableValue } from '../api/types.js';
import { emit, errorDetail, ForgeError, type ForgeErrorCode } from '../events.js';
import { ConfigError } from '../forge-element.js';
import { themeStyles } from '../theme.js';
import type { TokenSource } from '../token/token-source.js';
import { configModalStyles } from './config-modal.styles.js';
import { ForgeModalDialog } from './modal-dialog.js';
import { openOAuthPopup, waitForOAuth } from './oauth-popup.js';
import { byBlock, type SettingField, settingFields, valueIn, variableBlocks } from './settings.js';
import { type ConfigModalStrings, defaultConfigModalStrings } from './strings.js';
import { alertGlyph, checkGlyph, closeGlyph, iconImage, layout, spinner } from './templates.js';

/** What an open is about, read fresh on every open. */
interface Setup {
  /** Set when the modal was opened for an integration rather than one workflow. */
  integration?: Integration | undefined;
  /** The parent workflows on offer: the one of `workflow-id`, or the integration's. */
  workflows: ParentWorkflow[];
}

/** The steps, in order; `choose` only in the integration view. */
type Step = 'choose' | 'connect' | 'configure' | 'done';

/** Where focus goes after the next render: into the step, to its main button, or to the first invalid field. */
type FocusTarget = 'body' | 'primary' | 'invalid';

/** The user's copy of a parent workflow, as far as this open knows it. */
interface Installed {
  workflowId: string;
  active: boolean;
}

const { PENDING } = TaskStatus;

/** Keys and secrets are masked; other parameters (a server prefix) are easier to check when visible. */
const SECRET_NAME = /key|secret|token|password/i;

/** Where a required parameter's typed value is kept until it is stored (a field's key has two line breaks). */
const parameterKey = (integration: string, name: string) => `${integration}\n${name}`;

const isNumber = (text = '') => text.trim() !== '' && Number.isFinite(Number(text));

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

  static override properties: PropertyDeclarations = {
    // Not reflected, like api-base: see ForgeElement.
    workflowId: { attribute: 'workflow-id' },
    integration: {},
    strings: { attribute: false },
    oauthTimeout: { attribute: 'oauth-timeout', type: Number },
  };

  /** The parent workflow to enable or edit (its `workflowId` in `GET /workflow`). */
  workflowId = '';

  /** Instead of `workflow-id`: an integration name; the user picks which of its workflows to enable. */
  integration = '';

  /** Replacements for any of the texts shown; English by default. */
  strings: Partial<ConfigModalStrings> = {};

  /** How long to wait for an OAuth sign-in window before giving up, in milliseconds. */
  oauthTimeout = 3 * 60_000;

  // The state of an open. It is private, so changes call requestUpdate() themselves.
  #text = defaultConfigModalStrings;
  /** Enable a new workflow, edit the user's copy, or pick among an integration's. */
  #mode: 'install' | 'edit' | 'integration' = 'install';
  #step: Step = 'configure';
  /** Parent ids of the workflows switched on (always the one workflow outside the integration view). */
  #selected = new Set<string>();
  /** Names of the integrations the user has connected. */
  #connected = new Set<string>();
  /** What the user typed, by field key or `parameterKey` (parameters are dropped once stored). */
  #values = new Map<string, string>();
  /** Errors by field key or `parameterKey`, and an integration's failed connection by its name. */
  #errors = new Map<string, string>();
  /** A problem with the whole step (a failed save, or a step left unfinished). */
  #message?: string | undefined;
  #messageShown?: string | undefined;
  /** Connected required-parameter integrations whose form is open again. */
  #reopened = new Set<string>();
  /** The integration the latest connect run is for. */
  #connecting?: string;
  /** The user's copies by parent id; a save updates them as it goes. */
  #installed = new Map<string, Installed>();
  /** The values the service holds, by field key: what a save compares against. */
  #saved = new Map<string, VariableValue>();
  #tokens?: TokenSource | undefined;
  #focus?: FocusTarget | undefined;
  /** Numbers the fields of one render, for their ids. */
  #fieldCount = 0;

  #loadTask = new Task<[], Setup>(this, {
    autoRun: false,
    task: (_args, { signal }) => this.#load(signal),
  });

  #connectTask = new Task<[Integration, Record<string, string> | undefined, Window | null], void>(this, {
    autoRun: false,
    task: (args, { signal }) => this.#connect(...args, signal),
  });

  #saveTask = new Task<[], void>(this, {
    autoRun: false,
    task: (_args, { signal }) => this.#save(signal),
  });

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('strings')) this.#text = { ...defaultConfigModalStrings, ...this.strings };
    super.willUpdate(changed);
  }

  protected override updated(changed: PropertyValues<this>): void {
    super.updated(changed);
    const root = this.renderRoot;
    const focus = this.#focus;
    // The load task settles a little after the state it sets, so wait for it before moving focus.
    if (focus && this.dialog.open && this.#loadTask.status !== PENDING) {
      this.#focus = undefined;
      (
        (focus === 'invalid' && root.querySelector<HTMLElement>('[aria-invalid="true"]')) ||
        (focus !== 'primary' && root.querySelector<HTMLElement>('.body :is(input, button)')) ||
        root.querySelector<HTMLElement>('.footer .primary') ||
        root.querySelector<HTMLElement>('.close')
      )?.focus();
    }
    // A new message may appear far from where the user is looking (the body scrolls).
    if (this.#message !== this.#messageShown) {
      this.#messageShown = this.#message;
      root.querySelector('.body .message')?.scrollIntoView({ block: 'nearest' });
    }
  }

  protected override sessionStarted(): void {
    this.#message = undefined;
    this.#errors = new Map();
    this.#reopened = new Set();
    void this.#loadTask.run();
  }

  protected override sessionEnded(): void {
    this.#loadTask.abort();
    this.#connectTask.abort();
    this.#saveTask.abort();
    this.#tokens?.keepFresh(false);
    this.#tokens = undefined;
    // What was typed (secrets among it) is not kept after a close; the next open reads anew.
    this.#values = new Map();
  }

  /** Emits `forge-error` and answers the message, `describe` putting it in the modal's words. */
  #report(error: unknown, code: ForgeErrorCode, describe = (message: string) => message): string {
    const detail = errorDetail(error, code);
    detail.message = describe(detail.message);
    emit(this, 'forge-error', detail);
    return detail.message;
  }

  /** Finds the field each of the service's field errors belongs to; `keys` maps error paths to field keys. */
  #placeErrors(error: unknown, keys: Array<[path: string, key: string]>): void {
    const byPath = new Map(keys);
    for (const { path, message } of (error as ForgeApiError).errors ?? []) {
      const key = byPath.get(path);
      if (key) this.#errors.set(key, message);
    }
  }

  #update(change: () => void): void {
    change();
    this.requestUpdate();
  }

  // Loading -------------------------------------------------------------------------------

  async #load(signal: AbortSignal): Promise<Setup> {
    try {
      const { client, tokens } = this.connection();
      if (this.#tokens !== tokens) {
        this.#tokens?.keepFresh(false);
        tokens.keepFresh(true);
        this.#tokens = tokens;
      }
      const { workflowId, integration } = this;
      if (!workflowId && !integration) {
        throw new ConfigError(`Set workflow-id or integration on <${this.localName}> to say what to set up.`);
      }
      // A fresh token first (the service wants one per display of the modal), then everything
      // else in one request: the offer, the user's copies of it and the connected accounts.
      await tokens.fresh();
      const { workflows, installed, credentials } = await client
        .getSetup(workflowId ? { workflowId } : { integration }, { signal })
        .catch((error: ForgeApiError) => {
          // The only 404 of GET /setup: a parent id that is not (or no longer) on offer.
          throw error.status === 404
            ? new ForgeError('load-failed', this.#text.workflowNotOffered(workflowId), 404)
            : error;
        });
      // The form starts from the user's values where they have the workflow, else the defaults.
      this.#installed = new Map();
      this.#saved = new Map();
      this.#values = new Map();
      for (const parent of workflows) {
        const child = installed.find((copy) => copy.parentId === parent.workflowId);
        if (child) this.#installed.set(parent.workflowId, { workflowId: child._id, active: child.active });
        for (const field of settingFields(parent)) {
          const saved = child && valueIn(child.blocks, field);
          if (saved !== undefined) this.#saved.set(field.key, saved);
          this.#values.set(field.key, String(saved ?? valueIn(parent.blocks, field) ?? ''));
        }
      }
      this.#mode = workflowId ? (installed[0] ? 'edit' : 'install') : 'integration';
      this.#connected = new Set(credentials.map((c) => c.integration));
      this.#selected = new Set(
        workflows
          .filter((parent) => workflowId || this.#installed.get(parent.workflowId)?.active)
          .map((parent) => parent.workflowId),
      );
      const setup: Setup = {
        workflows,
        integration: workflowId
          ? undefined
          : (workflows.flatMap((parent) => parent.integrations).find((i) => i.name === integration) ?? {
              name: integration,
              displayName: integration,
              icon: '',
              type: '',
            }),
      };
      this.#step = setup.integration ? 'choose' : this.#stepAfterChoosing(setup);
      this.#focus = 'body';
      return setup;
    } catch (error) {
      if (!signal.aborted) {
        this.#report(error, 'load-failed');
        this.#focus = 'primary';
      }
      throw error;
    }
  }

  // Steps ---------------------------------------------------------------------------------

  #chosen(setup: Setup): ParentWorkflow[] {
    return setup.workflows.filter((parent) => this.#selected.has(parent.workflowId));
  }

  /** The integrations of the chosen workflows that need an account, each once, in order of appearance. */
  #toConnect(setup: Setup): Integration[] {
    const integrations = this.#chosen(setup)
      .flatMap((parent) => parent.integrations)
      .filter((i) => i.type === 'oauth2' || i.requiredParameters?.length);
    return [...new Map(integrations.map((i) => [i.name, i])).values()];
  }

  #missing(setup: Setup): Integration[] {
    return this.#toConnect(setup).filter((i) => !this.#connected.has(i.name));
  }

  /** Straight to the settings when every account is already connected; Back still reaches the accounts. */
  #stepAfterChoosing(setup: Setup): Step {
    return this.#missing(setup)[0] ? 'connect' : 'configure';
  }

  #steps(setup: Setup): Step[] {
    const steps: Step[] = setup.integration ? ['choose'] : [];
    if (this.#toConnect(setup)[0]) steps.push('connect');
    return [...steps, 'configure'];
  }

  #goTo(step: Step): void {
    this.#update(() => {
      this.#step = step;
      this.#message = undefined;
      this.#focus = 'body';
    });
  }

  #continueFromConnect(setup: Setup): void {
    if (this.#missing(setup)[0]) this.#update(() => (this.#message = this.#text.connectAllFirst));
    else this.#goTo('configure');
  }

  #setValue(key: string, value: string): void {
    this.#update(() => {
      this.#values.set(key, value);
      this.#errors.delete(key);
    });
  }

  // Connecting ----------------------------------------------------------------------------

  #connectOAuth(integration: Integration): void {
    if (this.#connectTask.status === PENDING) return;
    // Before any await: a popup opened later would be blocked.
    void this.#connectTask.run([integration, undefined, openOAuthPopup(integration.name)]);
  }

  #submitParameters(event: SubmitEvent, integration: Integration): void {
    event.preventDefault();
    if (this.#connectTask.status === PENDING) return;
    const values: Record<string, string> = {};
    for (const { name, displayName } of integration.requiredParameters!) {
      const key = parameterKey(integration.name, name);
      const value = this.#values.get(key)?.trim();
      if (value) values[name] = value;
      else this.#errors.set(key, this.#text.parameterRequired(displayName));
    }
    if (Object.keys(values).length < integration.requiredParameters!.length) {
      this.#update(() => (this.#focus = 'invalid'));
    } else {
      void this.#connectTask.run([integration, values, null]);
    }
  }

  async #connect(
    integration: Integration,
    parameters: Record<string, string> | undefined,
    popup: Window | null,
    signal: AbortSignal,
  ): Promise<void> {
    const { name, displayName } = integration;
    this.#connecting = name;
    this.#errors.delete(name);
    try {
      const { client } = this.connection();
      if (parameters) {
        await client.saveCredential(name, parameters, { signal });
        for (const key of Object.keys(parameters)) this.#values.delete(parameterKey(name, key));
        this.#reopened.delete(name);
      } else {
        if (!popup) throw new ForgeError('oauth-blocked', '');
        let url: string;
        try {
          ({ url } = await client.startOAuth(name, { signal }));
        } catch (error) {
          popup.close();
          throw error;
        }
        const grant = await waitForOAuth(popup, url, new URL(this.apiBase).origin, name, this.oauthTimeout, signal);
        // Only the page that started the flow holds the grant; confirming binds it to this user.
        await client.confirmOAuth(name, grant, { signal });
      }
      // The service decides what is connected, so read it back rather than assume.
      this.#connected = new Set((await client.listCredentials({ signal })).map((c) => c.integration));
      const allConnected = !this.#missing(this.#loadTask.value!)[0];
      if (allConnected) this.#message = undefined;
      this.#focus = allConnected ? 'primary' : 'body';
    } catch (error) {
      if (signal.aborted) throw error;
      if (parameters) {
        this.#placeErrors(
          error,
          Object.keys(parameters).map((key) => [`body.${key}`, parameterKey(name, key)]),
        );
      }
      const t = this.#text;
      const oauthMessages: Partial<Record<ForgeErrorCode, (name: string) => string>> = {
        'oauth-blocked': t.oauthBlocked,
        'oauth-closed': t.oauthClosed,
        'oauth-timeout': t.oauthTimeout,
        'oauth-denied': t.oauthDenied,
      };
      const oauthMessage = oauthMessages[(error as ForgeError).code];
      const describe = (reason: string) =>
        oauthMessage ? oauthMessage(displayName) : t.connectFailed(displayName, reason);
      this.#errors.set(name, this.#report(error, 'connect-failed', describe));
      throw error;
    }
  }

  // Saving --------------------------------------------------------------------------------

  /** A field's value as the service wants it: numbers for numeric fields, else the text. */
  #valueOf = (field: SettingField): VariableValue => {
    const text = this.#values.get(field.key) ?? '';
    return field.numeric ? Number(text) : text;
  };

  #handleSave(event: Event): void {
    event.preventDefault();
    // The button only looks disabled (so it keeps focus): a second press while saving must not install twice.
    if (this.#saveTask.status === PENDING) return;
    this.#errors = new Map();
    for (const parent of this.#chosen(this.#loadTask.value!)) {
      for (const { key, label, numeric } of settingFields(parent)) {
        if (numeric && !isNumber(this.#values.get(key))) this.#errors.set(key, this.#text.numberRequired(label));
      }
    }
    if (this.#errors.size) {
      this.#update(() => {
        this.#message = this.#text.fieldErrors;
        this.#focus = 'invalid';
      });
    } else {
      void this.#saveTask.run();
    }
  }

  /**
   * Installs what is new, PATCHes only the variable blocks that changed and, in the integration
   * view, switches installed workflows on or off, one workflow after another. Each success is
   * recorded as it happens (and its event fires), so a retry after a failure repeats only what
   * did not go through.
   */
  async #save(signal: AbortSignal): Promise<void> {
    this.#message = undefined;
    const options = { signal };
    const switchOnOff = this.#mode === 'integration';
    try {
      const { client } = this.connection();
      const toggle = async (copy: Installed, active: boolean) => {
        await client[active ? 'activateWorkflow' : 'deactivateWorkflow'](copy.workflowId, options);
        copy.active = active;
        emit(this, 'forge-toggle', { workflowId: copy.workflowId, active });
      };
      for (const parent of this.#loadTask.value!.workflows) {
        const parentId = parent.workflowId;
        const fields = settingFields(parent);
        let copy = this.#installed.get(parentId);
        if (!this.#selected.has(parentId)) {
          if (switchOnOff && copy?.active) await toggle(copy, false);
          continue;
        }
        if (!copy) {
          try {
            const body = { variables: byBlock(fields, this.#valueOf) };
            const { workflowId } = await client.installWorkflow(parentId, body, options);
            this.#installed.set(parentId, { workflowId, active: true });
            for (const field of fields) this.#saved.set(field.key, this.#valueOf(field));
            emit(this, 'forge-install', { parentId, workflowId });
            continue;
          } catch (error) {
            const { status, problem } = error as ForgeApiError;
            const existing = status === 409 && problem?.workflowId;
            if (typeof existing !== 'string') {
              this.#placeErrors(
                error,
                fields.map((f) => [`body.variables.${f.block}.${f.name}`, f.key]),
              );
              throw error;
            }
            // Installed meanwhile (another tab): save the values into that copy. What it holds
            // is unknown, so every block is written.
            this.#installed.set(parentId, (copy = { workflowId: existing, active: true }));
            for (const field of fields) this.#saved.delete(field.key);
          }
        }
        if (switchOnOff && !copy.active) await toggle(copy, true);
        const changed = fields.filter((field) => this.#saved.get(field.key) !== this.#valueOf(field));
        const blockIds: string[] = [];
        try {
          for (const [blockId, values] of Object.entries(byBlock(changed, this.#valueOf))) {
            const inBlock = fields.filter((field) => field.block === blockId);
            try {
              await client.setVariables(copy.workflowId, blockId, values, options);
            } catch (error) {
              this.#placeErrors(
                error,
                inBlock.map((f) => [`body.${f.name}`, f.key]),
              );
              throw error;
            }
            for (const field of inBlock) this.#saved.set(field.key, this.#valueOf(field));
            blockIds.push(blockId);
          }
        } finally {
          if (blockIds[0]) emit(this, 'forge-update', { workflowId: copy.workflowId, blockIds });
        }
      }
      this.#step = 'done';
      this.#focus = 'primary';
    } catch (error) {
      if (signal.aborted) throw error;
      const message = this.#report(error, 'save-failed');
      const placed = this.#errors.size > 0;
      this.#message = placed ? this.#text.fieldErrors : this.#text.saveFailed(message);
      if (placed) this.#focus = 'invalid';
      throw error;
    }
  }

  // Rendering -----------------------------------------------------------------------------

  override render() {
    const t = this.#text;
    const setup = this.#loadTask.status === TaskStatus.COMPLETE ? this.#loadTask.value : undefined;
    let title = t.titleLoading;
    let subtitle: string | undefined;
    if (setup?.integration) {
      title = t.titleIntegration(setup.integration.displayName);
      subtitle = t.subtitleIntegration;
    } else if (setup) {
      const { name, description, workflowId } = setup.workflows[0]!;
      const install = this.#mode === 'install';
      title = (install ? t.titleInstall : t.titleEdit)(name);
      subtitle = install
        ? description || t.subtitleInstall
        : this.#installed.get(workflowId)?.active === false
          ? t.subtitleEditInactive
          : t.subtitleEdit;
    }
    const loading = () =>
      layout(html`<div class="loading muted" role="status">${spinner}${t.loading}</div>`, undefined, true);
    return this.renderDialog(
      html`<div part="panel" class="panel">
        <header part="header" class="header">
          ${
            setup
              ? html`<div class="header-icons">
                  ${(setup.integration ? [setup.integration] : setup.workflows[0]!.integrations)
                    .slice(0, 3)
                    .map((i) => iconImage(i.icon))}
                </div>`
              : nothing
          }
          <div class="heading">
            <h2 part="title" id="title">${title}</h2>
            ${subtitle ? html`<p part="subtitle" id="subtitle" class="muted">${subtitle}</p>` : nothing}
          </div>
          <button part="close-button" class="close" aria-label=${t.close} @click=${() => this.requestClose('button')}>
            ${closeGlyph}
          </button>
        </header>
        ${this.#loadTask.render({
          initial: loading,
          pending: loading,
          complete: (loaded) => this.#renderStep(loaded),
          // Aborted by a close: nothing to say, and the next open starts over.
          error: (error) =>
            (error as Error).name === 'AbortError' ? loading() : this.#renderLoadError(error as Error),
        })}
      </div>`,
      subtitle ? 'subtitle' : undefined,
    );
  }

  #renderLoadError({ message }: Error) {
    const t = this.#text;
    return layout(
      html`<div part="message" class="message" role="alert">
        ${alertGlyph}
        <div><p class="message-title">${t.loadFailed}</p><p>${message}</p></div>
      </div>`,
      html`<button class="button" @click=${() => this.requestClose('button')}>${t.close}</button>
        <button
          class="button primary"
          @click=${() => {
            this.#focus = 'body';
            void this.#loadTask.run();
          }}
        >
          ${t.retry}
        </button>`,
    );
  }

  #renderStep(setup: Setup) {
    this.#fieldCount = 0;
    const t = this.#text;
    if (this.#step === 'done') {
      const names = this.#chosen(setup)
        .map((parent) => parent.name)
        .join(', ');
      const title = { install: t.successInstall, edit: t.successEdit, integration: t.successIntegration }[this.#mode];
      return layout(
        html`<div class="success" role="status">
          <span class="success-mark">${checkGlyph}</span>
          <h3>${title}</h3>
          ${names ? html`<p class="muted">${t.successText(names)}</p>` : nothing}
          <slot name="success"></slot>
        </div>`,
        html`<button class="button primary" @click=${() => this.requestClose('done')}>${t.done}</button>`,
      );
    }
    const steps = this.#steps(setup);
    const current = steps.indexOf(this.#step);
    const names = { choose: t.stepChoose, connect: t.stepConnect, configure: t.stepConfigure };
    const stepList = steps[1]
      ? html`<ol part="steps" class="steps" aria-label=${t.stepsLabel}>
          ${steps.map(
            (step, i) =>
              html`<li class=${i < current ? 'past' : ''} aria-current=${i === current ? 'step' : nothing}>
                ${names[step as keyof typeof names]}
              </li>`,
          )}
        </ol>`
      : nothing;
    const message = this.#message
      ? html`<div part="message" class="message" role="alert">${alertGlyph}<p>${this.#message}</p></div>`
      : nothing;
    const back = (step: Step | undefined) =>
      step ? html`<button class="button" @click=${() => this.#goTo(step)}>${t.back}</button>` : nothing;
    const intro = (text: string) => html`${stepList}<p class="intro muted">${text}</p>`;

    if (this.#step === 'choose') {
      const name = setup.integration!.displayName;
      if (!setup.workflows[0]) {
        return layout(
          html`<p class="empty muted">${t.noWorkflows(name)}</p>`,
          html`<button class="button primary" @click=${() => this.requestClose('button')}>${t.close}</button>`,
        );
      }
      return layout(
        html`${intro(t.chooseIntro(name))}
          <ul class="rows" role="list">
            ${setup.workflows.map(
              ({ workflowId, name, description }, i) => html`<li part="workflow" class="row">
                <label class="row-head">
                  <span class="row-text">
                    <span class="row-name" id="workflow-${i}">${name}</span>
                    ${description ? html`<span class="help muted" id="workflow-${i}-help">${description}</span>` : nothing}
                  </span>
                  <input
                    part="switch"
                    class="switch"
                    type="checkbox"
                    role="switch"
                    aria-labelledby="workflow-${i}"
                    aria-describedby=${description ? `workflow-${i}-help` : nothing}
                    .checked=${this.#selected.has(workflowId)}
                    @change=${({ target }: Event) =>
                      this.#update(() => {
                        const on = (target as HTMLInputElement).checked;
                        this.#selected[on ? 'add' : 'delete'](workflowId);
                      })}
                  />
                </label>
              </li>`,
            )}
          </ul>`,
        html`<button class="button primary" @click=${() => this.#goTo(this.#stepAfterChoosing(setup))}>
          ${t.continue}
        </button>`,
      );
    }

    if (this.#step === 'connect') {
      const integrations = this.#toConnect(setup);
      return layout(
        html`${intro(t.connectIntro)}
          <ul class="rows" role="list">
            ${integrations.map((integration, i) => this.#renderIntegration(integration, `integration-${i}`))}
          </ul>
          ${message}`,
        html`${back(steps[current - 1])}
          <button
            class="button ${this.#missing(setup)[0] ? '' : 'primary'}"
            @click=${() => this.#continueFromConnect(setup)}
          >
            ${t.continue}
          </button>`,
      );
    }

    const saving = this.#saveTask.status === PENDING;
    const field = (f: SettingField) => this.#renderField(f.key, f.label, f.description, f.numeric ? 'number' : 'text');
    const sections = this.#chosen(setup).map((parent) => {
      const fields = settingFields(parent);
      const blocks = variableBlocks(parent.blocks);
      return html`<section>
        ${setup.integration ? html`<h3 class="section-title">${parent.name}</h3>` : nothing}
        ${
          // Several blocks are told apart by their names; a single one needs no heading of its own.
          blocks[1]
            ? blocks.map(
                (block) => html`<fieldset part="block" class="block">
                  <legend class="muted">${block.name}</legend>
                  ${fields.filter((f) => f.block === block.id).map(field)}
                </fieldset>`,
              )
            : html`<div part="block" class="block">${fields.map(field)}</div>`
        }
      </section>`;
    });
    return layout(
      html`${intro(this.#fieldCount ? t.configureIntro : t.noSettings)} ${message}
        <form id="settings" novalidate @submit=${(event: Event) => this.#handleSave(event)}>${sections}</form>`,
      html`${back(steps[current - 1])}
        <button class="button primary" type="submit" form="settings" aria-disabled=${saving}>
          ${saving ? html`${spinner}${t.saving}` : { install: t.enable, edit: t.saveChanges, integration: t.apply }[this.#mode]}
        </button>`,
      saving,
    );
  }

  /** The connect step's row for one integration: its state, its action, and its parameters' form. */
  #renderIntegration(integration: Integration, id: string) {
    const t = this.#text;
    const { name, displayName } = integration;
    const parameters = integration.requiredParameters ?? [];
    const connected = this.#connected.has(name);
    const busy = this.#connectTask.status === PENDING && this.#connecting === name;
    const failure = this.#errors.get(name);
    const formOpen = parameters[0] && (!connected || this.#reopened.has(name));
    let action: unknown = nothing;
    if (!parameters[0]) {
      action = html`<button
        class="button ${connected ? '' : 'tonal'}"
        aria-describedby="${id}-name ${id}-status"
        aria-disabled=${busy}
        @click=${() => this.#connectOAuth(integration)}
      >
        ${busy ? spinner : nothing} ${failure ? t.retry : connected ? t.reconnect : t.connect}
      </button>`;
    } else if (connected) {
      action = html`<button
        class="button"
        aria-describedby="${id}-name"
        aria-expanded=${!!formOpen}
        @click=${() => this.#update(() => this.#reopened[formOpen ? 'delete' : 'add'](name))}
      >
        ${formOpen ? t.cancel : t.reconnect}
      </button>`;
    }
    return html`<li part="integration" class="row integration">
      <div class="row-head">
        ${iconImage(integration.icon)}
        <span class="row-text">
          <span class="row-name" id="${id}-name">${displayName}</span>
          <span class="status ${connected ? 'connected' : 'muted'}" id="${id}-status">
            ${connected && !busy ? checkGlyph : nothing}
            ${busy && !parameters[0] ? t.waitingForPopup(displayName) : connected ? t.connected : t.notConnected}
          </span>
        </span>
        ${action}
      </div>
      ${
        formOpen
          ? html`<form class="parameters" novalidate @submit=${(event: SubmitEvent) => this.#submitParameters(event, integration)}>
              ${parameters.map((p) =>
                this.#renderField(
                  parameterKey(name, p.name),
                  p.displayName,
                  p.description,
                  SECRET_NAME.test(p.name) ? 'password' : 'text',
                ),
              )}
              <button class="button tonal" type="submit" aria-describedby="${id}-name" aria-disabled=${busy}>
                ${busy ? html`${spinner}${t.saving}` : t.saveParameters}
              </button>
            </form>`
          : nothing
      }
      ${failure ? html`<p class="row-error danger" role="alert">${alertGlyph}<span>${failure}</span></p>` : nothing}
    </li>`;
  }

  /**
   * A labelled input with its help text and, after a failed save, its error, both tied to the
   * input through `aria-describedby` so a screen reader reads them with the field.
   */
  #renderField(key: string, label: string, description: string | undefined, type: string) {
    const id = `field-${this.#fieldCount++}`;
    const error = this.#errors.get(key);
    const describedBy = [description && `${id}-help`, error && `${id}-error`].filter(Boolean).join(' ');
    return html`<div part="field" class="field">
      <label part="label" for=${id}>${label}</label>
      <input
        part="input"
        class="input"
        id=${id}
        type=${type}
        step=${type === 'number' ? 'any' : nothing}
        autocomplete="off"
        spellcheck="false"
        .value=${this.#values.get(key) ?? ''}
        aria-invalid=${!!error}
        aria-describedby=${describedBy || nothing}
        @input=${({ target }: Event) => this.#setValue(key, (target as HTMLInputElement).value)}
      />
      ${description ? html`<p part="help" class="help muted" id="${id}-help">${description}</p>` : nothing}
      ${error ? html`<p part="field-error" class="field-error danger" id="${id}-error">${alertGlyph}${error}</p>` : nothing}
    </div>`;
  }
}
