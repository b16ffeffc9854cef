import type { IntegrationSummary, UserConnection, WorkflowHealth, WorkflowSummaries } from '../api/types.js';

/** An app on offer, prepared once per load so each render stays cheap. */
export interface App {
  integration: IntegrationSummary;
  /** Lower-case text the search box looks in (name, description, category), made when it first searches. */
  haystack?: string;
}

/** What one load holds: the apps the host's workflows use, and which workflows use each. */
export interface Apps {
  apps: App[];
  /** The categories of the apps, each once, sorted. */
  categories: string[];
  /** Each parent workflow on offer by id: its name and the names of the apps it uses. */
  parents: ReadonlyMap<string, { name: string; integrations: string[] }>;
}

export const appsFrom = ({ workflows, integrations }: WorkflowSummaries): Apps => ({
  apps: integrations.map((integration) => ({ integration })),
  categories: [...new Set(integrations.flatMap((i) => (i.category ? [i.category] : [])))].sort(),
  parents: new Map(workflows.map(({ workflowId, name, integrations }) => [workflowId, { name, integrations }])),
});

/** Whether an app holds the search's lower-case `needle` and is in `category` (every one when empty). */
export function matches(app: App, needle: string, category: string): boolean {
  const { displayName, description = '', category: its = '' } = app.integration;
  if (category && its !== category) return false;
  app.haystack ??= `${displayName}\n${description}\n${its}`.toLowerCase();
  return app.haystack.includes(needle);
}

/** Whether connecting the app means an account of the user's (OAuth, or values the user types). */
export const needsAccount = ({ type, requiredParameters }: IntegrationSummary) =>
  type === 'oauth2' || !!requiredParameters?.[0];

/** The names of the user's switched-on workflows that use each app, by the app's name. */
export function workflowsOnByApp(children: readonly WorkflowHealth[], parents: Apps['parents']): Map<string, string[]> {
  const on = new Map<string, string[]>();
  for (const { parentId, active } of children) {
    const parent = active && parents.get(parentId);
    if (!parent) continue;
    for (const app of parent.integrations) on.set(app, [...(on.get(app) ?? []), parent.name]);
  }
  return on;
}

/**
 * What the grid shows beyond the load: it changes only through the element's one setter, which
 * re-renders; each change replaces the collections it changes.
 */
export interface AppsView {
  search: string;
  category: string;
  /** The user's connections by app name. */
  connections: ReadonlyMap<string, UserConnection>;
  /** The user's child workflows and whether each is on. */
  children: readonly WorkflowHealth[];
  /** The app a connect or disconnect is under way for. */
  busy: string;
  /** The app whose required-parameters form is open. */
  formFor: string;
  /** What the user typed in that form, by parameter name; dropped once stored. */
  values: ReadonlyMap<string, string>;
  /** The form's field errors, by parameter name. */
  fieldErrors: ReadonlyMap<string, string>;
  /** Why an app's last action failed, by app name. */
  appErrors: ReadonlyMap<string, string>;
  /** The app the modal is (or was last) open for. */
  modalFor: string;
}

export const emptyAppsView = (): AppsView => ({
  search: '',
  category: '',
  connections: new Map(),
  children: [],
  busy: '',
  formFor: '',
  values: new Map(),
  fieldErrors: new Map(),
  appErrors: new Map(),
  modalFor: '',
});

export const connectionsFrom = (list: UserConnection[]): Map<string, UserConnection> =>
  new Map(list.map((c) => [c.integration, c]));
