/**
 * HTTP blocks try again what is safe to try again (issue 27, item 4): against a real HTTP server
 * on loopback that answers 503, 429 or 500 before a 200, drops connections or does not answer.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type OutgoingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { nextRetry, retryAfterMs } from '../../server/engine/http-retry.js';
import type { ExecutionLogEntry } from '../../src/api/types.js';
import { type Harness, newUser, sendWebhook, startHarness, until } from './engine-support.js';

const HOOK = 'f1111111-1111-4111-8111-111111111111';
const CALL = 'f2222222-2222-4222-8222-222222222222';
const TICK = 'f3333333-3333-4333-8333-333333333333';

/** One parent per method: a webhook whose body names the scenario, then an HTTP block that calls it. */
const METHODS = ['GET', 'POST', 'PUT'] as const;
const CATALOG = {
  integrations: [],
  workflows: [
    ...METHODS.map((method) => ({
      workflowId: `wf-${method.toLowerCase()}`,
      name: `${method} with retries`,
      integrations: [],
      blocks: [
        { name: 'Hook', id: HOOK, type: 'webhook', parameters: {} },
        {
          name: 'Call',
          id: CALL,
          type: 'http',
          parameters: { method, url: `{{env.SANDBOX_URL}}/s/{{${HOOK}.scenario}}` },
        },
      ],
    })),
    {
      workflowId: 'wf-scheduled',
      name: 'Scheduled GET',
      integrations: [],
      blocks: [
        { name: 'Every minute', id: TICK, type: 'schedule', parameters: { cron: '* * * * *' } },
        { name: 'Call', id: CALL, type: 'http', parameters: { method: 'GET', url: '{{env.SANDBOX_URL}}/s/scheduled' } },
      ],
    },
  ],
};

/** What the app answers, in turn: a status (with headers), a dropped connection, or no answer at all. */
type Answer = { status: number; headers?: OutgoingHttpHeaders } | 'drop' | 'silence';

/** The app: each scenario answers its script in order, then 200 `{ok: true}`; it notes every request. */
class App {
  readonly scripts = new Map<string, Answer[]>();
  readonly hits = new Map<string, Array<{ method: string; at: number }>>();
  private server: Server | undefined;
  url = '';

