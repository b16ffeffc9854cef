// Over 400 lines for a reason: about 60 of them are the class JSDoc, which the manifest and
// docs/elements.md are generated from. The steps' views, the save sequence and the connect flow
// live beside this file (views.ts, save.ts, connect.ts); this one holds the element itself.
import { Task, TaskStatus } from '@lit/task';
import { html, type PropertyDeclarations, type PropertyValues } from 'lit';
import type { ForgeApiError } from '../api/embed-client.js';
import type { Integration, VariableValue } from '../api/types.js';
import { ConfigError, ForgeError, isAbort } from '../errors.js';
import { emit, reportError } from '../events.js';
import { Connection } from '../internal/connection.js';
import { ForgeModalDialog } from '../internal/dialog.js';
import { DisconnectConfirm, disconnectConfirmStyles } from '../internal/disconnect-confirm.js';
import { Localize } from '../internal/localize.js';
import { themeStyles } from '../theme.js';
import type { Choices } from './choices.js';
import { configModalStyles } from './config-modal.styles.js';
import { connectAccount, connectFailure } from './connect.js';
import { openOAuthPopup } from './oauth-popup.js';
import { placeFieldErrors, saveSettings } from './save.js';
import { fieldValue, problemText, type SettingField, settingFields } from './settings.js';
import {
  chosen,
  connectionsFrom,
  emptyView,
  type FocusTarget,
  type Loaded,
  loadedFrom,
  missing,
  openingView,
  parameterKey,
  type Step,
  stepAfterChoosing,
  type View,
} from './state.js';
import { type ConfigModalStrings, defaultConfigModalStrings } from './strings.js';
import {
  chooseView,
  configureView,
  connectView,
  doneView,
  FocusMark,
  header,
  loadErrorView,
  loadingView,
  type StepActions,
  type StepContext,
} from './views.js';

