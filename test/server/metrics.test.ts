/**
 * GET /metrics (issue 28, item 1): Prometheus text, with the API key only, counting what the
 * service did: requests by route and status, runs by trigger and outcome, blocks by type,
 * deliveries by outcome, the outbox, and the process.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
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
      /^process_cpu_user_seconds_total \d/m,
      /^nodejs_eventloop_lag_seconds \d/m,
    ]) {
      assert.match(text, line);
    }
  });
});

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
