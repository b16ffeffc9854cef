// Over 400 lines for a reason: about 60 of them are the class JSDoc, which the manifest and
// docs/elements.md are generated from. The rows and their run health (row.ts, health.ts), the
// loading, empty and failed views (messages.ts), the switch queue (switch-queue.ts), what a load
// holds (state.ts) live beside this file, the windowing in internal/row-window.ts (the grid of
// apps windows its cards with it too); this one holds the element itself.
import { Task, TaskStatus } from '@lit/task';
import { html, nothing, type PropertyDeclarations, type PropertyValues } from 'lit';
import type { ForgeApiError } from '../api/embed-client.js';
import type { WorkflowHealth } from '../api/types.js';
import type { ForgeConfigModal } from '../config-modal/config-modal.js';
import type { ConfigModalStrings } from '../config-modal/strings.js';
import { isAbort } from '../errors.js';
import { emit, type ForgeEvent, reportError } from '../events.js';
import { Connection } from '../internal/connection.js';
import { ForgeElement } from '../internal/forge-element.js';
import { loadConfigModal, prefetchConfigModal, prefetchConfigModalWhenIdle } from '../internal/load-modal.js';
import { Localize } from '../internal/localize.js';
import { RowWindow } from '../internal/row-window.js';
import { themeStyles } from '../theme.js';
import { emptyView, loadErrorView, loadingView } from './messages.js';
import { rowView } from './row.js';
import {
  emptyListView,
  type Installed,
  installedFrom,
  justInstalled,
  type Listing,
  type ListView,
  listingFrom,
  matches,
  type Offer,
  type RowActions,
  type RowContext,
  without,
} from './state.js';
import { defaultWorkflowListStrings, type WorkflowListStrings } from './strings.js';
import { choose, syncSwitch } from './switch-queue.js';
import { workflowListStyles } from './workflow-list.styles.js';

/**
 * The workflows a host offers its end user, joined with the ones this user has enabled: each
 * installed workflow gets an on/off switch and "Configure", each other one "Enable". Both open a
 * `<forge-config-modal>` for that workflow, and the row updates itself when the modal saves.
 *
 * Switches are optimistic: a click moves the switch at once, the service is told, and a failure
 * moves it back with the reason in the row. Clicks made while a request for the same workflow is
 * under way are queued, not raced: the switch keeps showing the latest choice and, once the
 * request settles, one more request brings the service to it if it still differs.
 *
 * Each installed workflow's row says how its runs go: when it last ran (the exact time on hover
 * and focus) and whether that run succeeded, how many runs failed in the last 24 hours, or that
 * it waits for its first run. A row whose last run failed says why in words, with a way to fix
 * it: "Reconnect <app>" when the app refused the user's connection (the modal opens on the
 * connect step), "Fix settings" when a setting is wrong. "Runs" opens the workflow's recent runs,
 * page by page, with the blocks each went through. All of it comes in the one read the list
 * opens with (`GET /workflow-health`), read again every `refresh-interval` seconds while the page
 * is visible and whenever it becomes visible again; nothing is asked while it is hidden. It is
 * also read again the moment the user connects or disconnects an app anywhere on the page
 * (`forge-connect` or `forge-disconnect` reaches the document, from this list's modal or any
 * other element, or dispatched by the host): a row stops offering "Reconnect <app>" as soon as
 * the app is connected again.
 *
 * @event {ForgeEvent<'forge-toggle'>} forge-toggle - `{workflowId, active}`: the service confirmed a switch the user moved.
 * @event {ForgeEvent<'forge-connect'>} forge-connect - Bubbles out of the modal: the user connected an app.
 * @event {ForgeEvent<'forge-disconnect'>} forge-disconnect - Bubbles out of the modal: the user disconnected an app.
 * @event {ForgeEvent<'forge-error'>} forge-error - `{code, message, status?}`: loading, a switch, or a token failed; the
 *   element shows the message too.
 * @event {ForgeEvent<'forge-install'>} forge-install - Bubbles out of the modal: the user enabled a workflow.
 * @event {ForgeEvent<'forge-update'>} forge-update - Bubbles out of the modal: the user saved an enabled workflow's settings.
 * @event {ForgeEvent<'forge-workflow-failing'>} forge-workflow-failing - `{workflowId, parentId, kind, failedLast24h}`: a
 *   refresh found that a workflow whose last run had not failed has now failed. Not fired for what the first load shows.
 *
 * @csspart base - The wrapper of everything the element shows.
 * @csspart filter - The filter box, shown past `filter-threshold` workflows.
 * @csspart list - The list of workflows.
 * @csspart row - One workflow.
 * @csspart icons - The row's integration icons.
 * @csspart name - The workflow's name.
 * @csspart description - The workflow's description.
 * @csspart row-error - Why the row's last action failed.
 * @csspart health - The line about an installed workflow's runs; also `health-ok`, `health-failed` or `health-waiting`.
 * @csspart fix-button - "Reconnect <app>" or "Fix settings" in a row whose last run failed.
 * @csspart runs-button - The disclosure that shows a workflow's recent runs.
 * @csspart details - A workflow's recent runs, with `run` for each and `load-more-button`.
 * @csspart switch - The on/off switch (a checkbox with `role="switch"`).
 * @csspart button - The row's button; also `enable-button` or `configure-button`.
 * @csspart modal - The `<forge-config-modal>` the list opens. Its main parts are exported as
 *   `modal-dialog`, `modal-panel`, `modal-header`, `modal-title`, `modal-body` and `modal-footer`.
 * @csspart skeleton - The placeholder rows shown while loading.
 * @csspart empty - Shown when no workflow is on offer.
 * @csspart error - Shown when loading failed, with `retry-button`.
 *
 * @cssproperty --forge-font-family - Font of all text.
 * @cssproperty [--forge-font-size=0.9375rem] - Base font size.
 * @cssproperty [--forge-radius=0.625rem] - Corner radius of the list and buttons.
 * @cssproperty [--forge-spacing=1rem] - Base spacing unit.
 * @cssproperty --forge-color-surface - Background of the list.
 * @cssproperty --forge-color-surface-raised - Hovered rows, skeletons, the switch track when off.
 * @cssproperty --forge-color-text - Text color.
 * @cssproperty --forge-color-text-muted - Descriptions and hints.
 * @cssproperty --forge-color-border - Borders and dividers.
 * @cssproperty --forge-color-accent - The switch when on and the Enable buttons.
 * @cssproperty --forge-color-accent-text - Text on the accent color.
 * @cssproperty --forge-color-danger - Error messages.
 * @cssproperty --forge-focus-ring - Box shadow of the keyboard focus ring.
 */
