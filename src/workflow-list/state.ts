import type { IntegrationSummary, WorkflowHealth, WorkflowSummaries, WorkflowSummary } from '../api/types.js';
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
