import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ErrorLogEntry, ExecutionLogEntry } from '../../src/api/types.js';
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
  UTC_MS,
  UUID,
} from './engine-support.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const logsOf = async (childId: string, token: string, query = '') =>
  (await h.api<{ data: ExecutionLogEntry[] }>('GET', `/workflow/${childId}/logs${query}`, undefined, token)).body.data;

const errorsOf = async (childId: string, token: string) =>
  (await h.api<{ errors: ErrorLogEntry[] }>('GET', `/workflow/${childId}/errors`, undefined, token)).body.errors;

/** Checks an execution log entry field by field against the service interface's shape. */
function assertExecutionShape(entry: ExecutionLogEntry): void {
  assert.deepEqual(Object.keys(entry).sort(), ['executionId', 'finished', 'results', 'startedAt', 'stoppedAt']);
  assert.equal(typeof entry.executionId, 'string');
  assert.match(entry.startedAt, UTC_MS);
  assert.match(entry.stoppedAt, UTC_MS);
  assert.equal(typeof entry.finished, 'boolean');
  assert.ok(entry.startedAt <= entry.stoppedAt, 'stops after it starts');
  for (const result of entry.results) {
    assert.deepEqual(Object.keys(result).sort(), ['blockId', 'data', 'startedAt', 'stoppedAt']);
    assert.match(result.startedAt, UTC_MS);
    assert.match(result.stoppedAt, UTC_MS);
    assert.ok(
      entry.startedAt <= result.startedAt && result.startedAt <= result.stoppedAt,
      'a block runs inside its execution',
    );
    assert.ok(result.stoppedAt <= entry.stoppedAt, 'a block stops before its execution');
    assert.ok(Array.isArray(result.data) && result.data.every(Array.isArray), 'data is an array of arrays');
    for (const item of result.data.flat()) {
      assert.deepEqual(Object.keys(item).sort(), ['id', 'json']);
      assert.match(item.id, UUID);
      assert.equal(typeof item.json, 'object');
    }
  }
}

const outputs = (entry: ExecutionLogEntry) => entry.results.map((r) => r.data[0]![0]!.json);

