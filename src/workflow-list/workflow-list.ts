import { Task, TaskStatus } from '@lit/task';
import { html, nothing, type PropertyDeclarations, type PropertyValues } from 'lit';
import type { ForgeApiError } from '../api/embed-client.js';
import type { ParentWorkflow, WorkflowHealth } from '../api/types.js';
import type { ForgeConfigModal } from '../config-modal/config-modal.js';
import type { ConfigModalStrings } from '../config-modal/strings.js';
import { isAbort } from '../errors.js';
import { emit, type ForgeEvent, reportError } from '../events.js';
import { Connection } from '../internal/connection.js';
import { ForgeElement } from '../internal/forge-element.js';
import { loadConfigModal, prefetchConfigModal, prefetchConfigModalWhenIdle } from '../internal/load-modal.js';
import { Localize } from '../internal/localize.js';
import { timeTag } from '../internal/time.js';
import { safeIconUrl, themeStyles } from '../theme.js';
import { RowWindow } from './row-window.js';
import type { RunDetails } from './run-details.js';
import { defaultWorkflowListStrings, type WorkflowListStrings } from './strings.js';
import { workflowListStyles } from './workflow-list.styles.js';

/** A parent workflow as its row shows it, prepared once per load so each render stays cheap. */
interface Offer {
  parent: ParentWorkflow;
  /** Lower-case text the filter box searches: name, description, integration names. */
  haystack: string;
}

/** The user's child workflow behind a row, and where its switch stands. */
interface Installed {
  childId: string;
  /** What the service last confirmed. */
  active: boolean;
  /** What the switch shows: the user's latest choice. */
  wanted: boolean;
  /** A request for this workflow is under way. */
  busy?: boolean;
  /** How its runs went, as the service last said. */
  health: WorkflowHealth;
}

const installedFrom = (health: WorkflowHealth): Installed => ({
  childId: health.workflowId,
  active: health.active,
  wanted: health.active,
  health,
});

