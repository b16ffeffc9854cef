import type { ParentWorkflow, WorkflowHealth } from '../api/types.js';
import type { Switch } from './switch-queue.js';

/** A parent workflow as its row shows it, prepared once per load so each render stays cheap. */
export interface Offer {
  parent: ParentWorkflow;
  /** Lower-case text the filter box searches: name, description, integration names. */
  haystack: string;
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

/** The rows of a load. Icon URLs are checked as rows render: a long list renders a few of its rows. */
export const offersFrom = (parents: ParentWorkflow[]): Offer[] =>
  parents.map((parent) => {
    const words = [parent.name, parent.description, ...parent.integrations.map((i) => i.displayName)];
    return { parent, haystack: words.join('\n').toLowerCase() };
  });
