import type { Integration, ParentWorkflow, Setup, UserConnection, VariableValue } from '../api/types.js';
import { settingFields, valueIn } from './settings.js';

/** The steps, in order; `choose` only in the integration view. */
export type Step = 'choose' | 'connect' | 'configure' | 'done';

/** Enable a new workflow, edit the user's copy, or pick among an integration's. */
export type Mode = 'install' | 'edit' | 'integration';

/** Where focus goes after the next render: into the step, to its main button, or to the first invalid field. */
export type FocusTarget = 'body' | 'primary' | 'invalid';

/** The user's copy of a parent workflow, as far as this open knows it. */
export interface Installed {
  workflowId: string;
  active: boolean;
}

/**
 * What one open loaded: the load Task's value. Saves and connects record what the service
 * confirmed in it as they go, so a retry repeats only what did not go through.
 */
export interface Loaded {
  /** Set when the modal was opened for an integration rather than one workflow. */
  integration?: Integration | undefined;
  /** The parent workflows on offer: the one of `workflow-id`, or the integration's. */
  workflows: ParentWorkflow[];
  mode: Mode;
  /** The user's copies by parent id. */
  installed: Map<string, Installed>;
  /** The values the service holds, by field key: what a save compares against. */
  saved: Map<string, VariableValue>;
  /** Names of the integrations the user has connected and the app still accepts: what a run can use. */
  connected: Set<string>;
  /** Every connection the service holds for the user, broken ones too, by integration name. */
  connections: Map<string, UserConnection>;
}

/** `connected` and `connections` of the user's connections as the service lists them. */
export const connectionsFrom = (list: UserConnection[]): Pick<Loaded, 'connected' | 'connections'> => ({
  connected: new Set(list.filter((c) => c.status !== 'broken').map((c) => c.integration)),
  connections: new Map(list.map((c) => [c.integration, c])),
});

/** What the user sees and has done in this open; it changes only through the element's one setter. */
export interface View {
  step: Step;
  /** Parent ids of the workflows switched on (always the one workflow outside the integration view). */
  selected: Set<string>;
  /** What the user typed, by field key or `parameterKey` (parameters are dropped once stored). */
  values: Map<string, string>;
  /** Errors by field key or `parameterKey`, and an integration's failed connection by its name. */
  errors: Map<string, string>;
  /** A problem with the whole step (a failed save, or a step left unfinished). */
  message?: string | undefined;
  /** The failure behind `message`, for developers: shown under "Technical details". */
  technical?: string | undefined;
  /** Connected required-parameter integrations whose form is open again. */
  reopened: Set<string>;
  /** The integration the latest connect or disconnect run is for. */
  connecting?: string | undefined;
  /**
   * A note in one integration's row, `[name, text]`: the latest disconnect failed or the app was
   * not told of it, or the user canceled a connect while its sign-in window was open.
   */
  rowNote?: [string, string] | undefined;
}

/** Nothing typed, nothing chosen: where every open starts, and what a close leaves (no secrets kept). */
export const emptyView = (): View => ({
  step: 'configure',
  selected: new Set(),
  values: new Map(),
  errors: new Map(),
  reopened: new Set(),
});

/** Where a required parameter's typed value is kept until it is stored (a field's key has two line breaks). */
export const parameterKey = (integration: string, name: string) => `${integration}\n${name}`;

/** Reads `GET /setup`'s answer into an open: `workflowId` is set outside the integration view. */
export function loadedFrom(
  { workflows, installed, credentials }: Setup,
  { workflowId, integration }: { workflowId: string; integration: string },
): Loaded {
  const copies = new Map<string, Installed>();
  const saved = new Map<string, VariableValue>();
  for (const parent of workflows) {
    const child = installed.find((copy) => copy.parentId === parent.workflowId);
    if (!child) continue;
    copies.set(parent.workflowId, { workflowId: child._id, active: child.active });
    for (const field of settingFields(parent)) {
      const value = valueIn(child.blocks, field);
      if (value !== undefined) saved.set(field.key, value);
    }
  }
  return {
    workflows,
    integration: workflowId
      ? undefined
      : (workflows.flatMap((parent) => parent.integrations).find((i) => i.name === integration) ?? {
          name: integration,
          displayName: integration,
          icon: '',
          type: '',
        }),
    mode: workflowId ? (installed[0] ? 'edit' : 'install') : 'integration',
    installed: copies,
    saved,
    ...connectionsFrom(credentials),
  };
}

/** The view an open starts with: the user's values where they have the workflow, else the defaults. */
export function openingView(loaded: Loaded): View {
  const values = new Map<string, string>();
  for (const parent of loaded.workflows) {
    for (const field of settingFields(parent)) {
      values.set(field.key, String(loaded.saved.get(field.key) ?? valueIn(parent.blocks, field) ?? ''));
    }
  }
  const selected = new Set(
    loaded.workflows
      .filter((parent) => loaded.mode !== 'integration' || loaded.installed.get(parent.workflowId)?.active)
      .map((parent) => parent.workflowId),
  );
  const view = { ...emptyView(), values, selected };
  return { ...view, step: loaded.integration ? 'choose' : stepAfterChoosing(loaded, view) };
}

export const chosen = (loaded: Loaded, { selected }: Pick<View, 'selected'>): ParentWorkflow[] =>
  loaded.workflows.filter((parent) => selected.has(parent.workflowId));

/** The integrations of the chosen workflows that need an account, each once, in order of appearance. */
export function toConnect(loaded: Loaded, view: Pick<View, 'selected'>): Integration[] {
  const integrations = chosen(loaded, view)
    .flatMap((parent) => parent.integrations)
    .filter((i) => i.type === 'oauth2' || i.requiredParameters?.length);
  return [...new Map(integrations.map((i) => [i.name, i])).values()];
}

export const missing = (loaded: Loaded, view: Pick<View, 'selected'>): Integration[] =>
  toConnect(loaded, view).filter((i) => !loaded.connected.has(i.name));

/** Straight to the settings when every account is already connected; Back still reaches the accounts. */
export const stepAfterChoosing = (loaded: Loaded, view: Pick<View, 'selected'>): Step =>
  missing(loaded, view)[0] ? 'connect' : 'configure';

/** The steps of this open, for the step list and Back. */
export function stepsOf(loaded: Loaded, view: Pick<View, 'selected'>): Step[] {
  const steps: Step[] = loaded.integration ? ['choose'] : [];
  if (toConnect(loaded, view)[0]) steps.push('connect');
  return [...steps, 'configure'];
}
