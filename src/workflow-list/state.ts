import type { IntegrationSummary, WorkflowHealth, WorkflowSummaries, WorkflowSummary } from '../api/types.js';
import type { Plural } from '../internal/plural.js';
import type { RunDetails } from './run-details.js';
import type { WorkflowListStrings } from './strings.js';
import type { Switch } from './switch-queue.js';

/** A parent workflow as its row shows it, prepared once per load so each render stays cheap. */
export interface Offer {
  parent: WorkflowSummary;
  /** Lower-case text the filter box searches (name, description, integration names), made when it first searches. */
  haystack?: string;
}

/** The user's child workflow behind a row, and where its switch stands. */
export interface Installed extends Switch {
  childId: string;
  /** How its runs went, as the service last said. */
  health: WorkflowHealth;
}

export const installedFrom = (health: WorkflowHealth): Installed => ({
  childId: health.workflowId,
  active: health.active,
  wanted: health.active,
  health,
});

/** A workflow the user just enabled, until the service says more: on, and never ran. */
export const justInstalled = (workflowId: string, parentId: string): WorkflowHealth => ({
  workflowId,
  parentId,
  active: true,
  lastRun: null,
  failedLast24h: 0,
  failure: null,
  nextRunAt: null,
});

/**
 * The rows of a load. Nothing is computed per row until it is needed: a long list renders a few
 * of its rows (icon URLs are checked as rows render) and most lists are never filtered.
 */
export const listingFrom = ({ workflows, integrations }: WorkflowSummaries): Listing => ({
  offers: workflows.map((parent) => ({ parent })),
  integrations: new Map(integrations.map((integration) => [integration.name, integration])),
});

/** A load's rows, and the integrations they use by name (the service describes every one a row names). */
export interface Listing {
  offers: Offer[];
  integrations: ReadonlyMap<string, IntegrationSummary>;
}

/** Whether a row holds the filter's lower-case `needle`; an empty one holds everywhere. */
export const matches = (offer: Offer, needle: string, integrations: Listing['integrations']): boolean => {
  const { name, description, integrations: names } = offer.parent;
  offer.haystack ??= [name, description, ...names.map((n) => integrations.get(n)!.displayName)]
    .join('\n')
    .toLowerCase();
  return offer.haystack.includes(needle);
};

/**
 * What the list shows beyond the load: it changes only through the element's one setter, which
 * re-renders. Each change replaces the collections it changes rather than editing them. The
 * rows in `installed` are the exception the switch queue needs: it moves a row's switch in
 * place while its requests run (switch-queue.ts), and the setter re-renders after each move.
 */
export interface ListView {
  /** What the filter box holds. */
  filter: string;
  /** The parent workflow the modal is (or was last) open for. */
  modalFor: string;
  /** The integration the modal asks the user to connect again, if that is why it opened. */
  modalReconnect: string;
  /** The user's child workflows by parent id. */
  installed: ReadonlyMap<string, Installed>;
  /** Why a row's last action failed, by parent id. */
  rowErrors: ReadonlyMap<string, string>;
  /** Parent ids whose details view is open, and each one's view once its module loaded. */
  expanded: ReadonlySet<string>;
  details: ReadonlyMap<string, RunDetails>;
  /** Why the last refresh of the runs' health failed. */
  refreshError: string;
}

/** Nothing loaded, nothing open: where the list starts. */
export const emptyListView = (): ListView => ({
  filter: '',
  modalFor: '',
  modalReconnect: '',
  installed: new Map(),
  rowErrors: new Map(),
  expanded: new Set(),
  details: new Map(),
  refreshError: '',
});

/** A copy of `from` without `key`. */
export function without<K>(from: ReadonlySet<K>, key: K): Set<K>;
export function without<K, V>(from: ReadonlyMap<K, V>, key: K): Map<K, V>;
export function without<K, V>(from: ReadonlySet<K> | ReadonlyMap<K, V>, key: K): Set<K> | Map<K, V> {
  const copy = from instanceof Map ? new Map(from) : new Set(from as ReadonlySet<K>);
  copy.delete(key);
  return copy;
}

/** What the user can do in a row; the element answers each. */
export interface RowActions {
  toggle(parentId: string, row: Installed, event: Event): void;
  openModal(parentId: string, reconnect?: string): void;
  toggleDetails(parentId: string, childId: string): void;
}

/** Everything a row reads: it renders from this alone. */
export interface RowContext extends Pick<ListView, 'installed' | 'rowErrors' | 'expanded' | 'details'> {
  t: WorkflowListStrings;
  locale: string;
  plural: Plural;
  /** The integrations of the load's rows by name, filtered or not: a failure names its app from them. */
  integrations: Listing['integrations'];
  actions: RowActions;
}