const { PENDING } = TaskStatus;

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
 * The connect step says how each account stands: "Connected as <account>" (the label the app
 * gave), "Needs reconnecting" when the app refused the connection (with Reconnect), or "Not
 * connected". Disconnect asks first, in a dialog that names the user's workflows the service
 * switches off with it. A connect or a disconnect fires `forge-connect` or `forge-disconnect`,
 * which every forge element on the page hears (at the document): a `<forge-workflow-list>` stops
 * offering "Reconnect" for that app at once.
 *
 * @event {ForgeEvent<'forge-connect'>} forge-connect - `{integration, account?}`: the user connected an app (or connected it again).
 * @event {ForgeEvent<'forge-disconnect'>} forge-disconnect - `{integration, switchedOff}`: the user disconnected an app;
 *   `switchedOff` are the workflows the service switched off with it.
 * @event {ForgeEvent<'forge-show'>} forge-show - The modal starts to open.
 * @event {ForgeEvent<'forge-after-show'>} forge-after-show - The modal is open; `show()` settles now.
 * @event {ForgeEvent<'forge-hide'>} forge-hide - The modal is about to close. `detail.reason`: `button`, `escape`, `backdrop` or `done` (cancelable: `preventDefault()` keeps it open), or `method` (`hide()`; not cancelable).
 * @event {ForgeEvent<'forge-after-hide'>} forge-after-hide - The modal closed, with the same `detail.reason`; `hide()` settles now.
 * @event {ForgeEvent<'forge-install'>} forge-install - The user enabled a workflow: `{parentId, workflowId}` (the new copy's id).
 * @event {ForgeEvent<'forge-update'>} forge-update - The user saved new settings: `{workflowId, blockIds}` (the variable blocks changed).
 * @event {ForgeEvent<'forge-toggle'>} forge-toggle - In the integration view, a save switched an installed workflow on or off: `{workflowId, active}`.
 * @event {ForgeEvent<'forge-error'>} forge-error - Something failed; the modal shows it too: `{code, message, status?}`.
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
 * @csspart confirm - The dialog that confirms a disconnect.
 *
 * @cssproperty [--forge-modal-width=34rem] - Width of the modal on wide screens.
 * @cssproperty [--forge-color-backdrop=rgb(15 17 21 / 0.55)] - Colour over the page behind the modal and its confirmation.
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
 * @cssproperty --forge-color-danger - Errors, "Needs reconnecting" and the confirmation's Disconnect button.
 * @cssproperty --forge-color-success - Connected and success states.
 * @cssproperty --forge-focus-ring - The `box-shadow` of a focused control.
 */
export class ForgeConfigModal extends ForgeModalDialog {
  static override styles = [themeStyles, configModalStyles, disconnectConfirmStyles];

  static override properties: PropertyDeclarations = {
    // Not reflected, like api-base: see ForgeElement.
    workflowId: { attribute: 'workflow-id' },
    integration: {},
    reconnect: {},
    strings: { attribute: false },
    oauthTimeout: { attribute: 'oauth-timeout', type: Number },
    oauthReturnUrl: { attribute: 'oauth-return-url' },
  };

  /** The parent workflow to enable or edit (its `workflowId` in `GET /workflow`). */
  workflowId = '';

  /** Instead of `workflow-id`: an integration name; the user picks which of its workflows to enable. */
  integration = '';

  /**
   * An integration (its `name`) whose connection the app refused: the modal opens on the
   * connect step with it to be connected again. `<forge-workflow-list>` sets it for "Reconnect".
   */
  reconnect = '';

  /**
   * Replacements for any of the texts shown, over those `registerStrings` holds for the nearest
   * `lang` (English by default).
   */
  strings: Partial<ConfigModalStrings> = {};

  /** How long to wait for an OAuth sign-in window before giving up, in milliseconds. */
  oauthTimeout = 3 * 60_000;

  /**
   * The address of the OAuth return page on this page's own origin (`oauthReturnPage` from
   * `forge-embed/host`). With it, a sign-in whose consent page cuts the window from this page
   * (`Cross-Origin-Opener-Policy`) still finishes; without it, the user is told to close the
   * window and choose Connect again.
   */
  oauthReturnUrl = '';

  readonly #connection = new Connection(this);

  readonly #localize = new Localize(this, 'configModal', defaultConfigModalStrings);

  get #text(): ConfigModalStrings {
    return this.#localize.texts;
  }

  /** What the user sees and did in this open; changed only through `#change`, which re-renders. */
  #view: View = emptyView();

  /** Where focus goes after the next render; the views mark that element `autofocus`. */
  #focusNext?: FocusTarget | undefined;

  /** The combobox of settings whose choices come from the user's app, once an open has one. */
  #choices?: Choices;

  /** The step message last scrolled into view. */
  #messageShown?: string | undefined;

  /** One open's data: the modal shows it once this task completes. */
  #loadTask = new Task<[], Loaded>(this, {
    autoRun: false,
    task: (_args, { signal }) => this.#load(signal),
    onComplete: (loaded) => this.#change(this.#openingView(loaded), 'body'),
  });

  #connectTask = new Task<[Integration, Record<string, string> | undefined, Window | null], void>(this, {
    autoRun: false,
    task: (args, { signal }) => this.#connect(...args, signal),
  });

  #disconnectTask = new Task<[Integration], void>(this, {
    autoRun: false,
    task: ([integration], { signal }) => this.#disconnect(integration, signal),
  });

  /** Asks before a disconnect, naming the workflows it switches off. */
  readonly #confirm = new DisconnectConfirm(this);

  #saveTask = new Task<[], void>(this, {
    autoRun: false,
    task: (_args, { signal }) => this.#save(signal),
  });

  protected override updated(changed: PropertyValues<this>): void {
    super.updated(changed);
    const root = this.renderRoot;
    // The load task settles a little after the view it sets, so wait for it before moving focus.
    if (this.#focusNext && this.dialog.open && this.#loadTask.status !== PENDING) {
      this.#focusNext = undefined;
      root.querySelector<HTMLElement>('[autofocus]')?.focus();
    }
    // A new message may appear far from where the user is looking (the body scrolls).
    if (this.#view.message !== this.#messageShown) {
      this.#messageShown = this.#view.message;
      root.querySelector('[part="body"] [part="message"]')?.scrollIntoView({ block: 'nearest' });
    }
  }

  protected override sessionStarted(): void {
    this.#view = emptyView();
    void this.#loadTask.run();
  }

  protected override sessionEnded(): void {
    this.#loadTask.abort();
    this.#connectTask.abort();
    this.#disconnectTask.abort();
    this.#confirm.cancel();
    this.#saveTask.abort();
    this.#choices?.reset();
    // What was typed (secrets among it) is not kept after a close; the next open reads anew.
    this.#view = emptyView();
  }

  /** The one way view state changes: it always re-renders, and may say where focus goes next. */
  #change(change: Partial<View>, focus?: FocusTarget): void {
    // A new step message (or none) leaves the technical details of the one before behind.
    this.#view = { ...this.#view, ...('message' in change ? { technical: undefined } : {}), ...change };
    if (focus) this.#focusNext = focus;
    this.requestUpdate();
  }

  // Loading -------------------------------------------------------------------------------

  async #load(signal: AbortSignal): Promise<Loaded> {
    try {
      const { client } = this.#connection;
      const { workflowId, integration } = this;
      if (!workflowId && !integration) {
        throw new ConfigError(`Set workflow-id or integration on <${this.localName}> to say what to set up.`);
      }
      // Everything the open shows comes in one request: the offer, the user's copies of it and
      // the connected accounts.
      const read = () =>
        client.getSetup(workflowId ? { workflowId } : { integration }, { signal }).catch((error: ForgeApiError) => {
          // The only 404 of GET /setup: a parent id that is not (or no longer) on offer.
          throw error.status === 404
            ? new ForgeError('load-failed', this.#text.workflowNotOffered(workflowId), 404)
            : error;
        });
      // A new token for every open (the service's rule). With one still in hand the read need
      // not wait for it: both go out at once and the open shows when both have answered. If the
      // new token names another user (a token endpoint that answers for whoever is signed in
      // now), what the old one read is dropped and read again with the new one.
      const inHand = this.#connection.tokenInHand();
      const [fresh, early] = await Promise.all([this.#connection.freshToken(), inHand && read()]);
      const setup = early && fresh.userId === inHand?.userId ? early : await read();
      const loaded = loadedFrom(setup, { workflowId, integration });
      // The combobox is a chunk of its own, fetched only by an open that shows one.
      if (!this.#choices && loaded.workflows.some((parent) => settingFields(parent).some((f) => f.variable.source))) {
        const { Choices } = await import('./choices.js');
        this.#choices ??= new Choices(this);
      }
      return loaded;
    } catch (error) {
      if (!signal.aborted) {
        reportError(this, error, 'load-failed');
        this.#focusNext = 'primary';
      }
      throw error;
    }
  }

  /** Where an open starts: at the settings (or the accounts not yet connected), or at the one to connect again. */
  #openingView(loaded: Loaded): View {
    const view = openingView(loaded);
    // Stored, but refused by the app: this open treats it as not connected, so the step asks for it.
    if (this.reconnect && loaded.connected.delete(this.reconnect)) view.step = stepAfterChoosing(loaded, view);
    return view;
  }

  // Handlers ------------------------------------------------------------------------------

  readonly #actions: StepActions = {
    close: (reason) => this.requestClose(reason),
    goTo: (step: Step) => this.#change({ step, message: undefined }, 'body'),
    select: (parentId, on) => {
      const selected = new Set(this.#view.selected);
      selected[on ? 'add' : 'delete'](parentId);
      this.#change({ selected });
    },
    continueFromConnect: () => {
      if (missing(this.#loadTask.value!, this.#view)[0]) this.#change({ message: this.#text.connectAllFirst });
      else this.#actions.goTo('configure');
    },
    disconnect: (integration) => {
      if (!this.#busy()) void this.#disconnectTask.run([integration]);
    },
    connectOAuth: (integration) => {
      const { name, displayName } = integration;
      if (this.#connectTask.status === PENDING && this.#view.connecting === name) {
        // Cancel, while its sign-in window is open: a window its consent page cut from this page
        // reads closed while it is still open, so only the user can end the wait before the timeout.
        this.#connectTask.abort();
        this.#change({ rowNote: [name, this.#text.oauthCanceled(displayName)] });
        return;
      }
      if (this.#busy()) return;
      // Before any await: a popup opened later would be blocked.
      void this.#connectTask.run([integration, undefined, openOAuthPopup(name)]);
    },
    toggleForm: (name) => {
      const reopened = new Set(this.#view.reopened);
      reopened[reopened.has(name) ? 'delete' : 'add'](name);
      this.#change({ reopened });
    },
    submitParameters: (event, integration) => this.#submitParameters(event, integration),
    setValue: (key, value) => {
      const errors = new Map(this.#view.errors);
      errors.delete(key);
      this.#change({ values: new Map(this.#view.values).set(key, value), errors });
    },
    save: (event) => this.#handleSave(event),
    options: ({ key, block, name }, query, signal) => {
      const parentId = key.split('\n')[0]!;
      const copy = this.#loadTask.value!.installed.get(parentId);
      return this.#connection.client.getOptions(
        copy?.workflowId ?? parentId,
        { blockId: block, variable: name, ...query },
        { signal },
      );
    },
    reconnect: (integration) => {
      // As the list's Reconnect does: the connect step treats the app as not connected.
      this.#loadTask.value!.connected.delete(integration);
      this.#change({ step: 'connect', message: undefined }, 'body');
    },
    retryLoad: () => {
      this.#focusNext = 'body';
      void this.#loadTask.run();
    },
  };

  #submitParameters(event: SubmitEvent, integration: Integration): void {
    event.preventDefault();
    if (this.#busy()) return;
    const values: Record<string, string> = {};
    const errors = new Map(this.#view.errors);
    for (const { name, displayName } of integration.requiredParameters!) {
      const key = parameterKey(integration.name, name);
      const value = this.#view.values.get(key)?.trim();
      if (value) values[name] = value;
      else errors.set(key, this.#text.parameterRequired(displayName));
    }
    if (Object.keys(values).length < integration.requiredParameters!.length) this.#change({ errors }, 'invalid');
    else void this.#connectTask.run([integration, values, null]);
  }

  // Connecting ----------------------------------------------------------------------------

  async #connect(
    integration: Integration,
    parameters: Record<string, string> | undefined,
    popup: Window | null,
    signal: AbortSignal,
  ): Promise<void> {
    const { name, displayName } = integration;
    const errors = new Map(this.#view.errors);
    errors.delete(name);
    this.#change({ connecting: name, errors, rowNote: undefined });
    try {
      const connected = await connectAccount(
        this.#connection.client,
        { integration, parameters, popup },
        { oauthTimeout: this.oauthTimeout, oauthReturnUrl: this.oauthReturnUrl, signal },
      );
      const loaded = this.#loadTask.value!;
      Object.assign(loaded, connectionsFrom(connected));
      const account = loaded.connections.get(name)?.account;
      // Choices the app refused before are read again with the new connection.
      this.#choices?.reset();
      emit(this, 'forge-connect', { integration: name, ...(account ? { account } : {}) });
      const values = new Map(this.#view.values);
      const reopened = new Set(this.#view.reopened);
      if (parameters) {
        // The stored secrets are not kept in the page.
        for (const key of Object.keys(parameters)) values.delete(parameterKey(name, key));
        reopened.delete(name);
      }
      const allConnected = !missing(loaded, this.#view)[0];
      this.#change(
        { values, reopened, ...(allConnected ? { message: undefined } : {}) },
        allConnected ? 'primary' : 'body',
      );
    } catch (error) {
      if (signal.aborted) throw error;
      const failures = new Map(this.#view.errors);
      if (parameters) {
        placeFieldErrors(
          error,
          Object.keys(parameters).map((key) => [`body.${key}`, parameterKey(name, key)]),
          failures,
        );
      }
      const describe = connectFailure(this.#text, error, displayName);
      failures.set(name, reportError(this, error, 'connect-failed', describe));
      this.#change({ errors: failures });
      throw error;
    }
  }

  /** One connect or disconnect at a time: their rows' buttons only look disabled meanwhile. */
  #busy(): boolean {
    return this.#connectTask.status === PENDING || this.#disconnectTask.status === PENDING;
  }

  /**
   * Disconnects an app after the user confirmed it: the confirmation names the user's workflows
   * that the service switches off with it, read from the service (they may be more than this
   * open shows). The app is asked to end the access; when it could not be, the row says so.
   */
  async #disconnect({ name, displayName }: Integration, signal: AbortSignal): Promise<void> {
    this.#change({ connecting: name, rowNote: undefined });
    const t = this.#text;
    const loaded = this.#loadTask.value!;
    const client = this.#connection.client;
    try {
      const uses = await client.getSetup({ integration: name }, { signal });
      const on = new Set(uses.installed.filter((child) => child.active).map((child) => child.parentId));
      const names = uses.workflows.filter((parent) => on.has(parent.workflowId)).map((parent) => parent.name);
      if (!(await this.#confirm.ask(displayName, names)) || signal.aborted) return;
      let switchedOff: string[] = [];
      let rowNote: View['rowNote'];
      try {
        const done = await client.disconnect(name, { signal });
        switchedOff = done.switchedOff;
        if (done.revocation === 'failed') rowNote = [name, t.disconnectNotRevoked(displayName)];
      } catch (error) {
        // Disconnected meanwhile (another tab, the host): it is as the user wanted.
        if ((error as ForgeApiError).status !== 404) throw error;
      }
      Object.assign(loaded, connectionsFrom([...loaded.connections.values()].filter((c) => c.integration !== name)));
      const selected = new Set(this.#view.selected);
      for (const [parentId, copy] of loaded.installed) {
        if (!switchedOff.includes(copy.workflowId)) continue;
        copy.active = false;
        // The integration view's switches show what the service now holds.
        if (loaded.integration) selected.delete(parentId);
      }
      this.#change({ selected, rowNote }, 'body');
      emit(this, 'forge-disconnect', { integration: name, switchedOff });
    } catch (error) {
      if (signal.aborted) throw error;
      const reason = reportError(this, error, 'disconnect-failed', (words) => t.disconnectFailed(displayName, words));
      this.#change({ rowNote: [name, reason] });
      throw error;
    }
  }

  // Saving --------------------------------------------------------------------------------

  /** A field's value as the service wants it; saving starts only once every field keeps its rules. */
  #valueOf = (field: SettingField): VariableValue => {
    const checked = fieldValue(field, this.#view.values.get(field.key) ?? '');
    return 'value' in checked ? checked.value : '';
  };

  #handleSave(event: Event): void {
    event.preventDefault();
    // The button only looks disabled (so it keeps focus): a second press while saving must not install twice.
    if (this.#saveTask.status === PENDING) return;
    const errors = new Map<string, string>();
    for (const parent of chosen(this.#loadTask.value!, this.#view)) {
      for (const field of settingFields(parent)) {
        const checked = fieldValue(field, this.#view.values.get(field.key) ?? '');
        if ('problem' in checked) errors.set(field.key, problemText(this.#text, field, checked.problem));
      }
    }
    if (errors.size) this.#change({ errors, message: this.#text.fieldErrors }, 'invalid');
    else {
      this.#change({ errors, message: undefined });
      void this.#saveTask.run();
    }
  }

  async #save(signal: AbortSignal): Promise<void> {
    const errors = new Map<string, string>();
    try {
      await saveSettings({
        client: this.#connection.client,
        loaded: this.#loadTask.value!,
        selected: this.#view.selected,
        valueFor: this.#valueOf,
        emit: (name, detail) => emit(this, name, detail),
        errors,
        signal,
      });
      this.#change({ step: 'done' }, 'primary');
    } catch (error) {
      if (signal.aborted) throw error;
      const message = reportError(this, error, 'save-failed');
      const placed = errors.size > 0;
      this.#change(
        placed
          ? { errors, message: this.#text.fieldErrors }
          : { errors, message: this.#text.saveFailed(message), technical: (error as Error).message },
        placed ? 'invalid' : undefined,
      );
      throw error;
    }
  }

  // Rendering -----------------------------------------------------------------------------

  override render() {
    const t = this.#text;
    const task = this.#loadTask;
    const loaded = task.status === TaskStatus.COMPLETE ? task.value : undefined;
    const focus = new FocusMark(this.#focusNext);
    const top = header(t, loaded, () => this.requestClose('button'));
    const steps = { choose: chooseView, connect: connectView, configure: configureView, done: doneView };
    const body = task.render({
      initial: () => loadingView(t),
      pending: () => loadingView(t),
      complete: (loaded) => steps[this.#view.step](this.#stepContext(loaded, focus)),
      // Aborted by a close: nothing to say, and the next open starts over.
      error: (error) => (isAbort(error) ? loadingView(t) : loadErrorView(t, error as Error, focus, this.#actions)),
    });
    return this.renderDialog(
      html`<div part="panel" class="panel">${top.content} ${body}</div>
        ${this.#confirm.render(t)}`,
      top.described ? 'subtitle' : undefined,
    );
  }

  #stepContext(loaded: Loaded, focus: FocusMark): StepContext {
    return {
      t: this.#text,
      loaded,
      view: this.#view,
      saving: this.#saveTask.status === PENDING,
      connectBusy: this.#connectTask.status === PENDING,
      disconnectBusy: this.#disconnectTask.status === PENDING,
      focus,
      on: this.#actions,
      // `a, b and c` in the element's locale (only the modal joins names, so the list's entry does not carry it).
      list: (items) => new Intl.ListFormat(this.#localize.locale, { type: 'conjunction' }).format(items),
      choices: this.#choices,
    };
  }
}
