import { Task, TaskStatus } from '@lit/task';
import { html, nothing, type PropertyValues } from 'lit';
import { property, query, state } from 'lit/decorators.js';
import { ifDefined } from 'lit/directives/if-defined.js';
import { live } from 'lit/directives/live.js';
import { ForgeApiError } from '../api/client.js';
import type { ChildWorkflowSummary, ParentWorkflow } from '../api/types.js';
import type { ForgeConfigModal } from '../config-modal/config-modal.js';
import type { ConfigModalStrings } from '../config-modal/strings.js';
import { emit, type ForgeErrorCode, type ForgeEvent } from '../events.js';
import { ConfigError, ForgeElement } from '../forge-element.js';
import { safeIconUrl, themeStyles } from '../theme.js';
import { TokenError } from '../token/token-source.js';
import { defaultWorkflowListStrings, type WorkflowListStrings } from './strings.js';
import { workflowListStyles } from './workflow-list.styles.js';

/** A parent workflow as its row shows it, prepared once per load so each render stays cheap. */
interface Offer {
  id: string;
  name: string;
  description: string;
  icons: { name: string; url: string | undefined }[];
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
  busy: boolean;
}

function toOffer(parent: ParentWorkflow): Offer {
  const icons = parent.integrations.map((i) => ({ name: i.displayName, url: safeIconUrl(i.icon) }));
  const description = parent.description ?? '';
  return {
    id: parent.workflowId,
    name: parent.name,
    description,
    icons,
    haystack: [parent.name, description, ...icons.map((i) => i.name)].join('\n').toLowerCase(),
  };
}

const installedFrom = (child: Pick<ChildWorkflowSummary, '_id' | 'active'>): Installed => ({
  childId: child._id,
  active: child.active,
  wanted: child.active,
  busy: false,
});