/** A workflow the user just enabled, until the service says more: on, and never ran. */
const justInstalled = (workflowId: string, parentId: string): WorkflowHealth => ({
  workflowId,
  parentId,
  active: true,
  lastRun: null,
  failedLast24h: 0,
  failure: null,
  nextRunAt: null,
});

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
 * is visible and whenever it becomes visible again; nothing is asked while it is hidden.
 *
 * @event {ForgeEvent<'forge-toggle'>} forge-toggle - `{workflowId, active}`: the service confirmed a switch the user moved.
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

  // Private state: changes call requestUpdate() themselves.
  #filter = '';
  /** The parent workflow the modal is (or was last) open for. */
  #modalFor = '';
  /** The integration the modal asks the user to connect again, if that is why it opened. */
  #modalReconnect = '';
  /** Parent ids whose details view is open, and each one's view once its module loaded. */
  #expanded = new Set<string>();
  #details = new Map<string, RunDetails>();
  /** Why the last refresh of the runs' health failed. */
  #refreshError = '';
  #refreshTimer?: ReturnType<typeof setInterval> | undefined;
  /** The user's child workflows by parent id. */
  #installed = new Map<string, Installed>();
  /** Why a row's last action failed, by parent id. */
  #rowErrors = new Map<string, string>();

  readonly #connection = new Connection(this);
  readonly #window = new RowWindow(this, () => this.renderRoot.querySelector<HTMLElement>('[part~="list"]'));

  #loadTask = new Task(this, {
    args: () => [this.apiBase, this.tokenUrl, this.tokenProvider, this.integration] as const,
    task: async ([, , , integration], { signal }) => {
      const client = await this.#connection.ready(signal);
      const [parents, health] = await Promise.all([
        client.listWorkflows({ integration }, { signal }),
        client.getWorkflowHealth({ signal }),
      ]);
      this.#applyHealth(health);
      this.#rowErrors.clear();
      return parents.map((parent): Offer => {
        // Icon URLs are checked as rows render: a long list renders a few of its rows.
        const words = [parent.name, parent.description, ...parent.integrations.map((i) => i.displayName)];
        return { parent, haystack: words.join('\n').toLowerCase() };
      });
    },
    onError: (error) => {
      if (!isAbort(error)) reportError(this, error, 'load-failed');
    },
  });

  override connectedCallback(): void {
    super.connectedCallback();
    prefetchConfigModalWhenIdle();
    document.addEventListener('visibilitychange', this.#handleVisibility);
    this.#scheduleRefresh();
    // Back on the page after a removal, which stopped every request: read everything again.
    if (this.hasUpdated) {
      this.#installed = new Map();
      void this.#loadTask.run();
    }
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    document.removeEventListener('visibilitychange', this.#handleVisibility);
    this.#scheduleRefresh();
    this.#loadTask.abort();
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (changed.has('refreshInterval')) this.#scheduleRefresh();
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

  /** Takes the service's health of the user's workflows, and tells of those that started failing since the last read. */
  #applyHealth(health: WorkflowHealth[]): void {
    const installed = new Map<string, Installed>();
    for (const now of health) {
      const current = this.#installed.get(now.parentId);
      const before = current?.health;
      if (before && !before.failure && now.failure) {
        const { workflowId, parentId, failure, failedLast24h } = now;
        emit(this, 'forge-workflow-failing', { workflowId, parentId, kind: failure.kind, failedLast24h });
      }
      if (before && now.lastRun?.executionId !== before.lastRun?.executionId) {
        // It ran since: an open Runs view reads its first page again, a closed one is read anew when it opens.
        if (this.#expanded.has(now.parentId)) void this.#details.get(now.parentId)?.reload();
        else this.#details.delete(now.parentId);
      }
      // A switch still talking to the service is newer than what this read.
      installed.set(now.parentId, current?.busy ? { ...current, health: now } : installedFrom(now));
    }
    this.#installed = installed;
  }

  /** Reads the runs' health again: one request for all of the user's workflows. */
  async #refreshHealth(): Promise<void> {
    // Before the first load there is nothing to refresh, and the load reads it anyway.
    if (!this.#loadTask.value || document.visibilityState !== 'visible') return;
    const { signal } = this.#connection;
    try {
      const health = await this.#connection.client.getWorkflowHealth({ signal });
      if (signal.aborted) return;
      this.#applyHealth(health);
      this.#refreshError = '';
    } catch (error) {
      if (signal.aborted) return;
      this.#refreshError = reportError(this, error, 'load-failed');
    }
    this.requestUpdate();
  }

  #handleToggle(parentId: string, row: Installed, { target }: Event): void {
    row.wanted = (target as HTMLInputElement).checked;
    this.#rowErrors.delete(parentId);
    this.requestUpdate();
    if (!row.busy) void this.#syncSwitch(parentId, row);
  }

  /**
   * Brings the service to where the switch stands, one request at a time: clicks made meanwhile
   * only move the switch, and the loop sends whatever still differs once a request settles.
   */
  async #syncSwitch(parentId: string, row: Installed): Promise<void> {
    row.busy = true;
    let target = row.wanted;
    // Removing the element aborts the request; from then on nothing here touches the rows.
    const { signal } = this.#connection;
    try {
      while (row.wanted !== row.active) {
        target = row.wanted;
        await this.#connection.client[target ? 'activateWorkflow' : 'deactivateWorkflow'](row.childId);
        if (signal.aborted) return;
        row.active = target;
        emit(this, 'forge-toggle', { workflowId: row.childId, active: target });
      }
    } catch (error) {
      if (signal.aborted) return;
      row.wanted = row.active;
      const message = reportError(this, error, 'toggle-failed');
      const t = this.#text;
      if ((error as ForgeApiError).status === 404) {
        // Removed behind the user's back (e.g. by the host): the row offers "Enable" again.
        this.#installed.delete(parentId);
        this.#rowErrors.set(parentId, t.removed);
      } else {
        this.#rowErrors.set(parentId, (target ? t.turnOnFailed : t.turnOffFailed)(message));
      }
    }
    row.busy = false;
    this.requestUpdate();
  }

  async #openModal(parentId: string, reconnect = ''): Promise<void> {
    try {
      await loadConfigModal();
    } catch (error) {
      // A dead button would leave the user guessing; the row says why nothing opened.
      this.#rowErrors.set(
        parentId,
        reportError(this, error, 'load-failed', () => this.#text.modalLoadFailed),
      );
      this.requestUpdate();
      return;
    }
    this.#rowErrors.delete(parentId);
    this.#modalReconnect = reconnect;
    this.#modalFor = parentId;
    this.requestUpdate();
    await this.updateComplete;
    await this.renderRoot.querySelector<ForgeConfigModal>('forge-config-modal')!.show();
  }

  #handleInstall({ detail: { parentId, workflowId } }: ForgeEvent<'forge-install'>): void {
    // Children start switched on, and have not run; the re-read below confirms the switch.
    this.#installed.set(parentId, installedFrom(justInstalled(workflowId, parentId)));
    void this.#rereadChild(parentId, workflowId);
  }

  /** Re-reads one child workflow the modal saved, instead of the whole list; its runs are as they were. */
  async #rereadChild(parentId: string, childId: string): Promise<void> {
    this.#rowErrors.delete(parentId);
    this.requestUpdate();
    const { signal } = this.#connection;
    try {
      const { active } = await this.#connection.client.getWorkflow(childId);
      if (signal.aborted) return;
      const row = this.#installed.get(parentId);
      if (row && !row.busy) Object.assign(row, { active, wanted: active, health: { ...row.health, active } });
    } catch (error) {
      if (signal.aborted) return;
      this.#rowErrors.set(parentId, this.#text.refreshFailed(reportError(this, error, 'load-failed')));
    }
    this.requestUpdate();
  }

  async #toggleDetails(parentId: string, childId: string): Promise<void> {
    if (this.#expanded.delete(parentId)) {
      this.requestUpdate();
      return;
    }
    this.#expanded.add(parentId);
    this.requestUpdate();
    if (this.#details.has(parentId)) return;
    try {
      const { RunDetails } = await import('./run-details.js');
      const report = (error: unknown) => reportError(this, error, 'load-failed');
      const details = new RunDetails(this, this.#connection.client, childId, this.#connection.signal, report);
      this.#details.set(parentId, details);
      await details.loadMore();
    } catch (error) {
      // The view's module did not load (offline, or a deployment replaced it): say so in the row.
      this.#expanded.delete(parentId);
      this.#rowErrors.set(parentId, reportError(this, error, 'load-failed'));
      this.requestUpdate();
    }
  }

  /** Loads the workflows and the user's choices again; resolves once they are shown. */
  async refresh(): Promise<void> {
    await this.#loadTask.run();
    await this.updateComplete;
  }

  /** What an installed workflow's row says about its runs, and the fix a failure asks for. */
  #renderHealth(id: string, name: string, row: Installed) {
    const t = this.#text;
    const locale = this.#localize.locale;
    const { lastRun, failure, failedLast24h, nextRunAt } = row.health;
    const state = !lastRun ? 'waiting' : failure ? 'failed' : 'ok';
    const app = failure?.integration
      ? (this.#loadTask.value?.flatMap((offer) => offer.parent.integrations).find((i) => i.name === failure.integration)
          ?.displayName ?? failure.integration)
      : '';
    const open = this.#expanded.has(id);
    let fix: unknown = nothing;
    if (failure?.kind === 'connection' && app) {
      fix = html`<button type="button" class="button tonal" part="fix-button" @click=${() => this.#openModal(id, failure.integration!)}>
        ${t.reconnect(app)}<span class="visually-hidden"> · ${name}</span>
      </button>`;
    } else if (failure?.kind === 'settings') {
      fix = html`<button type="button" class="button tonal" part="fix-button" @click=${() => this.#openModal(id)}>
        ${t.fixSettings}<span class="visually-hidden"> · ${name}</span>
      </button>`;
    }
    return html`<span class="health small ${state}" part="health health-${state}">
        <span class="glyph" aria-hidden="true">${state === 'ok' ? '✓' : state === 'failed' ? '!' : '…'}</span>
        <span>
          ${
            lastRun
              ? timeTag(lastRun.startedAt, locale, failure ? t.lastRunFailed : t.lastRunSucceeded)
              : nextRunAt
                ? timeTag(nextRunAt, locale, t.nextRun)
                : t.neverRan
          }
          ${failure ? html`· ${t.failedBecause[failure.kind](app)}` : nothing}
          ${failedLast24h ? html`<span class="muted">· ${t.failedToday(failedLast24h, this.#localize.plural)}</span>` : nothing}
        </span>
      </span>
      ${
        lastRun || fix !== nothing
          ? html`<span class="health-actions">
              ${fix}
              ${
                lastRun
                  ? html`<button
                      type="button"
                      class="button quiet"
                      part="runs-button"
                      aria-expanded=${open}
                      aria-controls="runs-${id}"
                      @click=${() => this.#toggleDetails(id, row.childId)}
                    >
                      ${t.showRuns}<span class="visually-hidden"> · ${name}</span>
                    </button>`
                  : nothing
              }
            </span>`
          : nothing
      }`;
  }

  /** One row; `position` is its 1-based place and `total` the list's length when the list is windowed. */
  #renderRow(
    { parent: { workflowId: id, name, description, integrations, blocks } }: Offer,
    position?: number,
    total?: number,
  ) {
    const t = this.#text;
    const row = this.#installed.get(id);
    const error = this.#rowErrors.get(id);
    const details = this.#details.get(id);
    return html`<li
      class="row"
      part="row"
      data-key=${id}
      aria-posinset=${position ?? nothing}
      aria-setsize=${total ?? nothing}
    >
      <span class="icons" part="icons">
        ${integrations.map(({ displayName: name, icon }) => {
          const url = safeIconUrl(icon);
          return url
            ? html`<img class="icon" src=${url} alt=${name} title=${name} width="28" height="28" loading="lazy" />`
            : html`<span class="icon letter muted" role="img" aria-label=${name} title=${name}>${name[0]}</span>`;
        })}
      </span>
      <div class="text">
        <span class="name" part="name">${name}</span>
        ${description ? html`<span class="small muted" part="description">${description}</span>` : nothing}
        ${error ? html`<span class="small danger" part="row-error" role="alert">${error}</span>` : nothing}
        ${row ? this.#renderHealth(id, name, row) : nothing}
      </div>
      <span class="actions">
        ${
          row
            ? html`<input
                type="checkbox"
                role="switch"
                class="switch"
                part="switch"
                aria-label=${name}
                .checked=${row.wanted}
                @change=${(event: Event) => this.#handleToggle(id, row, event)}
              />`
            : nothing
        }
        <button
          type="button"
          class="button ${row ? '' : 'tonal'}"
          part="button ${row ? 'configure' : 'enable'}-button"
          @click=${() => this.#openModal(id)}
        >
          ${row ? t.configure : t.enable}<span class="visually-hidden"> ${name}</span>
        </button>
      </span>
      ${details && this.#expanded.has(id) ? details.render(t, { id: `runs-${id}`, name, blocks }, this.#localize.locale, this.#localize.plural) : nothing}
    </li>`;
  }

  /** The rows of a long list that are near the viewport (see RowWindow), with spacers for the rest. */
  #renderRows(offers: Offer[]) {
    const total = this.#window.windows(offers.length) ? offers.length : undefined;
    return this.#window
      .blocks(offers.map((offer) => offer.parent.workflowId))
      .map(({ from, to, spacer }) =>
        spacer === undefined
          ? offers.slice(from, to).map((offer, i) => this.#renderRow(offer, total && from + i + 1, total))
          : html`<li class="gap" aria-hidden="true" .style=${`height:${spacer}px`}></li>`,
      );
  }

  #handleFocusIn = (event: FocusEvent): void => {
    prefetchConfigModal();
    this.#window.focusedKey = (event.target as Element).closest<HTMLElement>('[data-key]')?.dataset.key;
  };

  #handleFocusOut = ({ relatedTarget }: FocusEvent): void => {
    if (!(relatedTarget instanceof Node && this.renderRoot.contains(relatedTarget)))
      this.#window.focusedKey = undefined;
  };

  override render() {
    const t = this.#text;
    const { status, value: offers, error } = this.#loadTask;
    const pending = status === TaskStatus.PENDING;
    // A reload after a failure keeps the failure (and its retry button) on screen until it
    // answers, rather than flashing the skeleton.
    const failed = !offers && error !== undefined && !isAbort(error);
    // Only a filter box on screen filters: a list that shrank below the threshold shows all.
    const filtering = offers && offers.length > this.filterThreshold;
    const needle = filtering ? this.#filter.trim().toLowerCase() : '';
    const shown = offers?.filter((offer) => offer.haystack.includes(needle));
    let content: unknown;
    if (failed) {
      content = html`<div class="message" part="error">
        <div role="alert">
          <p class="title">${t.loadFailed}</p>
          <p class="muted">${(error as Error).message}</p>
        </div>
        <button
          type="button"
          class="button"
          part="retry-button"
          aria-disabled=${pending}
          @click=${async () => {
            if (pending) return;
            await this.refresh();
            // The retry button is gone once the list shows; keep keyboard users where the content is.
            this.renderRoot.querySelector<HTMLElement>('[data-landing]')?.focus();
          }}
        >
          ${t.retry}
        </button>
      </div>`;
    } else if (!offers) {
      content = html`<div class="skeleton" part="skeleton" aria-hidden="true">
        ${[0, 1, 2].map(
          () => html`<div class="row">
            <span class="bone tile"></span>
            <span class="text"><span class="bone line"></span><span class="bone line short"></span></span>
            <span class="bone pill"></span>
          </div>`,
        )}
      </div>`;
    } else if (!offers[0]) {
      content = html`<div class="message" part="empty">
        <p class="title" tabindex="-1" data-landing>${t.empty}</p>
        <p class="muted">${t.emptyHint}</p>
      </div>`;
    } else {
      content = html`${
        filtering
          ? html`<input
              type="search"
              class="input"
              part="filter"
              aria-label=${t.filterLabel}
              placeholder=${t.filterLabel}
              .value=${this.#filter}
              @input=${({ target }: Event) => {
                this.#filter = (target as HTMLInputElement).value;
                this.requestUpdate();
              }}
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
              @focusin=${this.#handleFocusIn}
              @focusout=${this.#handleFocusOut}
            >
              ${this.#renderRows(shown!)}
            </ul>`
          : html`<p class="message muted">${t.noMatches(this.#filter.trim())}</p>`
      }`;
    }
    const announcement =
      !offers && !failed ? t.loading : needle ? t.matchCount(shown!.length, offers!.length, this.#localize.plural) : '';
    return html`<div class="base" part="base">
        <p class="visually-hidden" role="status">${announcement}</p>
        ${this.#refreshError ? html`<p class="small muted" role="status">${t.healthRefreshFailed(this.#refreshError)}</p>` : nothing}
        ${content}
      </div>
      ${
        this.#modalFor
          ? html`<forge-config-modal
              part="modal"
              exportparts="dialog:modal-dialog,panel:modal-panel,header:modal-header,title:modal-title,body:modal-body,footer:modal-footer"
              api-base=${this.apiBase}
              token-url=${this.tokenUrl || nothing}
              .tokenProvider=${this.tokenProvider}
              workflow-id=${this.#modalFor}
              reconnect=${this.#modalReconnect}
              theme=${this.theme ?? nothing}
              .strings=${this.modalStrings}
              @forge-install=${this.#handleInstall}
              @forge-update=${({ detail }: ForgeEvent<'forge-update'>) => this.#rereadChild(this.#modalFor, detail.workflowId)}
              @forge-after-hide=${() => this.#refreshHealth()}
            ></forge-config-modal>`
          : nothing
      }`;
  }
}
