/**
 * GET /metrics (issue 28, item 1): Prometheus text, with the API key only, counting what the
 * service did: requests by route and status, runs by trigger and outcome, blocks by type,
 * deliveries by outcome, the job queues (the outbox, the scheduler's minutes), the database
 * pool, and the process. Token refreshes and broken connections: test/server/oauth.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Histogram, type OpenMetricsContentType, Registry } from 'prom-client';
import { Metrics } from '../../server/metrics.js';
import { BACKEND } from './backend.js';
import { type Harness, newUser, REFUSE, Receiver, sendWebhook, startHarness, until } from './engine-support.js';

describe('GET /metrics', () => {
  let h: Harness;
  const receiver = new Receiver();
  before(async () => {
    await receiver.up();
    h = await startHarness();
  });
  after(async () => {
    await h.close();
    await receiver.down();
  });

  const scrape = (credential?: string) =>
    fetch(`${h.service.url}/metrics`, credential ? { headers: { Authorization: `Bearer ${credential}` } } : {});

  test('is not public: no credential is a 401, a user token a 403', async () => {
    assert.equal((await scrape()).status, 401);
    const { token } = await newUser(h);
    assert.equal((await scrape(token)).status, 403);
  });

  test('counts requests, runs, blocks and deliveries, and shows the process', async () => {
    await h.api('PUT', '/settings', { errorWebhookUrl: receiver.url });
    const child = await (await newUser(h)).install(REFUSE);
    await sendWebhook(h, child, { orderId: 'counted' });
    await receiver.waitFor(1);
    let text = '';
    await until(async () => {
      text = await (await scrape(h.service.apiKey)).text();
      return /forge_deliveries_total\{channel="webhook",outcome="delivered"\} 1/.test(text);
    });
    const answer = await scrape(h.service.apiKey);
    assert.equal(answer.status, 200);
    assert.match(String(answer.headers.get('content-type')), /^text\/plain; version=0\.0\.4/);
    for (const line of [
      /^forge_http_request_duration_seconds_count\{method="PUT",route="\/forge\/2021-12\/settings",status="200"\} 1$/m,
      /^forge_http_request_duration_seconds_count\{method="GET",route="\/metrics",status="401"\} 1$/m,
      /^forge_runs_started_total\{trigger="webhook"\} 1$/m,
      /^forge_runs_finished_total\{trigger="webhook",outcome="failed"\} 1$/m,
      /^forge_block_duration_seconds_count\{type="fail",outcome="failed"\} 1$/m,
      /^forge_block_duration_seconds_count\{type="webhook",outcome="succeeded"\} 1$/m,
      /^forge_delivery_queue_pending\{channel="webhook"\} 0$/m,
      /^forge_delivery_queue_oldest_age_seconds\{channel="webhook"\} 0$/m,
      /^forge_scheduler_minutes_pending 0$/m,
      /^forge_scheduler_oldest_pending_minute_age_seconds 0$/m,
      /^forge_runs_in_progress 0$/m,
      /^forge_db_connections_in_use \d+$/m,
      /^forge_db_connections_waiting 0$/m,
      new RegExp(`^forge_db_connections_max ${BACKEND === 'sqlite' ? 1 : 10}$`, 'm'),
      /^process_cpu_user_seconds_total \d/m,
      /^nodejs_eventloop_lag_seconds \d/m,
    ]) {
      assert.match(text, line);
    }
  });
});

test("the request duration histogram reads as prom-client's Histogram does, in text, OpenMetrics and JSON", async () => {
  // The service counts request durations itself (cheaper per request, issue 28's budget); a
  // scrape must not tell the difference. Same observations, both formats, both ways of reading.
  const h = await startHarness();
  try {
    const ours = new Metrics(h.service.store).requestDuration;
    const theirs = new Histogram({
      name: 'forge_http_request_duration_seconds',
      help: 'Time from a request to its answer, by method, route (the pattern, not the path) and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [],
    });
    const observed = [
      ['GET', '/forge/2021-12/workflow', 200, 0.001],
      ['GET', '/forge/2021-12/workflow', 200, 0.005],
      ['POST', '/forge/2021-12/user', 401, 0.0051],
      ['GET', 'unmatched', 404, 20],
      ['GET', '/forge/2021-12/workflow', 500, 0.3],
      ['GET', '/forge/2021-12/workflow', 200, 10],
    ] as const;
    for (const [method, route, status, seconds] of observed) {
      ours.observe(method, route, status, seconds);
      theirs.observe({ method, route, status }, seconds);
    }
    const [mine, prom] = [new Registry(), new Registry()];
    const [mineOpen, promOpen] = [new Registry<OpenMetricsContentType>(), new Registry<OpenMetricsContentType>()];
    for (const registry of [mineOpen, promOpen]) registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    mine.registerMetric(ours as never);
    mineOpen.registerMetric(ours as never);
    prom.registerMetric(theirs);
    promOpen.registerMetric(theirs);
    assert.equal(await mine.metrics(), await prom.metrics());
    assert.deepEqual(await mine.getMetricsAsJSON(), await prom.getMetricsAsJSON());
    assert.equal(await mineOpen.metrics(), await promOpen.metrics());
    assert.match(
      await mine.metrics(),
      /^forge_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/forge\/2021-12\/workflow",status="200"\} 2$/m,
    );
  } finally {
    await h.close();
  }
});

describe('queues and the database pool', () => {
  test('the outbox: deliveries waiting for a receiver that is down, and how old the oldest is', async () => {
    // Long backoff: the failed delivery stays in the outbox while the test reads it.
    const h = await startHarness({ delivery: { backoff: () => 60_000 } });
    try {
      const down = new Receiver();
      await down.up();
      await h.api('PUT', '/settings', { errorWebhookUrl: down.url });
      await down.down();
      const child = await (await newUser(h)).install(REFUSE);
      await sendWebhook(h, child, { orderId: 'undelivered' });
      let text = '';
      await until(async () => {
        text = await (await scrapeOf(h)).text();
        return /forge_deliveries_total\{channel="webhook",outcome="failed"\} 1/.test(text);
      });
      assert.match(text, /^forge_delivery_queue_pending\{channel="webhook"\} 1$/m);
      const age = Number(/^forge_delivery_queue_oldest_age_seconds\{channel="webhook"\} (\S+)$/m.exec(text)?.[1]);
      assert.ok(age > 0 && age < 60, `oldest age ${age} s`);
      assert.match(text, /^forge_delivery_queue_pending\{channel="eventBus"\} 0$/m);
    } finally {
      await h.close();
    }
  });

  test('the scheduler: minutes due that have not run, and how far behind it is', async () => {
    // A clock the test moves without telling the scheduler: as an event loop that stalled for
    // five minutes would, the minutes come due before the scheduler's timer can start them.
    const start = Date.UTC(2026, 10, 26, 12, 0, 10);
    let now = start;
    const clock = { now: () => now, onJump: () => () => {} };
    const h = await startHarness({ clock });
    try {
      h.service.engine.startScheduler();
      now = start + 5 * 60_000;
      const text = await (await scrapeOf(h)).text();
      // 12:00 (started at once, may still be running) to 12:05; at least 12:01–12:05 wait.
      const pending = Number(/^forge_scheduler_minutes_pending (\d+)$/m.exec(text)?.[1]);
      assert.ok(pending === 5 || pending === 6, `${pending} minutes pending`);
      const behind = Number(/^forge_scheduler_oldest_pending_minute_age_seconds (\S+)$/m.exec(text)?.[1]);
      assert.ok(behind >= 4 * 60 + 10 && behind <= 5 * 60 + 10, `${behind} s behind`);
    } finally {
      await h.close();
    }
  });

  test('connections in use, and queries waiting while a transaction holds them', async () => {
    const h = await startHarness();
    let release = () => {};
    try {
      const pool = h.service.store.poolUse!;
      let entered = () => {};
      const inside = new Promise<void>((resolve) => (entered = resolve));
      const transaction = h.service.store.transaction(async (tx) => {
        await tx.ping();
        entered();
        await new Promise<void>((resolve) => (release = resolve));
      });
      await inside;
      // The transaction's connection; a query of the service's own start (the outbox's first
      // look, on PostgreSQL) may still hold another for a moment on a busy machine.
      await until(() => pool.inUse === 1, `in use: ${pool.inUse}`);
      const waiting = h.service.store.ping();
      // SQLite has one connection, which the transaction holds; PostgreSQL's pool has more.
      if (BACKEND === 'sqlite') await until(() => pool.waiting >= 1, `waiting: ${pool.waiting}`);
      release();
      await Promise.all([transaction, waiting]);
      assert.deepEqual([pool.inUse, pool.waiting], [0, 0]);
    } finally {
      // A failed assertion must not leave the transaction open: closing the pool waits for it.
      release();
      await h.close();
    }
  });
});

const scrapeOf = (h: Harness) =>
  fetch(`${h.service.url}/metrics`, { headers: { Authorization: `Bearer ${h.service.apiKey}` } });

describe('backpressure', () => {
  test('past the memory bound, requests get 503 with Retry-After and /readyz says not ready; /healthz still answers', async () => {
    // A heap bound of one byte: always passed, so the service is under pressure from its first sample.
    const h = await startHarness({ pressure: { maxHeapUsedBytes: 1, sampleIntervalMs: 10 } });
    try {
      await until(async () => (await h.api('GET', '/user')).status === 503);
      const busy = await fetch(`${h.service.url}/forge/2021-12/user`, {
        headers: { Authorization: `Bearer ${h.service.apiKey}` },
      });
      assert.equal(busy.status, 503);
      assert.equal(busy.headers.get('retry-after'), '5');
      assert.match(String(busy.headers.get('content-type')), /^application\/problem\+json/);
      assert.match(((await busy.json()) as { detail: string }).detail, /too busy/);
      assert.equal((await fetch(`${h.service.url}/readyz`)).status, 503);
      assert.equal((await fetch(`${h.service.url}/healthz`)).status, 200);
    } finally {
      await h.close();
    }
  });
});
