// The class JSDoc is long because the manifest and docs/elements.md are generated from it. The
// card (card.ts), what a load holds (state.ts) and the texts (strings.ts) live beside this file;
// the connect flow is the modal's own (config-modal/connect.ts).
import { Task, TaskStatus } from '@lit/task';
import { html, nothing, type PropertyDeclarations } from 'lit';
import type { ForgeApiError } from '../api/embed-client.js';
import type { IntegrationSummary } from '../api/types.js';
import type { ForgeConfigModal } from '../config-modal/config-modal.js';
import { connectAccount, connectFailure } from '../config-modal/connect.js';
import { openOAuthPopup } from '../config-modal/oauth-popup.js';
import { isAbort } from '../errors.js';
import { emit, reportError } from '../events.js';
import { Connection } from '../internal/connection.js';
import { DisconnectConfirm, disconnectConfirmStyles } from '../internal/disconnect-confirm.js';
import { ForgeElement } from '../internal/forge-element.js';
import { loadConfigModal } from '../internal/load-modal.js';
import { Localize } from '../internal/localize.js';
import { RowWindow } from '../internal/row-window.js';
import { themeStyles } from '../theme.js';
import { emptyView, loadErrorView, loadingView } from '../workflow-list/messages.js';
import { without } from '../workflow-list/state.js';
import { workflowListStyles } from '../workflow-list/workflow-list.styles.js';
import { type CardActions, cardView } from './card.js';
import { integrationListStyles } from './integration-list.styles.js';
import {
  type Apps,
  type AppsView,
  appsFrom,
  connectionsFrom,
  emptyAppsView,
  matches,
  workflowsOnByApp,
} from './state.js';
import { defaultIntegrationListStrings, type IntegrationListStrings } from './strings.js';

/**
 * The apps a host's workflows work with, as a grid the end user manages their connections from:
 * each app with its icon, name, and the catalog's one-line `description` and `category` when it
 * has them, and the user's state with it in words and with a glyph, never by colour alone:
 * "Not connected", "Connected as <account>" (the provider's label, when it gave one) or "Needs
 * reconnecting".
 *
 * Connect runs the same flow as `<forge-config-modal>`'s connect step: the OAuth sign-in window
 * (finished through the host's return page named by `oauth-return-url` when the app's consent
 * page cuts the window from this page; Cancel stops the wait), or a form for the app's required
 * parameters. Disconnect asks first, in a dialog that names the user's workflows it switches
 * off, then tells the service (`DELETE /credentials/:integration`).
 * "Workflows (n on)" opens `<forge-config-modal integration="…">` with the app's workflows; the
 * grid reads the user's workflows and connections again when it closes.
 *
 * The apps are those the host's active workflows use (with `integration`, those of the workflows
 * that use that app, as `<forge-workflow-list>` filters). Past `filter-threshold` apps, a search
 * box (name, description, category) and, when the apps have categories, a category filter show.
 * Everything comes in one round trip after the token: the workflows on offer, the user's
 * workflows and the user's connections, read side by side.
 *
 * @event {ForgeEvent<'forge-connect'>} forge-connect - `{integration, account?}`: the user connected an app (or connected it again).
 * @event {ForgeEvent<'forge-disconnect'>} forge-disconnect - `{integration, switchedOff}`: the user disconnected an app;
 *   `switchedOff` are the child workflows the service switched off with it.
 * @event {ForgeEvent<'forge-error'>} forge-error - `{code, message, status?}`: loading, a connect, a disconnect or a token
 *   failed; the element shows the failure in plain words too.
 * @event {ForgeEvent<'forge-install'>} forge-install - Bubbles out of the modal: the user enabled a workflow.
 * @event {ForgeEvent<'forge-update'>} forge-update - Bubbles out of the modal: the user saved a workflow's settings.
 * @event {ForgeEvent<'forge-toggle'>} forge-toggle - Bubbles out of the modal: a save switched a workflow on or off.
 *
 * @csspart base - The wrapper of everything the element shows.
 * @csspart search - The search box, shown past `filter-threshold` apps.
 * @csspart category - The category filter beside it; on a card, the app's category.
 * @csspart grid - The grid of apps.
 * @csspart app - One app's card.
 * @csspart icon - The app's icon (on a light plate, so it reads in dark mode too).
 * @csspart name - The app's name.
 * @csspart description - The app's one-line description.
 * @csspart state - The user's state with the app; also `state-ok`, `state-failed` (needs reconnecting) or `state-waiting` (not connected).
 * @csspart app-error - Why the app's last action failed.
 * @csspart parameters - The form of an app's required parameters.
 * @csspart button - Every button of a card; also `connect-button`, `reconnect-button`, `cancel-button` (in Connect's place
 *   while the app's sign-in window is open), `disconnect-button` or `workflows-button`.
 * @csspart confirm - The dialog that confirms a disconnect.
 * @csspart modal - The `<forge-config-modal>` the grid opens. Its main parts are exported as
 *   `modal-dialog`, `modal-panel`, `modal-header`, `modal-title`, `modal-body` and `modal-footer`.
 * @csspart skeleton - The placeholder shown while loading.
 * @csspart empty - Shown when no app is on offer.
 * @csspart error - Shown when loading failed, with `retry-button`.
 *
 * @cssproperty [--forge-app-min-width=16rem] - The narrowest a card gets before the grid has one column fewer.
 * @cssproperty --forge-font-family - Font of all text.
 * @cssproperty [--forge-font-size=0.9375rem] - Base font size.
 * @cssproperty [--forge-radius=0.625rem] - Corner radius of the cards and buttons.
 * @cssproperty [--forge-spacing=1rem] - Base spacing unit.
 * @cssproperty --forge-color-surface - Background of the cards.
 * @cssproperty --forge-color-surface-raised - Skeletons, hovered buttons.
 * @cssproperty --forge-color-text - Text color.
 * @cssproperty --forge-color-text-muted - Descriptions, categories and hints.
 * @cssproperty --forge-color-border - Borders.
 * @cssproperty --forge-color-accent - Connect buttons.
 * @cssproperty --forge-color-accent-text - Text on the accent color.
 * @cssproperty --forge-color-success - The connected state's glyph.
 * @cssproperty --forge-color-danger - Errors, "Needs reconnecting" and the confirmation's Disconnect button.
 * @cssproperty --forge-color-backdrop - Colour over the page behind the confirmation.
 * @cssproperty --forge-focus-ring - Box shadow of the keyboard focus ring.
 */