export class ForgeWorkflowList extends ForgeElement {
  static override styles = [themeStyles, workflowListStyles];

  static override properties: PropertyDeclarations = {
    // Not reflected, like api-base: see ForgeElement.
    integration: {},
    filterThreshold: { attribute: 'filter-threshold', type: Number },
    refreshInterval: { attribute: 'refresh-interval', type: Number },
    oauthTimeout: { attribute: 'oauth-timeout', type: Number },
    oauthReturnUrl: { attribute: 'oauth-return-url' },
    theme: { reflect: true },
    strings: { attribute: false },
    modalStrings: { attribute: false },
  };

  /** Show only the workflows that use this integration (its `name`, e.g. `slack`). */
  integration = '';

  /** The filter box appears when more workflows than this are on offer. */
  filterThreshold = 8;

  /** Seconds between reads of the runs' health while the page is visible; 0 reads only on load and on return to the page. */
  refreshInterval = 60;

  /** How long the modal the list opens waits for an app's sign-in window, in milliseconds. */
  oauthTimeout = 3 * 60_000;

  /**
   * The address of the OAuth return page on this page's own origin (`oauthReturnPage` from
   * `forge-embed/host`), passed to the modal the list opens, as on `<forge-config-modal>`:
   * with it, "Connect" and "Reconnect <app>" finish even when the app's consent page cuts the
   * sign-in window from this page.
   */
  oauthReturnUrl = '';

  /** Pins the color scheme; by default it follows the user's `prefers-color-scheme`. */
  theme?: 'light' | 'dark';

  /**
   * Replacements for any of the texts the list shows, over those `registerStrings` holds for the
   * nearest `lang` (English by default).
   */
  strings: Partial<WorkflowListStrings> = {};

  /**
   * The `strings` of the `<forge-config-modal>` the list opens.
   * @deprecated The modal the list opens reads `registerStrings` and the `lang` around the list
   * itself; register its texts with `registerStrings(locale, {configModal: {...}})` instead.
   */
  modalStrings: Partial<ConfigModalStrings> = {};

  // The details view's texts join these when its module loads (run-details.ts).
  readonly #localize = new Localize(this, 'workflowList', defaultWorkflowListStrings as WorkflowListStrings);

