import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ErrorLogEntry, WorkflowHealth } from '../../src/api/types.js';
import {
  B,
  BALANCE,
  type Harness,
  newUser,
  PAYMENTS,
  REFUSE,
  sendWebhook,
  startHarness,
  TYPO,
} from './engine-support.js';

/**
 * GET /workflow-health: the run health of all of the token user's workflows in one read, and
 * the `kind` each error log entry is recorded with.
 */

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const GOOD_PAYMENT = { amount: 50, customer: { name: 'Ada' } };

async function healthOf(token: string): Promise<WorkflowHealth[]> {
  const { status, body } = await h.api<{ workflows: WorkflowHealth[] }>('GET', '/workflow-health', undefined, token);
  assert.equal(status, 200, JSON.stringify(body));
  return body.workflows;
}

const errorsOf = async (childId: string) =>
  (await h.api<{ errors: ErrorLogEntry[] }>('GET', `/workflow/${childId}/errors`)).body.errors;

test('a workflow that never ran has no last run; one on a schedule says when it runs next', async () => {
  const user = await newUser(h);
  const payments = await user.install(PAYMENTS);
  const balance = await user.install(BALANCE);
  const before = Date.now();
  const health = await healthOf(user.token);
  assert.deepEqual(
    health.map((w) => w.workflowId),
    [payments, balance],
  );
  const [hook, schedule] = health;
  assert.deepEqual(hook, {
    workflowId: payments,
    parentId: PAYMENTS,
    active: true,
    lastRun: null,
    failedLast24h: 0,
    failure: null,
    nextRunAt: null,
  });
  // Every quarter hour: the next one after now.
  const next = new Date(schedule!.nextRunAt!).getTime();
  assert.equal(new Date(next).getUTCMinutes() % 15, 0);
  assert.ok(next > before && next <= before + 15 * 60_000, schedule!.nextRunAt!);

  await h.api('PUT', `/workflow/${balance}/deactivate`, undefined, user.token);
  assert.equal((await healthOf(user.token))[1]!.nextRunAt, null, 'a switched-off workflow is not due');
});

test('a run the app refuses for the credential is a connection failure; after a reconnect the next run is healthy', async () => {
  const user = await newUser(h);
  const child = await user.install(PAYMENTS);
  const reconnect = (apiKey: string) => h.api('POST', '/credentials/crm', { apiKey }, user.token);
  assert.equal((await reconnect('revoked-key')).status, 200);

  const failed = await sendWebhook(h, child, GOOD_PAYMENT);
  assert.equal(failed.body.finished, false);
  const [entry] = await errorsOf(child);
  assert.equal(entry!.kind, 'connection');
  let [health] = await healthOf(user.token);
  assert.equal(health!.lastRun!.executionId, failed.body.executionId);
  assert.equal(health!.lastRun!.finished, false);
  assert.equal(health!.failedLast24h, 1);
  assert.deepEqual(health!.failure, {
    kind: 'connection',
    error: entry!.error,
    blockId: B.post,
    integration: 'crm',
    createdAt: entry!.createdAt,
  });

  // Connecting again answers at once: the failure stays (the next run tells), but it carries
  // when the user reconnected, so the list offers no "Reconnect" from this moment (issue 24, item 3).
  const reconnected = await reconnect('a-good-key');
  [health] = await healthOf(user.token);
  assert.equal(health!.lastRun!.executionId, failed.body.executionId);
  assert.deepEqual(health!.failure, {
    kind: 'connection',
    error: entry!.error,
    blockId: B.post,
    integration: 'crm',
    createdAt: entry!.createdAt,
    reconnectedAt: reconnected.body.connectedAt,
  });

  const succeeded = await sendWebhook(h, child, GOOD_PAYMENT);
  assert.equal(succeeded.body.finished, true);
  [health] = await healthOf(user.token);
  assert.equal(health!.lastRun!.executionId, succeeded.body.executionId);
  assert.equal(health!.lastRun!.finished, true);
  assert.equal(health!.failure, null, 'the failure before the last run is history');
  assert.equal(health!.failedLast24h, 1, 'the failed run still counts for the day');
});

test('each error entry is classified when it is recorded', async () => {
  const user = await newUser(h);
  const kindAfter = async (child: string, payload: Record<string, unknown>) => {
    await sendWebhook(h, child, payload);
    return (await errorsOf(child))[0]!.kind;
  };
  // An expression over a variable the workflow does not define: the settings.
  assert.equal(await kindAfter(await user.install(TYPO), {}), 'settings');
  // A failure the workflow makes on purpose: nothing the user can fix.
  assert.equal(await kindAfter(await user.install(REFUSE), { orderId: 7 }), 'internal');
  // The app refuses a request built from a setting left empty: the settings.
  const emptyChannel = await user.install(PAYMENTS, { [B.settings]: { channel: '' } });
  assert.equal(await kindAfter(emptyChannel, GOOD_PAYMENT), 'settings');
  // Any other refusal of the app: the app's.
  const other = await newUser(h);
  const wrongChannel = await other.install(PAYMENTS, { [B.settings]: { channel: 'general' } });
  assert.equal(await kindAfter(wrongChannel, GOOD_PAYMENT), 'app');
});

test('the read is the token user’s own: another user’s workflows and runs never appear', async () => {
  const alice = await newUser(h);
  const bob = await newUser(h);
  const alicesChild = await alice.install(PAYMENTS);
  await sendWebhook(h, alicesChild, GOOD_PAYMENT);
  const bobsChild = await bob.install(PAYMENTS);
  const bobs = await healthOf(bob.token);
  assert.deepEqual(
    bobs.map((w) => [w.workflowId, w.lastRun]),
    [[bobsChild, null]],
  );
  const withKey = await h.api('GET', '/workflow-health');
  assert.equal(withKey.status, 403, 'the host reads runs per workflow with the API key');
});