  async up(): Promise<void> {
    this.server = createServer((req, res) => {
      req.resume();
      const scenario = req.url!.split('/').pop()!;
      const hits = this.hits.get(scenario) ?? [];
      this.hits.set(scenario, hits);
      hits.push({ method: req.method!, at: Date.now() });
      const answer = this.scripts.get(scenario)?.[hits.length - 1] ?? { status: 200 };
      if (answer === 'drop') return req.socket.destroy();
      if (answer === 'silence') return;
      res
        .writeHead(answer.status, { 'Content-Type': 'application/json', ...answer.headers })
        .end(JSON.stringify(answer.status < 300 ? { ok: true } : { message: `scripted ${answer.status}` }));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async down(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  hitsOf(scenario: string) {
    return this.hits.get(scenario) ?? [];
  }
}

const app = new App();
let h: Harness;
let user: Awaited<ReturnType<typeof newUser>>;
const children = new Map<string, string>();

/** Quick backoff so a test takes milliseconds per retry; the bounds are the defaults' shape. */
const POLICY = { maxAttempts: 4, baseDelayMs: 20, maxDelayMs: 80, maxRetryAfterMs: 5_000 };

before(async () => {
  await app.up();
  const dir = mkdtempSync(join(tmpdir(), 'forge-retry-'));
  writeFileSync(join(dir, 'catalog.json'), JSON.stringify(CATALOG));
  h = await startHarness({
    catalog: join(dir, 'catalog.json'),
    sandboxUrl: app.url,
    httpRetry: POLICY,
    // A silent app is given up on quickly; an answering one on loopback is far quicker than this.
    httpTimeoutMs: 1_500,
  });
  user = await newUser(h);
  for (const method of METHODS) children.set(method, await user.install(`wf-${method.toLowerCase()}`));
});
after(async () => {
  await h?.close();
  await app.down();
});

/** Runs the child of `method` on `scenario` (scripted with `answers`) and answers the HTTP block's output once logged. */
async function run(method: (typeof METHODS)[number], scenario: string, answers: Answer[]) {
  app.scripts.set(scenario, answers);
  const child = children.get(method)!;
  const sent = await sendWebhook(h, child, { scenario });
  assert.ok(sent.status < 300, JSON.stringify(sent.body));
  let entry: ExecutionLogEntry | undefined;
  await until(async () => {
    const logs = await h.api<{ data: ExecutionLogEntry[] }>('GET', `/workflow/${child}/logs`, undefined, user.token);
    entry = logs.body.data.find((e) => e.executionId === sent.body.executionId);
    return entry !== undefined;
  }, `the execution of ${scenario}`);
  const result = entry!.results.find((r) => r.blockId === CALL)!;
  // The log keeps the seed's shape: attempts are inside the block's output, nowhere else.
  assert.deepEqual(Object.keys(result).sort(), ['blockId', 'data', 'startedAt', 'stoppedAt']);
  return { finished: entry!.finished, output: result.data[0]![0]!.json as Record<string, unknown> };
}

const attemptsOf = (output: Record<string, unknown>) =>
  output.attempts as Array<{ attempt: number; status?: number; error?: string; retryInMs?: number }>;

describe('an HTTP block', () => {
  test('GET tries again after 503, 500 and a dropped connection, and logs every attempt', async () => {
    const { finished, output } = await run('GET', 'get-flaky', [{ status: 503 }, { status: 500 }, 'drop']);
    assert.equal(finished, true);
    assert.equal(app.hitsOf('get-flaky').length, 4);
    assert.equal(output.status, 200);
    assert.deepEqual(output.body, { ok: true });
    const attempts = attemptsOf(output);
    assert.deepEqual(
      attempts.map((a) => [a.attempt, a.status ?? 'no answer']),
      [
        [1, 503],
        [2, 500],
        [3, 'no answer'],
        [4, 200],
      ],
    );
    assert.match(attempts[2]!.error!, /\w/, 'the dropped connection says why');
    for (const a of attempts.slice(0, 3)) {
      assert.ok(a.retryInMs! > 0 && a.retryInMs! <= POLICY.maxDelayMs, `a jittered backoff: ${a.retryInMs}`);
    }
    assert.equal(attempts[3]!.retryInMs, undefined, 'no retry after the answer');
  });

  test('one answer is the whole result: no attempts list', async () => {
    const { output } = await run('GET', 'get-once', []);
    assert.deepEqual(output, { status: 200, body: { ok: true } });
  });

  test('POST is not tried again after a 500: it may have done its work', async () => {
    const { finished, output } = await run('POST', 'post-500', [{ status: 500 }]);
    assert.equal(finished, false);
    assert.equal(app.hitsOf('post-500').length, 1);
    assert.match(
      String(output.error),
      /^POST http:\/\/127\.0\.0\.1:\d+\/s\/post-500 answered 500 Internal Server Error: scripted 500$/,
    );
    assert.equal(output.attempts, undefined);
  });

  test('POST is tried again after 503, 429 and a connection dropped before any answer', async () => {
    const { finished, output } = await run('POST', 'post-busy', [{ status: 503 }, { status: 429 }, 'drop']);
    assert.equal(finished, true);
    assert.deepEqual(
      app.hitsOf('post-busy').map((hit) => hit.method),
      ['POST', 'POST', 'POST', 'POST'],
    );
    assert.deepEqual(
      attemptsOf(output).map((a) => a.status ?? 'no answer'),
      [503, 429, 'no answer', 200],
    );
  });

  test('stops at the bound: 4 attempts, then the error says it gave up', async () => {
    const { finished, output } = await run('PUT', 'put-down', Array(10).fill({ status: 503 }));
    assert.equal(finished, false);
    assert.equal(app.hitsOf('put-down').length, POLICY.maxAttempts);
    assert.match(String(output.error), /answered 503 Service Unavailable: scripted 503 \(gave up after 4 attempts\)$/);
    const attempts = attemptsOf(output);
    assert.equal(attempts.length, 4);
    assert.deepEqual(
      attempts.map((a) => a.retryInMs === undefined),
      [false, false, false, true],
    );
  });

  test('honours Retry-After in seconds: the next attempt waits that long', async () => {
    const { finished, output } = await run('POST', 'retry-after', [{ status: 429, headers: { 'Retry-After': '1' } }]);
    assert.equal(finished, true);
    const [first, second] = app.hitsOf('retry-after');
    assert.ok(second!.at - first!.at >= 1000, `came back after ${second!.at - first!.at} ms, before the 1 s asked`);
    assert.equal(attemptsOf(output)[0]!.retryInMs, 1000);
  });

  test('honours Retry-After as an HTTP date', async () => {
    const at = new Date(Date.now() + 2_000).toUTCString();
    const { finished, output } = await run('GET', 'retry-date', [{ status: 503, headers: { 'Retry-After': at } }]);
    assert.equal(finished, true);
    const wait = attemptsOf(output)[0]!.retryInMs!;
    // The date has whole seconds: up to 2 s from when it was written, less what has passed since.
    assert.ok(wait > 0 && wait <= 2_000, `waited ${wait} ms for ${at}`);
    const [first, second] = app.hitsOf('retry-date');
    assert.ok(second!.at - first!.at >= wait);
  });

  test('does not wait longer than its bound: a Retry-After past it ends the run', async () => {
    const { finished, output } = await run('GET', 'retry-late', [{ status: 503, headers: { 'Retry-After': '120' } }]);
    assert.equal(finished, false);
    assert.equal(app.hitsOf('retry-late').length, 1);
    assert.match(
      String(output.error),
      /answered 503 Service Unavailable: scripted 503 \(it asked to be tried again in 120 s, longer than the 5 s an HTTP block waits\)$/,
    );
  });

  test('a timeout is tried again for GET, not for POST', async () => {
    const get = await run('GET', 'get-silent', ['silence']);
    assert.equal(get.finished, true);
    assert.deepEqual(
      attemptsOf(get.output).map((a) => a.status ?? a.error),
      ['no answer within 1.5 s', 200],
    );
    const post = await run('POST', 'post-silent', ['silence']);
    assert.equal(post.finished, false);
    assert.equal(app.hitsOf('post-silent').length, 1);
    assert.match(String(post.output.error), /did not answer within 1\.5 s\.$/);
  });
});

describe('waiting for a retry', () => {
  test('is cut short when the service stops: the run goes back to the queue, not stored as a failure', async () => {
    // The app asks for 20 s, within the default bound of 30 s: only the stop can end the wait early.
    // No grace: the stop cuts the run at once and hands its minute back for another instance.
    const dir = mkdtempSync(join(tmpdir(), 'forge-retry-'));
    writeFileSync(join(dir, 'catalog.json'), JSON.stringify(CATALOG));
    const service = await startHarness({ catalog: join(dir, 'catalog.json'), sandboxUrl: app.url, stopGraceMs: 0 });
    await (await newUser(service)).install('wf-scheduled');
    app.scripts.set('scheduled', [{ status: 503, headers: { 'Retry-After': '20' } }]);
    const ticked = service.service.engine.tick(new Date('2026-03-02T10:15:00Z'));
    await until(() => app.hitsOf('scheduled').length === 1, 'the first attempt');
    await service.close();
    assert.deepEqual(await ticked, [], 'no execution stored here: the minute went back to the queue');
    assert.equal(app.hitsOf('scheduled').length, 1, 'no second attempt');
  });
});

describe('the retry rules', () => {
  const now = Date.parse('2026-03-02T10:00:00Z');
  const policy = { maxAttempts: 4, baseDelayMs: 1_000, maxDelayMs: 8_000, maxRetryAfterMs: 30_000 };

  test('Retry-After: seconds, an HTTP date (a past one is now), anything else ignored', () => {
    assert.equal(retryAfterMs('7', now), 7_000);
    assert.equal(retryAfterMs(' 0 ', now), 0);
    assert.equal(retryAfterMs('Mon, 02 Mar 2026 10:00:30 GMT', now), 30_000);
    assert.equal(retryAfterMs('Mon, 02 Mar 2026 09:00:00 GMT', now), 0);
    for (const junk of ['1.5', '-3', 'soon', '', '2026-03-02T10:00:30Z'])
      assert.equal(retryAfterMs(junk, now), undefined, junk);
    assert.equal(retryAfterMs(null, now), undefined);
  });

  test('which failures each method tries again', () => {
    const retried = (method: string, outcome: Parameters<typeof nextRetry>[1]) =>
      nextRetry(method, outcome, 1, policy, now).retryInMs !== undefined;
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      const idempotent = ['GET', 'PUT', 'DELETE'].includes(method);
      assert.equal(retried(method, { status: 429, retryAfter: null }), true, `${method} 429`);
      assert.equal(retried(method, { status: 503, retryAfter: null }), true, `${method} 503`);
      assert.equal(retried(method, { failure: 'connection' }), true, `${method} no connection`);
      assert.equal(retried(method, { status: 500, retryAfter: null }), idempotent, `${method} 500`);
      assert.equal(retried(method, { status: 502, retryAfter: null }), idempotent, `${method} 502`);
      assert.equal(retried(method, { failure: 'timeout' }), idempotent, `${method} timeout`);
      for (const status of [200, 400, 404, 409]) assert.equal(retried(method, { status, retryAfter: null }), false);
    }
  });

  test('backoff doubles up to its cap, with jitter of up to half, and a Retry-After wins when longer', () => {
    const wait = (attempt: number, random: number, retryAfter: string | null = null) =>
      nextRetry('GET', { status: 503, retryAfter }, attempt, { ...policy, maxAttempts: 10 }, now, () => random)
        .retryInMs;
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((n) => wait(n, 1)),
      [1_000, 2_000, 4_000, 8_000, 8_000],
    );
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((n) => wait(n, 0)),
      [500, 1_000, 2_000, 4_000, 4_000],
    );
    assert.equal(wait(1, 0, '3'), 3_000);
    assert.equal(wait(4, 1, '3'), 8_000);
    assert.equal(wait(1, 0, '31'), undefined);
  });
});