describe('a webhook run', () => {
  test('runs every block in order and logs it in the seed’s shape', async () => {
    const user = await newUser(h);
    const child = await user.install(PAYMENTS);
    const detail = await h.api('GET', `/workflow/${child}`);
    const payload = { amount: 25, customer: { name: 'Ada "the Countess" Lovelace' } };
    // Waiting for the run: without `Prefer: wait` the answer is 202 {executionId} (test/server/run-jobs.test.ts).
    const response = await fetch(detail.body.webhookUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Prefer: 'wait=30' },
      body: JSON.stringify(payload),
    });
    assert.equal(response.status, 200);
    const answer = await response.json();
    assert.equal(answer.finished, true);

    const [entry, ...rest] = await logsOf(child, user.token);
    assert.equal(rest.length, 0);
    assertExecutionShape(entry!);
    assert.equal(entry!.executionId, answer.executionId);
    assert.equal(entry!.finished, true);
    assert.deepEqual(
      entry!.results.map((r) => r.blockId),
      [B.hook, B.settings, B.bigEnough, B.message, B.post],
    );
    const [hook, settings, condition, message, post] = outputs(entry!);
    assert.deepEqual(hook, payload);
    assert.deepEqual(settings, { threshold: 10, channel: '#general' });
    assert.deepEqual(condition, { passed: true, left: 25, operator: '>=', right: 10 });
    // A whole-text expression keeps the number; inside text, the quote stays a plain character.
    assert.deepEqual(message, { text: 'Paid 25 by Ada "the Countess" Lovelace', amount: 25 });
    assert.equal(post!.status, 200);
    assert.equal((post!.body as { channel: string }).channel, '#general');
    assert.deepEqual(h.sandbox.requests.at(-1)?.body, {
      channel: '#general',
      text: 'Paid 25 by Ada "the Countess" Lovelace',
    });
    assert.deepEqual(await errorsOf(child, user.token), []);
  });

  test('a condition that does not hold finishes the run without the blocks after it', async () => {
    const user = await newUser(h);
    const child = await user.install(PAYMENTS);
    const sent = h.sandbox.requests.length;
    const answer = await sendWebhook(h, child, { amount: 5, customer: { name: 'Small' } });
    assert.deepEqual(answer, { status: 200, body: { executionId: answer.body.executionId, finished: true } });
    const [entry] = await logsOf(child, user.token);
    assert.equal(entry!.finished, true);
    assert.deepEqual(
      entry!.results.map((r) => r.blockId),
      [B.hook, B.settings, B.bigEnough],
    );
    assert.equal(outputs(entry!)[2]!.passed, false);
    assert.equal(h.sandbox.requests.length, sent, 'nothing was posted');
  });

  test('a condition reads a text as a number by the one number rule (server/shared/number.ts)', async () => {
    const user = await newUser(h);
    const child = await user.install(PAYMENTS);
    // The threshold is 10: plain decimals compare as numbers, with white space around them or not.
    for (const [amount, passed] of [
      [' 12.5 ', true],
      ['.5', false],
      ['-0', false],
      ['0010', true],
    ] as const) {
      const answer = await sendWebhook(h, child, { amount, customer: { name: 'T' } });
      assert.equal(answer.body.finished, true, amount);
      assert.equal(outputs((await logsOf(child, user.token))[0]!)[2]!.passed, passed, amount);
    }
    // What the rule does not call a number, a comparison of numbers refuses, saying what it got.
    for (const amount of ['+5', '1e3', '0x10', '1_000', 'Infinity', '']) {
      const answer = await sendWebhook(h, child, { amount, customer: { name: 'T' } });
      assert.equal(answer.body.finished, false, amount);
      const [error] = await errorsOf(child, user.token);
      assert.equal(error!.blockId, B.bigEnough);
      assert.ok(
        error!.error.includes(`compares numbers with >=, but its left is ${JSON.stringify(amount)}`),
        error!.error,
      );
    }
  });

  test('uses the user’s variable values', async () => {
    const user = await newUser(h);
    const child = await user.install(PAYMENTS, { [B.settings]: { channel: '#sales' } });
    await h.api('PATCH', `/workflow/${child}/variables/${B.settings}`, { threshold: 100 }, user.token);
    assert.equal((await sendWebhook(h, child, { amount: 99, customer: { name: 'A' } })).body.finished, true);
    assert.equal((await logsOf(child, user.token))[0]!.results.length, 3, '99 is below the threshold of 100');
    await sendWebhook(h, child, { amount: 150, customer: { name: 'B' } });
    assert.deepEqual(h.sandbox.requests.at(-1)?.body, { channel: '#sales', text: 'Paid 150 by B' });
  });

  test('answers 400 to a body that is not a JSON object, and 415 to one that is not JSON', async () => {
    const user = await newUser(h);
    const child = await user.install(REFUSE);
    const url = `${h.service.url}/forge/2021-12/hooks/${(await h.service.store.children.get(child))!.webhookToken}`;
    const list = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '[1]' });
    assert.equal(list.status, 400);
    assert.match((await list.json()).detail, /JSON object/);
    const form = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'a=1' });
    assert.equal(form.status, 415);
    assert.deepEqual(await logsOf(child, user.token), [], 'no run started');
  });

  test('an unknown webhook token is a 404, and a schedule workflow has no webhook', async () => {
    const unknown = await fetch(`${h.service.url}/forge/2021-12/hooks/not-a-token`, { method: 'POST' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    const user = await newUser(h);
    const child = await user.install(BALANCE);
    assert.equal((await h.api('GET', `/workflow/${child}`)).body.webhookUrl, undefined);
    const answer = await sendWebhook(h, child, {});
    assert.equal(answer.status, 404);
    assert.match(answer.body.detail, /schedule/);
  });
});

