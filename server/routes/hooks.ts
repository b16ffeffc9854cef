import { Type } from '@sinclair/typebox';
import { badRequest, HttpProblem, notFound, rateLimited } from '../http.js';
import { RateLimitedResponse } from '../schemas.js';
import { isPlainObject } from '../validate.js';
import type { RoutePlugin } from './context.js';

/** The longest `Prefer: wait` the service honours; a longer one waits this long. */
export const MAX_WAIT_SECONDS = 60;

/**
 * The webhook of each child workflow whose parent starts on a webhook block. The unguessable
 * token in the path is the only credential (webhook senders cannot hold a user token), so the
 * route is public. The call is accepted durably: its run is a job on the queue, stored before
 * the answer, which any instance runs (docs/executions.md). The answer is 202 with the execution
 * id the run will be stored under; a sender that sends `Prefer: wait=<seconds>` (RFC 7240) gets
 * 200 with whether it finished when the run is stored within that time (a failed run answers
 * `finished: false`: the call was taken, the error is in the logs). An `Idempotency-Key` makes a
 * repeat within 24 hours answer the first call's execution and start nothing.
 */
const hooks: RoutePlugin = async (api, { engine, limits }) => {
  api.post(
    '/hooks/:token',
    {
      config: { access: 'public' },
      schema: {
        summary: 'Start a child workflow from its webhook',
        description:
          'The token in the path is the webhook’s only credential: the webhookUrl of GET /workflow/{workflowId} (read with the API key). The call is stored, then run: 202 with the execution id. `Prefer: wait=<seconds>` (up to 60) waits for the run: 200 with `finished` when it is stored in time. `Idempotency-Key` (1–255 visible ASCII characters): a repeat within 24 hours answers the first execution id and starts nothing.',
        tags: ['workflows'],
        params: Type.Object({ token: Type.String() }),
        headers: Type.Object({
          prefer: Type.Optional(
            Type.String({ description: 'RFC 7240, e.g. `wait=10`: wait up to that many seconds for the run.' }),
          ),
          'idempotency-key': Type.Optional(
            Type.String({
              description: 'Any 1–255 visible ASCII characters; the same key within 24 hours starts nothing new.',
            }),
          ),
        }),
        body: Type.Unknown({ description: 'Any JSON object (or nothing); it becomes the trigger block’s output.' }),
        response: {
          200: Type.Object({ executionId: Type.String(), finished: Type.Boolean() }),
          202: Type.Object({ executionId: Type.String() }),
          429: RateLimitedResponse('calls of this workflow’s webhook'),
        },
      },
    },
    async (request, reply) => {
      // Bad headers first: a refused call stores nothing and counts against no limit.
      const waitSeconds = preferredWait(request.headers.prefer);
      const idempotencyKey = idempotencyKeyOf(request.headers['idempotency-key']);
      const target = await engine.webhookTarget(request.params.token);
      if ('refused' in target) throw refusal(target.refused);
      const payload = request.body ?? {};
      if (!isPlainObject(payload)) {
        throw badRequest(
          'A webhook body must be a JSON object (or empty); it becomes the output of the trigger block.',
        );
      }
      rateLimited(await limits.hit('webhook', target.child.id), 'This workflow’s webhook was called too often.');
      const { executionId, repeated, promisable } = await engine.acceptWebhook(
        target.child,
        payload,
        idempotencyKey,
        waitSeconds !== undefined,
      );
      if (repeated) reply.header('Idempotent-Replayed', 'true');
      if (waitSeconds !== undefined) {
        reply.header('Preference-Applied', `wait=${waitSeconds}`);
        // The stored run's commit was synchronous: what accepted the call is flushed with it.
        const stored = await engine.waitForExecution(executionId, waitSeconds * 1000);
        if (stored) return { executionId, finished: stored.finished };
      }
      // A 202 promises the run: the call's acceptance must be on disk first.
      await promisable();
      return reply.code(202).send({ executionId });
    },
  );
};

/**
 * The seconds of a `Prefer: wait=<seconds>` (RFC 7240), at most MAX_WAIT_SECONDS; undefined
 * without one. Other preferences are ignored, as the RFC asks; a wait that is not a whole number
 * of seconds, or a header that is not a list of preferences, is a 400 that names the header.
 */
export function preferredWait(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  let wait: number | undefined;
  for (const preference of (Array.isArray(header) ? header.join(',') : header).split(',')) {
    const [token = ''] = preference.split(';');
    if (preference.trim() === '') continue;
    const match = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*(?:=\s*("[^"]*"|[^\s"]*))?\s*$/.exec(token);
    if (!match) throw badPrefer(`"${preference.trim()}" is not a preference (a token, or token=value).`);
    if (match[1]!.toLowerCase() !== 'wait') continue;
    const value = (match[2] ?? '').replace(/^"|"$/g, '');
    if (!/^\d{1,9}$/.test(value))
      throw badPrefer(`wait must be a whole number of seconds, as in "Prefer: wait=10"; got "${value}".`);
    wait = Math.min(Number(value), MAX_WAIT_SECONDS);
  }
  return wait;
}

const badPrefer = (why: string) =>
  badRequest(`The Prefer header is malformed: ${why}`, [{ path: 'headers.prefer', message: why }]);

/** The `Idempotency-Key` header: 1 to 255 visible ASCII characters; anything else is a 400 naming it. */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const key = Array.isArray(header) ? header.join(',') : header;
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
    const why = 'it must be 1 to 255 visible ASCII characters (no spaces), e.g. a UUID, sent once per header.';
    throw badRequest(`The Idempotency-Key header is malformed: ${why}`, [
      { path: 'headers.idempotency-key', message: why },
    ]);
  }
  return key;
}

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
