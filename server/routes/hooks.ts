import { Type } from '@sinclair/typebox';
import { badRequest, HttpProblem, notFound, rateLimited } from '../http.js';
import { RateLimitedResponse } from '../schemas.js';
import { isPlainObject } from '../validate.js';
import type { RoutePlugin } from './context.js';

/**
 * The webhook of each child workflow whose parent starts on a webhook block. The unguessable
 * token in the path is the only credential (webhook senders cannot hold a user token), so the
 * route is public. The run is synchronous: the answer carries the execution's id and whether
 * it finished; a failed run is still a 200 (the webhook was taken), its error is in the logs.
 */
const hooks: RoutePlugin = async (api, { engine, limits }) => {
  api.post(
    '/hooks/:token',
    {
      config: { access: 'public' },
      schema: {
        summary: 'Start a child workflow from its webhook',
        description:
          'The token in the path is the webhook’s only credential: the webhookUrl of GET /workflow/{workflowId} (read with the API key).',
        tags: ['workflows'],
        params: Type.Object({ token: Type.String() }),
        body: Type.Unknown({ description: 'Any JSON object (or nothing); it becomes the trigger block’s output.' }),
        response: {
          200: Type.Object({ executionId: Type.String(), finished: Type.Boolean() }),
          429: RateLimitedResponse('calls of this workflow’s webhook'),
        },
      },
    },
    async (request) => {
      const target = await engine.webhookTarget(request.params.token);
      if ('refused' in target) throw refusal(target.refused);
      rateLimited(await limits.hit('webhook', target.child.id), 'This workflow’s webhook was called too often.');
      const payload = request.body ?? {};
      if (!isPlainObject(payload)) {
        throw badRequest(
          'A webhook body must be a JSON object (or empty); it becomes the output of the trigger block.',
        );
      }
      const { execution } = await engine.run(target.child, { kind: 'webhook', body: payload });
      return { executionId: execution.executionId, finished: execution.finished };
    },
  );
};

export default hooks;

function refusal(reason: 'unknown' | 'inactive' | 'no-webhook' | 'parent-removed'): HttpProblem {
  switch (reason) {
    case 'inactive':
      return new HttpProblem(
        409,
        'workflow-inactive',
        'Workflow inactive',
        'This workflow is switched off, so its webhook starts nothing. Switch it on (PUT /workflow/:workflowId/activate) and send again.',
      );
    case 'parent-removed':
      return new HttpProblem(
        410,
        'workflow-removed',
        'Workflow removed',
        'The workflow this webhook belongs to was taken out of the catalog and no longer runs.',
      );
    case 'no-webhook':
      return notFound('This workflow starts on a schedule, not a webhook; there is nothing to POST to.');
    case 'unknown':
      return notFound(
        'No webhook at this address. A workflow’s webhook URL is the webhookUrl of GET /workflow/:workflowId read with the API key; it stops working when it is rotated, or the workflow or its user is deleted.',
      );
  }
}