describe('a failed run', () => {
  test('a fail block records one error entry per failed execution, in the seed’s shape', async () => {
    const user = await newUser(h);
    const child = await user.install(REFUSE);
    const first = await sendWebhook(h, child, { orderId: 41 });
    const second = await sendWebhook(h, child, { orderId: 42 });
    assert.deepEqual(first.body.finished, false);
    assert.equal(first.status, 200, 'a failed run is not a failed webhook');

    const logs = await logsOf(child, user.token);
    assert.deepEqual(
      logs.map((l) => [l.executionId, l.finished]),
      [
        [second.body.executionId, false],
        [first.body.executionId, false],
      ],
    );
    for (const entry of logs) assertExecutionShape(entry);
    assert.deepEqual(outputs(logs[0]!)[1], { error: 'Refused order 42' });

    const errors = await errorsOf(child, user.token);
    assert.equal(errors.length, 2);
    const entry = errors.find((e) => e.executionId === second.body.executionId)!;
    assert.deepEqual(Object.keys(entry).sort(), [
      '__v',
      '_id',
      'blockId',
      'blockType',
      'createdAt',
      'error',
      'executionId',
      // The extension: what kind of problem it was (docs/api.md).
      'kind',
      'updatedAt',
      'workflowId',
    ]);
    assert.equal(entry.kind, 'internal');
    assert.equal(typeof entry._id, 'string');
    assert.equal(entry.workflowId, child);
    assert.equal(entry.blockId, B.refuse);
    assert.equal(entry.blockType, 'fail');
    assert.equal(entry.error, 'Refused order 42');
    assert.match(entry.createdAt, UTC_MS);
    assert.match(entry.updatedAt, UTC_MS);
    assert.equal(entry.__v, 0);
  });

  test('a reference to a variable that does not exist fails the run and names it', async () => {
    const user = await newUser(h);
    const child = await user.install(TYPO);
    await sendWebhook(h, child, {});
    const [error] = await errorsOf(child, user.token);
    assert.equal(error!.blockId, B.typo);
    assert.equal(error!.blockType, 'transform');
    assert.match(error!.error, /\{\{vars\.nmae\}\} names no variable/);
    assert.match(error!.error, /"Greeting"/);
  });

  test('a reference to data the trigger did not send fails the run and names it', async () => {
    const user = await newUser(h);
    const child = await user.install(PAYMENTS);
    await sendWebhook(h, child, { amount: 30 });
    const [error] = await errorsOf(child, user.token);
    assert.equal(error!.blockId, B.message);
    assert.ok(error!.error.includes(`{{${B.hook}.customer.name}}`), error!.error);
    assert.match(error!.error, /has no "customer" \(it has amount\)/);
  });

  test('an HTTP block whose request fails records the status and the API’s message', async () => {
    const user = await newUser(h);
    const child = await user.install(PAYMENTS, { [B.settings]: { channel: 'no-hash' } });
    await sendWebhook(h, child, { amount: 30, customer: { name: 'C' } });
    const [log] = await logsOf(child, user.token);
    assert.equal(log!.finished, false);
    assert.equal(log!.results.length, 5, 'the failing block is in the log');
    const [error] = await errorsOf(child, user.token);
    assert.equal(error!.blockType, 'http');
    assert.match(
      error!.error,
      /^POST http:\/\/localhost:\d+\/slack\/chat\.postMessage answered 404 Not Found: channel_not_found$/,
    );
  });
});

describe('a scheduled run', () => {
  test('runs the active children of a parent whose cron is due, in the seed’s shape', async () => {
    const user = await newUser(h);
    const child = await user.install(BALANCE);
    const notDue = await h.service.engine.tick(new Date('2026-03-02T10:16:00Z'));
    assert.deepEqual(notDue, []);
    assert.deepEqual(await logsOf(child, user.token), []);

    const at = new Date('2026-03-02T10:15:00Z');
    const outcomes = await h.service.engine.tick(at);
    const [entry, ...rest] = await logsOf(child, user.token);
    assert.equal(rest.length, 0);
    assert.equal(outcomes.find((o) => o.workflowId === child)?.execution.executionId, entry!.executionId);
    assertExecutionShape(entry!);
    assert.equal(entry!.finished, true);
    assert.deepEqual(
      entry!.results.map((r) => r.blockId),
      [B.schedule, B.balance, B.summary],
    );
    const [schedule, balance, summary] = outputs(entry!);
    assert.deepEqual(schedule, { scheduledAt: '2026-03-02T10:15:00.000Z', cron: '*/15 * * * *', weekend: false });
    assert.deepEqual(balance, { status: 200, body: { object: 'balance', amount: 1842.5, currency: 'eur' } });
    assert.deepEqual(summary, { line: 'Balance: 1842.5 eur' });
  });
});