export class ForgeIntegrationList extends ForgeElement {
  static override styles = [themeStyles, workflowListStyles, integrationListStyles, disconnectConfirmStyles];

  static override properties: PropertyDeclarations = {
    // Not reflected, like api-base: see ForgeElement.
    integration: {},
    filterThreshold: { attribute: 'filter-threshold', type: Number },
    oauthTimeout: { attribute: 'oauth-timeout', type: Number },
    oauthReturnUrl: { attribute: 'oauth-return-url' },
    theme: { reflect: true },
    strings: { attribute: false },
  };

  /** Show only the apps of the workflows that use this integration (its `name`, e.g. `slack`), as `<forge-workflow-list>` filters. */
  integration = '';

  /** The search box (and the category filter) appear when more apps than this are on offer. */
  filterThreshold = 8;

  /** How long to wait for an app's sign-in window before giving up, in milliseconds. */
  oauthTimeout = 3 * 60_000;

  /**
   * The address of the OAuth return page on this page's own origin (`oauthReturnPage` from
   * `forge-embed/host`), as on `<forge-config-modal>`, which the grid passes it to.
   */
  oauthReturnUrl = '';

  /** Pins the color scheme; by default it follows the user's `prefers-color-scheme`. */
  theme?: 'light' | 'dark';

  /**
   * Replacements for any of the texts the grid shows, over those `registerStrings` holds for the
   * nearest `lang` (English by default).
   */
  strings: Partial<IntegrationListStrings> = {};

  readonly #localize = new Localize(this, 'integrationList', defaultIntegrationListStrings);
  // A connect or disconnect anywhere on the page (the modal's, another element's) reads the user's state again.
  readonly #connection = new Connection(this, () => void this.#reread());
  readonly #confirm = new DisconnectConfirm(this);
  // Past a hundred apps, only the cards near the viewport are rendered.
  readonly #window = new RowWindow(this, () => this.renderRoot.querySelector<HTMLElement>('.grid'));

