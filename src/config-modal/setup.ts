import type { CallOptions, ForgeClient } from '../api/client.js';
import type { ChildWorkflow, Integration, ParentWorkflow, VariableValue } from '../api/types.js';
import type { TokenSource } from '../token/token-source.js';

/** A workflow the modal sets up: the parent template and, when the user has one, their child. */
export interface SetupWorkflow {
  parent: ParentWorkflow;
  child?: ChildWorkflow;
}

/** Everything the modal needs to know when it opens, read fresh on every open. */
export interface Setup {
  /** Set when the modal was opened for an integration rather than one workflow. */
  integration?: Integration;
  workflows: SetupWorkflow[];
  /** Names of the integrations the user has connected. */
  connected: Set<string>;
}

export type SetupTarget = { workflowId: string } | { integration: string };

/** The modal's steps, in order; `choose` only in the integration view. */
export type Step = 'choose' | 'connect' | 'configure' | 'done';

/** What this open does: enable a new workflow, edit the user's copy, or pick among an integration's. */
export type Mode = 'install' | 'edit' | 'integration';

/** The user's copy of a parent workflow, as far as this open knows it. */
export interface Installed {
  workflowId: string;
  active: boolean;
  /** The values the service holds, by field key: what a save compares against. */
  saved: Map<string, VariableValue>;
}

/** Where a required parameter's typed value is kept until it is stored. */
export const parameterKey = (integration: string, name: string) => `${integration}\n${name}`;

export const selectedWorkflows = (setup: Setup, selected: ReadonlySet<string>) =>
  setup.workflows.filter((w) => selected.has(w.parent.workflowId));

/** The parent workflow named by `workflow-id` is not (or no longer) offered by the host. */
export class WorkflowNotOfferedError extends Error {
  override readonly name = 'WorkflowNotOfferedError';
  constructor(readonly workflowId: string) {
    super(`No workflow ${workflowId} is on offer; check the workflow-id attribute.`);
  }
}

/** Whether the user must connect an account before a workflow using `integration` can run. */
export function needsCredential(integration: Integration): boolean {
  return integration.type === 'oauth2' || (integration.requiredParameters?.length ?? 0) > 0;
}

/** The integrations of `workflows` that need an account, each once, in order of appearance. */
export function integrationsToConnect(workflows: readonly SetupWorkflow[]): Integration[] {
  const seen = new Map<string, Integration>();
  for (const { parent } of workflows) {
    for (const integration of parent.integrations) {
      if (needsCredential(integration) && !seen.has(integration.name)) seen.set(integration.name, integration);
    }
  }
  return [...seen.values()];
}

/**
 * Reads the setup for one open: a fresh user token first (the service wants one per display
 * of the modal), then the offer, the user's workflows and connections in parallel, then the
 * user's copies of the workflows on offer.
 */
export async function loadSetup(
  client: ForgeClient,
  tokens: TokenSource,
  target: SetupTarget,
  signal: AbortSignal,
): Promise<Setup> {
  const { userId } = await tokens.fresh();
  signal.throwIfAborted();
  const options: CallOptions = { signal };
  const [parents, user, credentials] = await Promise.all([
    'workflowId' in target ? client.listWorkflows({}, options) : client.listWorkflows(target, options),
    client.getUser(userId, options),
    client.listCredentials(options),
  ]);
  let offered = parents;
  if ('workflowId' in target) {
    offered = parents.filter((parent) => parent.workflowId === target.workflowId);
    if (offered.length === 0) throw new WorkflowNotOfferedError(target.workflowId);
  }
  const workflows = await Promise.all(
    offered.map(async (parent): Promise<SetupWorkflow> => {
      const summary = user.workflows.find((child) => child.parentId === parent.workflowId);
      return summary ? { parent, child: await client.getWorkflow(summary._id, options) } : { parent };
    }),
  );
  const setup: Setup = { workflows, connected: new Set(credentials.map((c) => c.integration)) };
  if ('integration' in target) {
    setup.integration = parents
      .flatMap((parent) => parent.integrations)
      .find((integration) => integration.name === target.integration) ?? {
      name: target.integration,
      displayName: target.integration,
      icon: '',
      type: '',
    };
  }
  return setup;
}
