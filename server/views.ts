import type {
  Block,
  ChildWorkflow,
  ChildWorkflowSummary,
  HostSettings,
  Integration,
  ParentWorkflow,
  SetVariablesResponse,
  User,
  UserWithWorkflows,
  VariableValues,
  WorkflowSummaries,
} from 'forge-embed/client';
import { type CatalogBlock, type CatalogWorkflow, currentValue, type IntegrationAbout } from './catalog/catalog.js';
import { errorWebhookSecret, type StoredHostSettings } from './engine/host-settings.js';
import type { SecretBox } from './secrets.js';
import type { ChildRow, Store, StoredExecution } from './store/store.js';

/**
 * The one place where stored rows and catalog entries become the response shapes of the
 * service interface (their schemas are in schemas.ts). Relative icon paths become absolute URLs
 * on the origin the caller used.
 */

export const API_PREFIX = '/forge/2021-12';
/** Where the local OAuth provider's consent pages live, beside the API. */
export const LOCAL_PROVIDER_PREFIX = '/local-oauth';

export function iconUrl(icon: string, base: string): string {
  return /^(https?:|data:)/.test(icon) ? icon : `${base}${API_PREFIX}/icons/${icon.replace(/^\.?\/?(icons\/)?/, '')}`;
}

function integrationView(integration: Integration, base: string): Integration {
  return { ...integration, icon: iconUrl(integration.icon, base) };
}

/** A block as the listing shows it: the catalog's internal `integration` link is not part of it. */
function blockView(block: CatalogBlock, values?: VariableValues): Block {
  const { integration: _link, ...rest } = block;
  if (block.type !== 'variables' || !block.parameters.variables) return rest;
  return {
    ...rest,
    parameters: {
      ...block.parameters,
      // How a source's choices are read (the app's URL, the answer's paths) stays on the service:
      // the elements need only to know that there are choices to ask for.
      variables: block.parameters.variables.map(({ source, ...variable }) => ({
        ...variable,
        ...(source ? { source: { integration: source.integration } } : {}),
        value: currentValue(variable, values),
      })),
    },
  };
}

export function parentView(workflow: CatalogWorkflow, base: string): ParentWorkflow {
  return {
    workflowId: workflow.workflowId,
    name: workflow.name,
    ...(workflow.description ? { description: workflow.description } : {}),
    integrations: workflow.integrations.map((i) => integrationView(i, base)),
    blocks: workflow.blocks.map((b) => blockView(b)),
  };
}

/**
 * Parents as the lists show them: each integration once, by name in the workflows (see GET
 * /workflow-summary), as GET /workflow has it plus what the catalog tells `about` it.
 */
export function workflowSummariesView(
  workflows: CatalogWorkflow[],
  base: string,
  about: ReadonlyMap<string, IntegrationAbout>,
): WorkflowSummaries {
  const integrations = new Map<string, WorkflowSummaries['integrations'][number]>();
  const summaries = workflows.map((workflow) => {
    for (const integration of workflow.integrations) {
      const { name } = integration;
      if (!integrations.has(name))
        integrations.set(name, { ...integrationView(integration, base), ...about.get(name) });
    }
    return {
      workflowId: workflow.workflowId,
      name: workflow.name,
      ...(workflow.description ? { description: workflow.description } : {}),
      integrations: workflow.integrations.map((i) => i.name),
      blocks: workflow.blocks.map(({ id, name }) => ({ id, name })),
    };
  });
  return { workflows: summaries, integrations: [...integrations.values()] };
}

/** A child whose parent left the catalog still answers, with what is known of it. */
export function parentOf(child: ChildRow, find: (id: string) => CatalogWorkflow | undefined): CatalogWorkflow {
  return (
    find(child.parentId) ?? {
      workflowId: child.parentId,
      name: 'Removed workflow',
      active: false,
      integrations: [],
      blocks: [],
    }
  );
}

export function childSummaryView(child: ChildRow, parent: CatalogWorkflow, base: string): ChildWorkflowSummary {
  return {
    _id: child.id,
    parentId: child.parentId,
    name: parent.name,
    active: child.active,
    blocks: parent.blocks.map((block) => {
      const integration = parent.integrations.find((i) => i.name === block.integration);
      return {
        icon: iconUrl(integration?.icon ?? `blocks/${block.type}.svg`, base),
        displayName: block.name,
        name: block.type,
      };
    }),
  };
}

/**
 * A child workflow in full. `webhookUrl` only for the host's backend (`withWebhookUrl`): the URL
 * is the only credential of the webhook sender, so it never reaches a page.
 */
export const webhookUrl = (token: string, base: string) => `${base}${API_PREFIX}/hooks/${token}`;

export function childView(
  child: ChildRow,
  parent: CatalogWorkflow,
  base: string,
  { withWebhookUrl = false }: { withWebhookUrl?: boolean } = {},
): ChildWorkflow {
  const hasWebhook = withWebhookUrl && parent.blocks.some((b) => b.type === 'webhook');
  return {
    _id: child.id,
    parentId: child.parentId,
    userId: child.userId,
    name: parent.name,
    ...(parent.description ? { description: parent.description } : {}),
    active: child.active,
    integrations: parent.integrations.map((i) => integrationView(i, base)),
    blocks: parent.blocks.map((b) => blockView(b, child.variables[b.id])),
    ...(hasWebhook ? { webhookUrl: webhookUrl(child.webhookToken, base) } : {}),
    createdAt: child.createdAt,
    updatedAt: child.updatedAt,
  };
}

export function userView(user: User, workflows: ChildWorkflowSummary[]): UserWithWorkflows {
  return { _id: user._id, fullName: user.fullName, email: user.email, workflows };
}

/** A variable block's values after a change: every variable it defines, set or default. */
export function blockValuesView(block: CatalogBlock, values: VariableValues): SetVariablesResponse {
  return {
    blockId: block.id,
    variables: (block.parameters.variables ?? []).map((v) => ({
      uuid: v.uuid,
      name: v.name,
      value: currentValue(v, values),
    })),
  };
}

/**
 * The host settings as GET /settings shows them: the event bus's keys only as whether there are
 * any; the secret that signs error deliveries so the host can verify them.
 */
export async function hostSettingsView(
  settings: StoredHostSettings,
  store: Store,
  secrets: SecretBox,
): Promise<HostSettings> {
  const { sealedKeys, ...bus } = settings.eventBus;
  return {
    errorWebhookUrl: settings.errorWebhookUrl,
    errorWebhookSecret: await errorWebhookSecret(store, secrets),
    eventBus: { ...bus, hasAccessKeys: sealedKeys !== null },
    deliveries: {
      webhook: await store.deliveries.backlog('webhook'),
      eventBus: await store.deliveries.backlog('eventBus'),
    },
  };
}

/**
 * GET logs' answer, `{"data": [entries]}`, as JSON text. Each entry's results are spliced in as
 * the store keeps them (JSON text, written by JSON.stringify): parsing them only to write them
 * out again took about a fifth of the request's CPU. The fields are in the order the entries
 * always had.
 */
export function executionLogBody(executions: StoredExecution[]): string {
  const entries = executions.map(
    (e) =>
      `{"executionId":${JSON.stringify(e.executionId)},"startedAt":${JSON.stringify(e.startedAt)},"stoppedAt":${JSON.stringify(e.stoppedAt)},"finished":${e.finished},"results":${e.resultsJson}}`,
  );
  return `{"data":[${entries.join(',')}]}`;
}