  get #text(): IntegrationListStrings {
    return this.#localize.texts;
  }

  /** What the grid shows beyond the load; changed only through `#change`, which re-renders. */
  #view: AppsView = emptyAppsView();
  /** A selector of what takes focus after the next render (a card's button, a form's field). */
  #focusNext?: string | undefined;
  /** Ends the wait for the sign-in window of the connect under way (Cancel). */
  #stopConnect?: AbortController;

  #loadTask = new Task(this, {
    args: () => [this.apiBase, this.tokenUrl, this.tokenProvider, this.integration] as const,
    task: async ([, , , integration], { signal }) => {
      // Every card counts its workflows, and a page's first plural rules and number format take
      // tens of milliseconds to make: made while the token and the reads are on their way, not
      // after they answer (a task later, once the token's request has gone out).
      setTimeout(() => this.#localize.plural(0, { other: '' }));
      const client = await this.#connection.ready(signal);
      const [summaries, children, connections] = await Promise.all([
        client.listWorkflowSummaries({ integration }, { signal }),
        client.getWorkflowHealth({ signal }),
        client.listCredentials({ signal }),
      ]);
      this.#change({ children, connections: connectionsFrom(connections), appErrors: new Map() });
      return appsFrom(summaries);
    },
    onError: (error) => {
      if (!isAbort(error)) reportError(this, error, 'load-failed');
    },
  });

  override connectedCallback(): void {
    super.connectedCallback();
    // Back on the page after a removal, which stopped every request: read everything again.
    if (this.hasUpdated) void this.#loadTask.run();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#loadTask.abort();
    this.#change({ busy: '' });
  }

  protected override updated(): void {
    if (!this.#focusNext) return;
    this.renderRoot.querySelector<HTMLElement>(this.#focusNext)?.focus();
    this.#focusNext = undefined;
  }

  /** The one way the view changes: it always re-renders. */
  #change(change: Partial<AppsView>, focus?: string): void {
    this.#view = { ...this.#view, ...change };
    if (focus) this.#focusNext = focus;
    this.requestUpdate();
  }

  /** Focus for a card's first button, where keyboard users land after an action changed the card. */
  #cardButton = (name: string) => `[data-key="${CSS.escape(name)}"] .app-actions .button`;

  /** Says why an app's last action failed, or (no `reason`) clears it. */
  #appError(name: string, reason?: string): Map<string, string> {
    const { appErrors } = this.#view;
    return reason ? new Map(appErrors).set(name, reason) : without(appErrors, name);
  }

  readonly #actions: CardActions = {
    connect: (app) => {
      if (app.requiredParameters?.[0]) {
        this.#change(
          { formFor: app.name, values: new Map(), fieldErrors: new Map(), appErrors: this.#appError(app.name) },
          `[data-key="${CSS.escape(app.name)}"] input`,
        );
        return;
      }
      // Before any await: a window opened later would be blocked.
      void this.#connect(app, undefined, openOAuthPopup(app.name));
    },
    cancelConnect: ({ name, displayName }) => {
      // A window its consent page cut from this page reads closed while it is still open, so only
      // the user can end the wait before the timeout.
      this.#stopConnect?.abort();
      this.#change({ busy: '', appErrors: this.#appError(name, this.#text.oauthCanceled(displayName)) });
    },
    disconnect: (app) => void this.#disconnect(app),
    closeForm: () => {
      const name = this.#view.formFor;
      this.#change({ formFor: '', values: new Map(), fieldErrors: new Map() }, this.#cardButton(name));
    },
    submitParameters: (event, app) => {
      event.preventDefault();
      if (this.#view.busy) return;
      const fieldErrors = new Map<string, string>();
      const values: Record<string, string> = {};
      for (const { name, displayName } of app.requiredParameters!) {
        const value = this.#view.values.get(name)?.trim();
        if (value) values[name] = value;
        else fieldErrors.set(name, this.#text.parameterRequired(displayName));
      }
      if (fieldErrors.size) this.#change({ fieldErrors }, '[aria-invalid="true"]');
      else void this.#connect(app, values, null);
    },
    setValue: (name, value) =>
      this.#change({
        values: new Map(this.#view.values).set(name, value),
        fieldErrors: without(this.#view.fieldErrors, name),
      }),
    openWorkflows: (app) => void this.#openModal(app),
  };

  async #connect(app: IntegrationSummary, parameters: Record<string, string> | undefined, popup: Window | null) {
    const { name, displayName } = app;
    this.#stopConnect = new AbortController();
    const signal = AbortSignal.any([this.#connection.signal, this.#stopConnect.signal]);
    this.#change({ busy: name, appErrors: this.#appError(name), fieldErrors: new Map() });
    try {
      const list = await connectAccount(
        this.#connection.client,
        { integration: app, parameters, popup },
        { oauthTimeout: this.oauthTimeout, oauthReturnUrl: this.oauthReturnUrl, signal },
      );
      if (signal.aborted) return;
      const connections = connectionsFrom(list);
      // The stored secrets are not kept in the page.
      this.#change({ busy: '', connections, formFor: '', values: new Map() }, this.#cardButton(name));
      const account = connections.get(name)?.account;
      emit(this, 'forge-connect', { integration: name, ...(account ? { account } : {}) });
    } catch (error) {
      if (signal.aborted) return;
      const fieldErrors = new Map<string, string>();
      for (const { path, message } of (error as ForgeApiError).errors ?? []) {
        const field = /^body\.(.+)$/.exec(path)?.[1];
        if (field && parameters && field in parameters) fieldErrors.set(field, message);
      }
      const t = this.#text;
      const message = reportError(
        this,
        error,
        'connect-failed',
        (error as ForgeApiError).type?.endsWith('/integration-not-configured')
          ? () => t.unavailable(displayName)
          : connectFailure(t, error, displayName),
      );
      this.#change({ busy: '', appErrors: this.#appError(name, message), fieldErrors });
    }
  }

  async #disconnect(app: IntegrationSummary): Promise<void> {
    const { name, displayName } = app;
    const workflows = this.#workflowsOn().get(name) ?? [];
    if (!(await this.#confirm.ask(displayName, workflows)) || this.#view.busy) return;
    const { signal } = this.#connection;
    this.#change({ busy: name, appErrors: this.#appError(name) });
    try {
      const { switchedOff, revocation } = await this.#connection.client.disconnect(name, { signal });
      const off = new Set(switchedOff);
      this.#change(
        {
          busy: '',
          // The service forgot the account; the app may still allow it, which the user can end there.
          appErrors: this.#appError(
            name,
            revocation === 'failed' ? this.#text.disconnectNotRevoked(displayName) : undefined,
          ),
          connections: without(this.#view.connections, name),
          children: this.#view.children.map((child) =>
            off.has(child.workflowId) ? { ...child, active: false } : child,
          ),
        },
        this.#cardButton(name),
      );
      emit(this, 'forge-disconnect', { integration: name, switchedOff });
    } catch (error) {
      if (signal.aborted) return;
      if ((error as ForgeApiError).status === 404) {
        // Disconnected meanwhile (another tab, the host): it is as the user wanted.
        this.#change({ busy: '', connections: without(this.#view.connections, name) }, this.#cardButton(name));
        return;
      }
      const reason = reportError(this, error, 'disconnect-failed');
      this.#change({ busy: '', appErrors: this.#appError(name, this.#text.disconnectFailed(displayName, reason)) });
    }
  }

  async #openModal(app: IntegrationSummary): Promise<void> {
    try {
      await loadConfigModal();
    } catch (error) {
      // A dead button would leave the user guessing; the card says why nothing opened.
      const reason = reportError(this, error, 'load-failed', () => this.#text.modalLoadFailed);
      this.#change({ appErrors: this.#appError(app.name, reason) });
      return;
    }
    this.#change({ modalFor: app.name, appErrors: this.#appError(app.name) });
    await this.updateComplete;
    await this.renderRoot.querySelector<ForgeConfigModal>('forge-config-modal')!.show();
  }

  /** Reads the user's workflows and connections again (after the modal, which may change both). */
  readonly #reread = async (): Promise<void> => {
    if (!this.#loadTask.value) return;
    const { signal } = this.#connection;
    const { client } = this.#connection;
    try {
      const [children, connections] = await Promise.all([
        client.getWorkflowHealth({ signal }),
        client.listCredentials({ signal }),
      ]);
      if (!signal.aborted) this.#change({ children, connections: connectionsFrom(connections) });
    } catch (error) {
      if (signal.aborted) return;
      const name = this.#view.modalFor;
      this.#change({ appErrors: this.#appError(name, reportError(this, error, 'load-failed')) });
    }
  };

  /** The names of the user's switched-on workflows that use each app. */
  #workflowsOn(): Map<string, string[]> {
    const parents = this.#loadTask.value?.parents;
    return parents ? workflowsOnByApp(this.#view.children, parents) : new Map();
  }

  /** Loads the apps and the user's connections again; resolves once they are shown. */
  async refresh(): Promise<void> {
    await this.#loadTask.run();
    await this.updateComplete;
  }

  readonly #handleRetry = async (): Promise<void> => {
    await this.refresh();
    this.renderRoot.querySelector<HTMLElement>('[data-landing]')?.focus();
  };

  #renderGrid({ apps, categories }: Apps, pending: boolean) {
    const t = this.#text;
    const { search, category, busy } = this.#view;
    const filtering = apps.length > this.filterThreshold;
    const needle = filtering ? search.trim().toLowerCase() : '';
    const only = filtering && categories.includes(category) ? category : '';
    const shown = needle || only ? apps.filter((app) => matches(app, needle, only)) : apps;
    const context = {
      ...this.#view,
      t,
      plural: this.#localize.plural,
      workflowsOn: this.#workflowsOn(),
      on: this.#actions,
    };
    const waiting = apps.find((app) => app.integration.name === busy && !app.integration.requiredParameters?.[0]);
    const announcement = waiting
      ? t.waitingForPopup(waiting.integration.displayName)
      : shown !== apps
        ? t.matchCount(shown.length, apps.length, this.#localize.plural)
        : '';
    return html`<p class="visually-hidden" role="status">${announcement}</p>
      ${
        filtering
          ? html`<div class="tools">
              <input
                type="search"
                class="input"
                part="search"
                aria-label=${t.searchLabel}
                placeholder=${t.searchLabel}
                .value=${search}
                @input=${({ target }: Event) => this.#change({ search: (target as HTMLInputElement).value })}
              />
              ${
                categories[1]
                  ? html`<select
                      class="input"
                      part="category"
                      aria-label=${t.categoryLabel}
                      @change=${({ target }: Event) => this.#change({ category: (target as HTMLSelectElement).value })}
                    >
                      <option value="">${t.allCategories}</option>
                      ${categories.map((c) => html`<option .selected=${c === only} value=${c}>${c}</option>`)}
                    </select>`
                  : nothing
              }
            </div>`
          : nothing
      }
      ${
        shown[0]
          ? html`<ul class="grid" part="grid" role="list" aria-label=${t.listLabel} aria-busy=${pending} tabindex="-1" data-landing>
              ${this.#window.render(
                shown.map((app) => app.integration.name),
                (i, total) => cardView(context, shown[i]!.integration, i, total),
              )}
            </ul>`
          : html`<p class="message muted">${t.noMatches}</p>`
      }`;
  }

  override render() {
    const t = this.#text;
    const { status, value: apps, error } = this.#loadTask;
    const pending = status === TaskStatus.PENDING;
    // A reload after a failure keeps the failure (and its retry button) on screen until it answers.
    const failed = !apps && error !== undefined && !isAbort(error);
    let content: unknown;
    if (failed) content = loadErrorView(t, error, pending, this.#handleRetry);
    else if (!apps) content = html`<p class="visually-hidden" role="status">${t.loading}</p>${loadingView()}`;
    else if (!apps.apps[0]) content = emptyView(t);
    else content = this.#renderGrid(apps, pending);
    const { modalFor } = this.#view;
    return html`<div class="base" part="base">${content}</div>
      ${this.#confirm.render(t)}
      ${
        modalFor
          ? html`<forge-config-modal
              part="modal"
              exportparts="dialog:modal-dialog,panel:modal-panel,header:modal-header,title:modal-title,body:modal-body,footer:modal-footer"
              api-base=${this.apiBase}
              token-url=${this.tokenUrl || nothing}
              .tokenProvider=${this.tokenProvider}
              integration=${modalFor}
              theme=${this.theme ?? nothing}
              oauth-timeout=${this.oauthTimeout}
              oauth-return-url=${this.oauthReturnUrl}
              @forge-after-hide=${this.#reread}
            ></forge-config-modal>`
          : nothing
      }`;
  }
}