const isAbort = (error: unknown) => (error as Error | undefined)?.name === 'AbortError';

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
 * @event forge-toggle - `{workflowId, active}`: the service confirmed a switch the user moved.
 * @event forge-error - `{code, message, status?}`: loading, a switch, or a token failed; the
 *   element shows the message too.
 * @event forge-install - Bubbles out of the modal: the user enabled a workflow.
 * @event forge-update - Bubbles out of the modal: the user saved an enabled workflow's settings.
 *
 * @csspart base - The wrapper of everything the element shows.
 * @csspart filter - The filter box, shown past `filter-threshold` workflows.
 * @csspart list - The list of workflows.
 * @csspart row - One workflow.
 * @csspart icons - The row's integration icons.
 * @csspart name - The workflow's name.
 * @csspart description - The workflow's description.
 * @csspart row-error - Why the row's last action failed.
 * @csspart switch - The on/off switch (a checkbox with `role="switch"`).
 * @csspart button - The row's button; also `enable-button` or `configure-button`.
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

  @query('forge-config-modal') private modal?: ForgeConfigModal;

  /** Show only the workflows that use this integration (its `name`, e.g. `slack`). */
  @property({ reflect: true }) integration = '';

  /** The filter box appears when more workflows than this are on offer. */
  @property({ attribute: 'filter-threshold', type: Number }) filterThreshold = 8;

  /** Pins the color scheme; by default it follows the user's `prefers-color-scheme`. */
  @property({ reflect: true }) theme?: 'light' | 'dark';

  /** Replacements for any of the texts the list shows (English by default). */
  @property({ attribute: false }) strings: Partial<WorkflowListStrings> = {};

  /** Replacements for texts of the `<forge-config-modal>` the list opens (its `strings`). */
  @property({ attribute: false }) modalStrings: Partial<ConfigModalStrings> = {};

  /** The texts in use: `strings` over the English defaults. */
  private text: WorkflowListStrings = defaultWorkflowListStrings;
  @state() private filterText = '';
  /** The parent workflow the modal is (or was last) open for. */
  @state() private modalFor = '';

  /** The user's child workflows by parent id. */
  private installed = new Map<string, Installed>();
  /** Why a row's last action failed, by parent id. */
  private rowErrors = new Map<string, string>();

  private readonly loadTask = new Task(this, {
    args: () => [this.apiBase, this.tokenUrl, this.tokenProvider, this.integration] as const,
    task: async ([, , , integration], { signal }) => {
      const { client, tokens } = this.connection();
      const { userId } = await tokens.current();
      const [parents, user] = await Promise.all([
        client.listWorkflows({ integration }, { signal }),
        client.getUser(userId, { signal }),
      ]);
      return { offers: parents.map(toOffer), children: user.workflows };
    },
    onComplete: ({ children }) => {
      const next = new Map<string, Installed>();
      for (const child of children) {
        const current = this.installed.get(child.parentId);
        // A switch still talking to the service is newer than what this load read.
        next.set(child.parentId, current?.busy ? current : installedFrom(child));
      }
      this.installed = next;
      this.rowErrors.clear();
    },
    onError: (error) => {
      if (!isAbort(error)) this.report(error, 'load-failed');
    },
  });

  override connectedCallback(): void {
    super.connectedCallback();
    // A load cut short by disconnecting starts again when the element comes back.
    if (this.loadTask.status === TaskStatus.ERROR && isAbort(this.loadTask.error)) void this.loadTask.run();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.loadTask.abort();
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('strings')) this.text = { ...defaultWorkflowListStrings, ...this.strings };
  }

  /** Emits `forge-error` for a failure and answers the message to show. */
  private report(error: unknown, code: ForgeErrorCode): string {
    const message = error instanceof Error ? error.message : String(error);
    const status = error instanceof ForgeApiError || error instanceof TokenError ? error.status : undefined;
    emit(this, 'forge-error', {
      code: error instanceof TokenError ? error.code : error instanceof ConfigError ? 'config' : code,
      message,
      ...(status === undefined ? {} : { status }),
    });
    return message;
  }

  private handleToggle(parentId: string, event: Event): void {
    const row = this.installed.get(parentId);
    if (!row) return;
    row.wanted = (event.target as HTMLInputElement).checked;
    this.rowErrors.delete(parentId);
    this.requestUpdate();
    if (!row.busy) void this.syncSwitch(parentId, row);
  }

  /**
   * Brings the service to where the switch stands, one request at a time: clicks made meanwhile
   * only move the switch, and the loop sends whatever still differs once a request settles.
   */
  private async syncSwitch(parentId: string, row: Installed): Promise<void> {
    row.busy = true;
    let target = row.wanted;
    try {
      while (row.wanted !== row.active) {
        target = row.wanted;
        const { client } = this.connection();
        await (target ? client.activateWorkflow(row.childId) : client.deactivateWorkflow(row.childId));
        row.active = target;
        emit(this, 'forge-toggle', { workflowId: row.childId, active: target });
      }
    } catch (error) {
      row.wanted = row.active;
      const message = this.report(error, 'toggle-failed');
      if (error instanceof ForgeApiError && error.status === 404) {
        // Removed behind the user's back (e.g. by the host): the row offers "Enable" again.
        this.installed.delete(parentId);
        this.rowErrors.set(parentId, this.text.removed);
      } else {
        this.rowErrors.set(parentId, (target ? this.text.turnOnFailed : this.text.turnOffFailed)(message));
      }
    } finally {
      row.busy = false;
      this.requestUpdate();
    }
  }

  private async openModal(parentId: string): Promise<void> {
    this.modalFor = parentId;
    await this.updateComplete;
    await this.modal?.show();
  }

  private handleInstall(event: ForgeEvent<'forge-install'>): void {
    const { parentId, workflowId } = event.detail;
    // Children start switched on; the re-read below confirms it.
    this.installed.set(parentId, installedFrom({ _id: workflowId, active: true }));
    this.rowErrors.delete(parentId);
    this.requestUpdate();
    void this.rereadChild(workflowId);
  }

  /** Re-reads one child workflow the modal saved, instead of the whole list. */
  private async rereadChild(childId: string): Promise<void> {
    const parentId = [...this.installed].find(([, row]) => row.childId === childId)?.[0];
    try {
      const child = await this.connection().client.getWorkflow(childId);
      if (!this.installed.get(child.parentId)?.busy) this.installed.set(child.parentId, installedFrom(child));
    } catch (error) {
      const message = this.report(error, 'load-failed');
      if (parentId) this.rowErrors.set(parentId, this.text.refreshFailed(message));
    }
    this.requestUpdate();
  }

  private async handleRetry(): Promise<void> {
    await this.refresh();
    // The retry button is gone once the list shows; keep keyboard users where the content is.
    if (this.loadTask.status === TaskStatus.COMPLETE) {
      this.renderRoot.querySelector<HTMLElement>('[data-landing]')?.focus();
    }
  }

  /** Loads the workflows and the user's choices again; resolves once they are shown. */
  async refresh(): Promise<void> {
    await this.loadTask.run();
    await this.updateComplete;
  }

  private renderSkeleton() {
    return html`<div class="skeleton" part="skeleton" aria-hidden="true">
      ${[0, 1, 2].map(
        () => html`<div class="row">
          <span class="bone tile"></span>
          <span class="text"><span class="bone line"></span><span class="bone line short"></span></span>
          <span class="bone pill"></span>
        </div>`,
      )}
    </div>`;
  }

  private renderError(error: unknown, retrying: boolean) {
    const message = error instanceof Error ? error.message : String(error);
    return html`<div class="message" part="error">
      <div role="alert">
        <p class="message-title">${this.text.loadFailed}</p>
        <p class="muted">${message}</p>
      </div>
      <button
        type="button"
        class="button"
        part="retry-button"
        aria-disabled=${retrying ? 'true' : 'false'}
        @click=${() => retrying || this.handleRetry()}
      >
        ${this.text.retry}
      </button>
    </div>`;
  }

  private renderRow(offer: Offer) {
    const row = this.installed.get(offer.id);
    const error = this.rowErrors.get(offer.id);
    return html`<li class="row" part="row">
      <span class="icons" part="icons">
        ${offer.icons.map(({ name, url }) =>
          url
            ? html`<img class="icon" src=${url} alt=${name} title=${name} width="28" height="28" loading="lazy" />`
            : html`<span class="icon letter" role="img" aria-label=${name} title=${name}>${name.charAt(0)}</span>`,
        )}
      </span>
      <span class="text">
        <span class="name" part="name">${offer.name}</span>
        ${offer.description ? html`<span class="description" part="description">${offer.description}</span>` : nothing}
        ${error ? html`<span class="error-text" part="row-error" role="alert">${error}</span>` : nothing}
      </span>
      <span class="actions">
        ${
          row
            ? html`<input
                type="checkbox"
                role="switch"
                class="switch"
                part="switch"
                aria-label=${offer.name}
                .checked=${live(row.wanted)}
                @change=${(event: Event) => this.handleToggle(offer.id, event)}
              />`
            : nothing
        }
        <button
          type="button"
          class=${row ? 'button' : 'button enable'}
          part=${row ? 'button configure-button' : 'button enable-button'}
          @click=${() => this.openModal(offer.id)}
        >
          ${row ? this.text.configure : this.text.enable}<span class="visually-hidden"> ${offer.name}</span>
        </button>
      </span>
    </li>`;
  }

  private renderOffers(offers: Offer[], shown: Offer[], busy: boolean) {
    if (offers.length === 0) {
      return html`<div class="message" part="empty">
        <p class="message-title" tabindex="-1" data-landing>${this.text.empty}</p>
        <p class="muted">${this.text.emptyHint}</p>
      </div>`;
    }
    return html`
      ${
        offers.length > this.filterThreshold
          ? html`<input
              type="search"
              class="filter"
              part="filter"
              aria-label=${this.text.filterLabel}
              placeholder=${this.text.filterLabel}
              .value=${live(this.filterText)}
              @input=${(event: Event) => {
                this.filterText = (event.target as HTMLInputElement).value;
              }}
            />`
          : nothing
      }
      ${
        shown.length > 0
          ? html`<ul class="list" part="list" aria-label=${this.text.listLabel} aria-busy=${busy} tabindex="-1" data-landing>
              ${shown.map((offer) => this.renderRow(offer))}
            </ul>`
          : html`<p class="message muted">${this.text.noMatches(this.filterText.trim())}</p>`
      }
    `;
  }

  override render() {
    const { status, value, error } = this.loadTask;
    const offers = value?.offers;
    const pending = status === TaskStatus.PENDING;
    // A reload after a failure keeps the failure (and its retry button) on screen until it
    // answers, rather than flashing the skeleton.
    const failed = status === TaskStatus.ERROR || (pending && !offers && error !== undefined);
    // Only a filter box on screen filters: a list that shrank below the threshold shows all.
    const needle = offers && offers.length > this.filterThreshold ? this.filterText.trim().toLowerCase() : '';
    const shown = offers && needle ? offers.filter((offer) => offer.haystack.includes(needle)) : offers;
    const announcement =
      !offers && !failed
        ? this.text.loading
        : offers && shown && needle
          ? this.text.matchCount(shown.length, offers.length)
          : '';
    return html`<div class="base" part="base">
        <p class="visually-hidden" role="status">${announcement}</p>
        ${
          failed
            ? this.renderError(error, pending)
            : offers && shown
              ? this.renderOffers(offers, shown, pending)
              : this.renderSkeleton()
        }
      </div>
      ${
        this.modalFor
          ? html`<forge-config-modal
              api-base=${this.apiBase}
              token-url=${ifDefined(this.tokenUrl || undefined)}
              .tokenProvider=${this.tokenProvider}
              workflow-id=${this.modalFor}
              theme=${ifDefined(this.theme)}
              .strings=${this.modalStrings}
              @forge-install=${this.handleInstall}
              @forge-update=${(event: ForgeEvent<'forge-update'>) => this.rereadChild(event.detail.workflowId)}
            ></forge-config-modal>`
          : nothing
      }`;
  }
}