  get #text(): WorkflowListStrings {
    return this.#localize.texts;
  }

  /** What the list shows beyond the load; changed only through `#change`, which re-renders. */
  #view: ListView = emptyListView();
  #refreshTimer?: ReturnType<typeof setInterval> | undefined;

  // A connection made or removed anywhere on the page: the health read again says whether a
  // row still needs "Reconnect" (the service marks a failure the user has reconnected since).
  readonly #connection = new Connection(this, () => void this.#refreshHealth());
  readonly #rowActions: RowActions = {
    toggle: (parentId, row, event) => this.#handleToggle(parentId, row, event),
    openModal: (parentId, reconnect) => void this.#openModal(parentId, reconnect),
    toggleDetails: (parentId, childId) => void this.#toggleDetails(parentId, childId),
  };
  readonly #window = new RowWindow(this, () => this.renderRoot.querySelector<HTMLElement>('[part~="list"]'));

  #loadTask = new Task(this, {
    args: () => [this.apiBase, this.tokenUrl, this.tokenProvider, this.integration] as const,
    task: async ([, , , integration], { signal }) => {
      const client = await this.#connection.ready(signal);
      const [summaries, health] = await Promise.all([
        client.listWorkflowSummaries({ integration }, { signal }),
        client.getWorkflowHealth({ signal }),
      ]);
      this.#change({ ...this.#healthRead(health), rowErrors: new Map() });
      return listingFrom(summaries);
    },
    onError: (error) => {
      if (!isAbort(error)) reportError(this, error, 'load-failed');
    },
  });

  override connectedCallback(): void {
    super.connectedCallback();
    prefetchConfigModalWhenIdle();
    // Removed when the element is (the connection's signal ends with its time on the page).
    document.addEventListener('visibilitychange', this.#handleVisibility, { signal: this.#connection.signal });
    this.#scheduleRefresh();
    // Back on the page after a removal, which stopped every request: read everything again.
    if (this.hasUpdated) {
      this.#change({ installed: new Map() });
      void this.#loadTask.run();
    }
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#scheduleRefresh();
    this.#loadTask.abort();
  }

  protected override updated(changed: PropertyValues<this>): void {
    super.updated(changed);
    if (changed.has('refreshInterval')) this.#scheduleRefresh();
  }

  /**
   * The one way the view changes: it always re-renders. A row's switch, which the switch queue
   * moves in place, re-renders through it with no change.
   */
  #change(change: Partial<ListView> = {}): void {
    this.#view = { ...this.#view, ...change };
    this.requestUpdate();
  }

  /** Says why a row's last action failed, or (no `reason`) clears it; with more of the view's `change`. */
  #rowError(parentId: string, reason?: string, change?: Partial<ListView>): void {
    const { rowErrors } = this.#view;
    this.#change({
      ...change,
      rowErrors: reason ? new Map(rowErrors).set(parentId, reason) : without(rowErrors, parentId),
    });
  }

  /** A timer only while connected and visible: a hidden page asks nothing. */
  #scheduleRefresh(): void {
    clearInterval(this.#refreshTimer);
    this.#refreshTimer = undefined;
    if (this.isConnected && this.refreshInterval > 0 && document.visibilityState === 'visible') {
      this.#refreshTimer = setInterval(() => void this.#refreshHealth(), this.refreshInterval * 1000);
    }
  }

  readonly #handleVisibility = (): void => {
    this.#scheduleRefresh();
    if (document.visibilityState === 'visible') void this.#refreshHealth();
  };

  /**
   * The view's change for the service's health of the user's workflows; tells of those that
   * started failing since the last read.
   */
  #healthRead(health: WorkflowHealth[]): Pick<ListView, 'installed' | 'details'> {
    const { expanded } = this.#view;
    let { details } = this.#view;
    const installed = new Map<string, Installed>();
    for (const now of health) {
      const current = this.#view.installed.get(now.parentId);
      const before = current?.health;
      if (before && !before.failure && now.failure) {
        const { workflowId, parentId, failure, failedLast24h } = now;
        emit(this, 'forge-workflow-failing', { workflowId, parentId, kind: failure.kind, failedLast24h });
      }
      if (before && now.lastRun?.executionId !== before.lastRun?.executionId) {
        // It ran since: an open Runs view reads its first page again, a closed one is read anew when it opens.
        if (expanded.has(now.parentId)) void details.get(now.parentId)?.reload();
        else details = without(details, now.parentId);
      }
      // A switch still talking to the service is newer than what this read. Its row stays the
      // object the switch queue moves, or the queue's moves would no longer show.
      if (current?.busy) current.health = now;
      installed.set(now.parentId, current?.busy ? current : installedFrom(now));
    }
    return { installed, details };
  }

  /** Reads the runs' health again: one request for all of the user's workflows. */
  async #refreshHealth(): Promise<void> {
    // Before the first load there is nothing to refresh, and the load reads it anyway.
    if (!this.#loadTask.value || document.visibilityState !== 'visible') return;
    const { signal } = this.#connection;
    try {
      const health = await this.#connection.client.getWorkflowHealth({ signal });
      if (signal.aborted) return;
      this.#change({ ...this.#healthRead(health), refreshError: '' });
    } catch (error) {
      if (signal.aborted) return;
      this.#change({ refreshError: reportError(this, error, 'load-failed') });
    }
  }

  #handleToggle(parentId: string, row: Installed, { target }: Event): void {
    this.#rowError(parentId);
    if (choose(row, (target as HTMLInputElement).checked)) void this.#syncSwitch(parentId, row);
  }

  async #syncSwitch(parentId: string, row: Installed): Promise<void> {
    // Removing the element aborts the request; from then on nothing here touches the rows.
    const { signal } = this.#connection;
    const failed = await syncSwitch(
      row,
      (on) => this.#connection.client[on ? 'activateWorkflow' : 'deactivateWorkflow'](row.childId),
      (on) => emit(this, 'forge-toggle', { workflowId: row.childId, active: on }),
      signal,
    );
    if (signal.aborted) return;
    if (!failed) {
      this.#change();
      return;
    }
    const message = reportError(this, failed.error, 'toggle-failed');
    const t = this.#text;
    if ((failed.error as ForgeApiError).status === 404) {
      // Removed behind the user's back (e.g. by the host): the row offers "Enable" again.
      this.#rowError(parentId, t.removed, { installed: without(this.#view.installed, parentId) });
    } else {
      this.#rowError(parentId, (failed.on ? t.turnOnFailed : t.turnOffFailed)(message));
    }
  }

  async #openModal(parentId: string, reconnect = ''): Promise<void> {
    try {
      await loadConfigModal();
    } catch (error) {
      // A dead button would leave the user guessing; the row says why nothing opened.
      this.#rowError(
        parentId,
        reportError(this, error, 'load-failed', () => this.#text.modalLoadFailed),
      );
      return;
    }
    this.#rowError(parentId, undefined, { modalReconnect: reconnect, modalFor: parentId });
    await this.updateComplete;
    await this.renderRoot.querySelector<ForgeConfigModal>('forge-config-modal')!.show();
  }

  #handleInstall({ detail: { parentId, workflowId } }: ForgeEvent<'forge-install'>): void {
    // Children start switched on, and have not run; the re-read below confirms the switch.
    const row = installedFrom(justInstalled(workflowId, parentId));
    this.#change({ installed: new Map(this.#view.installed).set(parentId, row) });
    void this.#rereadChild(parentId, workflowId);
  }

  /** Re-reads one child workflow the modal saved, instead of the whole list; its runs are as they were. */
  async #rereadChild(parentId: string, childId: string): Promise<void> {
    this.#rowError(parentId);
    const { signal } = this.#connection;
    try {
      const { active } = await this.#connection.client.getWorkflow(childId);
      if (signal.aborted) return;
      const row = this.#view.installed.get(parentId);
      // A switch still talking to the service is newer than this read. The row is the object
      // the switch queue moves, so it changes in place too.
      if (row && !row.busy) Object.assign(row, { active, wanted: active, health: { ...row.health, active } });
      this.#change();
    } catch (error) {
      if (signal.aborted) return;
      this.#rowError(parentId, this.#text.refreshFailed(reportError(this, error, 'load-failed')));
    }
  }

  async #toggleDetails(parentId: string, childId: string): Promise<void> {
    const { expanded } = this.#view;
    const open = !expanded.has(parentId);
    this.#change({ expanded: open ? new Set(expanded).add(parentId) : without(expanded, parentId) });
    if (!open || this.#view.details.has(parentId)) return;
    try {
      const { RunDetails } = await import('./run-details.js');
      const report = (error: unknown) => reportError(this, error, 'load-failed');
      const details = new RunDetails(this, this.#connection.client, childId, this.#connection.signal, report);
      this.#change({ details: new Map(this.#view.details).set(parentId, details) });
      await details.loadMore();
    } catch (error) {
      // The view's module did not load (offline, or a deployment replaced it): say so in the row.
      const expanded = without(this.#view.expanded, parentId);
      this.#rowError(parentId, reportError(this, error, 'load-failed'), { expanded });
    }
  }

  /** Loads the workflows and the user's choices again; resolves once they are shown. */
  async refresh(): Promise<void> {
    await this.#loadTask.run();
    await this.updateComplete;
  }

  /** The rows of a long list that are near the viewport (see RowWindow), with spacers for the rest. */
  #renderRows({ integrations }: Listing, shown: Offer[]) {
    const context: RowContext = {
      ...this.#view,
      t: this.#text,
      locale: this.#localize.locale,
      plural: this.#localize.plural,
      integrations,
      actions: this.#rowActions,
    };
    return this.#window.render(
      shown.map((offer) => offer.parent.workflowId),
      (i, total) => rowView(context, shown[i]!, total && i + 1, total),
    );
  }

  readonly #handleRetry = async (): Promise<void> => {
    await this.refresh();
    // The retry button is gone once the list shows; keep keyboard users where the content is.
    this.renderRoot.querySelector<HTMLElement>('[data-landing]')?.focus();
  };

  override render() {
    const t = this.#text;
    const { status, value: listing, error } = this.#loadTask;
    const offers = listing?.offers;
    const pending = status === TaskStatus.PENDING;
    // A reload after a failure keeps the failure (and its retry button) on screen until it
    // answers, rather than flashing the skeleton.
    const failed = !offers && error !== undefined && !isAbort(error);
    // Only a filter box on screen filters: a list that shrank below the threshold shows all.
    const filtering = offers && offers.length > this.filterThreshold;
    const { filter, refreshError, modalFor, modalReconnect } = this.#view;
    const needle = filtering ? filter.trim().toLowerCase() : '';
    const shown = needle ? offers!.filter((offer) => matches(offer, needle, listing!.integrations)) : offers;
    let content: unknown;
    if (failed) {
      content = loadErrorView(t, error, pending, this.#handleRetry);
    } else if (!offers) {
      content = loadingView();
    } else if (!offers[0]) {
      content = emptyView(t);
    } else {
      content = html`${
        filtering
          ? html`<input
              type="search"
              class="input"
              part="filter"
              aria-label=${t.filterLabel}
              placeholder=${t.filterLabel}
              .value=${filter}
              @input=${({ target }: Event) => this.#change({ filter: (target as HTMLInputElement).value })}
            />`
          : nothing
      }
      ${
        shown![0]
          ? html`<ul
              class="list"
              part="list"
              aria-label=${t.listLabel}
              aria-busy=${pending}
              tabindex="-1"
              data-landing
              @pointerover=${prefetchConfigModal}
              @focusin=${prefetchConfigModal}
            >
              ${this.#renderRows(listing!, shown!)}
            </ul>`
          : html`<p class="message muted">${t.noMatches(filter.trim())}</p>`
      }`;
    }
    const announcement =
      !offers && !failed ? t.loading : needle ? t.matchCount(shown!.length, offers!.length, this.#localize.plural) : '';
    return html`<div class="base" part="base">
        <p class="visually-hidden" role="status">${announcement}</p>
        ${refreshError ? html`<p class="small muted" role="status">${t.healthRefreshFailed(refreshError)}</p>` : nothing}
        ${content}
      </div>
      ${
        modalFor
          ? html`<forge-config-modal
              part="modal"
              exportparts="dialog:modal-dialog,panel:modal-panel,header:modal-header,title:modal-title,body:modal-body,footer:modal-footer"
              api-base=${this.apiBase}
              token-url=${this.tokenUrl || nothing}
              .tokenProvider=${this.tokenProvider}
              workflow-id=${modalFor}
              reconnect=${modalReconnect}
              oauth-timeout=${this.oauthTimeout}
              oauth-return-url=${this.oauthReturnUrl}
              theme=${this.theme ?? nothing}
              .strings=${this.modalStrings}
              @forge-install=${this.#handleInstall}
              @forge-update=${({ detail }: ForgeEvent<'forge-update'>) => this.#rereadChild(modalFor, detail.workflowId)}
              @forge-after-hide=${() => this.#refreshHealth()}
            ></forge-config-modal>`
          : nothing
      }`;
  }
}
