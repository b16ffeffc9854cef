import { Type } from '@sinclair/typebox';
import type { WorkflowHealth } from 'forge-embed/client';
import { WorkflowHealthSchema } from '../schemas.js';
import type { RoutePlugin } from './context.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The run health of all of the token user's workflows in one read, for `<forge-workflow-list>`:
 * it replaces the list's `GET /user/:userId` (it carries each child's id, parent and switch
 * too), so opening the list stays one round trip after the token, and refreshing it is one
 * request however many workflows the user has. A run that failed for its connection says so
 * until the next run, but once the user has connected that app again the failure carries
 * `reconnectedAt`, and the list stops offering "Reconnect" from that moment (issue 24, item 3).
 */
const health: RoutePlugin = async (api, { store, catalog, engine }) => {
  api.get(
    '/workflow-health',
    {
      config: { access: 'user' },
      schema: {
        summary: 'The run health of each of the token user’s child workflows',
        description:
          'Last run, its outcome, why it failed, failures in the last 24 hours and the next scheduled run, for every child workflow of the token’s user.',
        tags: ['embed'],
        response: { 200: Type.Object({ workflows: Type.Array(WorkflowHealthSchema) }) },
      },
    },
    async (request) => {
      const { userId } = request.principal;
      const now = new Date();
      const rows = await store.logs.listHealth(userId, new Date(now.getTime() - DAY_MS).toISOString());
      // Read only when a run failed for its connection: then whether the user has connected again since.
      const connections = rows.some((row) => row.failure?.kind === 'connection')
        ? new Map((await store.credentials.list(userId)).map((c) => [c.integration, c]))
        : undefined;
      const workflows: WorkflowHealth[] = rows.map((row) => {
        const block = row.failure && catalog.get(row.parentId)?.blocks.find((b) => b.id === row.failure!.blockId);
        const next = row.active ? engine.nextScheduledRun(row.parentId, now) : undefined;
        const integration = block?.integration ?? null;
        let failure: WorkflowHealth['failure'] = row.failure && { ...row.failure, integration };
        const connection = integration ? connections?.get(integration) : undefined;
        if (
          failure?.kind === 'connection' &&
          connection?.status === 'connected' &&
          connection.connectedAt > failure.createdAt
        ) {
          failure = { ...failure, reconnectedAt: connection.connectedAt };
        }
        return { ...row, failure, nextRunAt: next?.toISOString() ?? null };
      });
      return { workflows };
    },
  );
};

export default health;