describe('switching a workflow off stops its runs at once', () => {
  test('deactivate refuses the webhook with 409 and skips the schedule; activate brings both back', async () => {
    const user = await newUser(h);
    const hook = await user.install(REFUSE);
    const scheduled = await user.install(BALANCE);
    const witness = await (await newUser(h)).install(BALANCE);

    for (const child of [hook, scheduled]) {
      assert.deepEqual((await h.api('PUT', `/workflow/${child}/deactivate`, undefined, user.token)).body, {
        activated: false,
      });
    }
    const refused = await sendWebhook(h, hook, { orderId: 1 });
    assert.equal(refused.status, 409);
    assert.match(refused.body.detail, /switched off/);
    assert.match(refused.body.detail, /activate/);
    const ran = (await h.service.engine.tick(new Date('2026-03-02T11:30:00Z'))).map((o) => o.workflowId);
    assert.ok(ran.includes(witness), 'the tick ran the active workflow of another user');
    assert.ok(!ran.includes(scheduled), 'the switched-off workflow did not run');
    assert.deepEqual(await logsOf(scheduled, user.token), []);
    assert.deepEqual(await logsOf(hook, user.token), []);

    for (const child of [hook, scheduled]) await h.api('PUT', `/workflow/${child}/activate`, undefined, user.token);
    assert.equal((await sendWebhook(h, hook, { orderId: 2 })).status, 200);
    await h.service.engine.tick(new Date('2026-03-02T11:45:00Z'));
    assert.equal((await logsOf(scheduled, user.token)).length, 1);
  });

  test('disableWorkflows stops every workflow of the user', async () => {
    const user = await newUser(h);
    const hook = await user.install(REFUSE);
    const scheduled = await user.install(BALANCE);
    assert.equal((await h.api('PATCH', `/user/${user.userId}/disableWorkflows`)).status, 200);
    assert.equal((await sendWebhook(h, hook, {})).status, 409);
    await h.service.engine.tick(new Date('2026-03-02T12:00:00Z'));
    assert.deepEqual(await logsOf(scheduled, h.service.apiKey!), []);
  });

  test('deleting the user makes its webhook unknown and its schedule silent', async () => {
    const user = await newUser(h);
    const hook = await user.install(REFUSE);
    const scheduled = await user.install(BALANCE);
    const token = (await h.service.store.children.get(hook))!.webhookToken;
    assert.equal((await h.api('DELETE', `/user/${user.userId}`)).status, 200);
    const response = await fetch(`${h.service.url}/forge/2021-12/hooks/${token}`, { method: 'POST' });
    assert.equal(response.status, 404);
    const outcomes = await h.service.engine.tick(new Date('2026-03-02T12:15:00Z'));
    assert.ok(outcomes.length > 0, 'the tick ran the other users’ workflows');
    assert.ok(!outcomes.some((o) => o.workflowId === scheduled), 'the deleted workflow did not run');
  });
});

describe('one user’s executions never show in another’s logs', () => {
  test('user A sees only A’s runs, and B’s logs and errors are a 404 to A', async () => {
    const a = await newUser(h);
    const b = await newUser(h);
    const childA = await a.install(REFUSE);
    const childB = await b.install(REFUSE);
    const runA = (await sendWebhook(h, childA, { orderId: 'A' })).body.executionId;
    const runB = (await sendWebhook(h, childB, { orderId: 'B' })).body.executionId;

    assert.deepEqual(
      (await logsOf(childA, a.token)).map((l) => l.executionId),
      [runA],
    );
    assert.deepEqual(
      (await errorsOf(childA, a.token)).map((e) => e.executionId),
      [runA],
    );
    const unknown = await h.api('GET', '/workflow/0123456789abcdef01234567/logs', undefined, a.token);
    for (const path of [`/workflow/${childB}/logs`, `/workflow/${childB}/errors`]) {
      const response = await h.api('GET', path, undefined, a.token);
      assert.equal(response.status, 404);
      assert.ok(!JSON.stringify(response.body).includes(runB), 'nothing of B’s run shows');
      assert.equal(response.body.title, unknown.body.title);
    }
  });
});

describe('logs paging over real runs', () => {
  test('newest first by default, oldest first with order=asc, pages of limit', async () => {
    const user = await newUser(h);
    const child = await user.install(REFUSE);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await sendWebhook(h, child, { orderId: i })).body.executionId);
    const ofPage = async (query: string) => (await logsOf(child, user.token, query)).map((l) => l.executionId);
    assert.deepEqual(await ofPage(''), [...ids].reverse());
    assert.deepEqual(await ofPage('?order=asc&limit=2'), ids.slice(0, 2));
    assert.deepEqual(await ofPage('?order=asc&limit=2&page=3'), ids.slice(4));
    assert.deepEqual(await ofPage('?limit=2&page=2'), [ids[2], ids[1]]);
  });
});
