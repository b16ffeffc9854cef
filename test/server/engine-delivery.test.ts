import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ForgeClient } from '../../src/api/client.js';
import type { ErrorLogEntry, HostSettings } from '../../src/api/types.js';
import { type Harness, newUser, REFUSE, Receiver, sendWebhook, startHarness, until } from './engine-support.js';

/** Retries come quickly here, so "down, then up" takes milliseconds, not minutes. */
const FAST = { backoff: () => 20 };

const errorsOf = async (h: Harness, childId: string) =>
  (await h.api<{ errors: ErrorLogEntry[] }>('GET', `/workflow/${childId}/errors`)).body.errors;

const backlog = (h: Harness, channel: 'webhook' | 'eventBus') => h.service.store.deliveries.backlog(channel);

describe('host settings', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  test('start empty, and only the API key reads or changes them', async () => {
    const settings = await h.api<HostSettings>('GET', '/settings');
    assert.match(settings.body.errorWebhookSecret, /^whsec_/);
    assert.deepEqual(settings, {
      status: 200,
      body: {
        errorWebhookUrl: null,
        errorWebhookSecret: settings.body.errorWebhookSecret,
        eventBus: { enabled: false, busName: null, region: null, endpoint: null, hasAccessKeys: false },
        deliveries: {
          webhook: { pending: 0, deadLetters: 0, lastError: null },
          eventBus: { pending: 0, deadLetters: 0, lastError: null },
        },
      },
    });
    const user = await newUser(h);
    for (const method of ['GET', 'PUT']) {
      const refused = await h.api(
        method,
        '/settings',
        method === 'PUT' ? { errorWebhookUrl: null } : undefined,
        user.token,
      );
      assert.equal(refused.status, 403);
      assert.match(refused.body.detail, /API key/);
    }
  });

  test('say which field is wrong and what to send', async () => {
    const bad = await h.api('PUT', '/settings', { errorWebhookUrl: 'ftp://example.com', colour: 'red' });
    assert.equal(bad.status, 400);
    assert.deepEqual(
      bad.body.errors.map((e: { path: string }) => e.path),
      ['body.colour', 'body.errorWebhookUrl'],
    );
    const halfKeys = await h.api('PUT', '/settings', { eventBus: { accessKeyId: 'AKID' } });
    assert.equal(halfKeys.status, 400);
    assert.match(halfKeys.body.errors[0].message, /together/);
    const noKeys = await h.api('PUT', '/settings', { eventBus: { enabled: true } });
    assert.equal(noKeys.status, 400);
    assert.match(noKeys.body.detail, /busName and accessKeyId and secretAccessKey/);
    assert.equal((await h.api<HostSettings>('GET', '/settings')).body.eventBus.enabled, false, 'nothing was saved');
  });

  test('keep the access keys sealed and never answer them (typed client)', async () => {
    const client = new ForgeClient({ baseUrl: h.service.url, credential: h.service.apiKey! });
    const answered = await client.updateSettings({
      errorWebhookUrl: 'https://host.example/forge-errors',
      eventBus: {
        enabled: true,
        busName: 'forge-errors',
        region: 'eu-west-1',
        accessKeyId: 'AKIDSEALEDKEY',
        secretAccessKey: 'very-secret-access-key',
      },
    });
    assert.deepEqual(answered.eventBus, {
      enabled: true,
      busName: 'forge-errors',
      region: 'eu-west-1',
      endpoint: null,
      hasAccessKeys: true,
    });
    assert.deepEqual(await client.getSettings(), answered);
    const stored = (await h.service.store.settings.get('hostSettings'))!;
    for (const secret of ['AKIDSEALEDKEY', 'very-secret-access-key']) {
      assert.ok(!JSON.stringify(answered).includes(secret), 'the answer holds no key');
      assert.ok(!stored.includes(secret), 'the keys are stored sealed');
    }
    // Fields left out keep their value; null clears one.
    const cleared = await client.updateSettings({ errorWebhookUrl: null, eventBus: { enabled: false } });
    assert.equal(cleared.errorWebhookUrl, null);
    assert.equal(cleared.eventBus.busName, 'forge-errors');
    assert.equal(cleared.eventBus.hasAccessKeys, true);
  });
});

describe('error webhook delivery', () => {
  let h: Harness;
  const receiver = new Receiver();
  before(async () => {
    h = await startHarness({ delivery: FAST });
  });
  after(async () => {
    await h.close();
    await receiver.down();
  });

  test('a failed execution is POSTed to the error webhook with its error log entry as the body', async () => {
    await receiver.up();
    await h.api('PUT', '/settings', { errorWebhookUrl: receiver.url });
    const child = await (await newUser(h)).install(REFUSE);
    await sendWebhook(h, child, { orderId: 7 });
    await receiver.waitFor(1);
    const [entry] = await errorsOf(h, child);
    assert.deepEqual(receiver.received[0]!.body, entry);
    assert.equal(receiver.received[0]!.headers['content-type'], 'application/json');
    await until(async () => (await backlog(h, 'webhook')).pending === 0);
    assert.equal(receiver.received.length, 1);
  });

  test('a receiver that is down, then up, gets every entry exactly once', async () => {
    await receiver.down();
    receiver.received.length = 0;
    const child = await (await newUser(h)).install(REFUSE);
    for (const orderId of [1, 2, 3]) await sendWebhook(h, child, { orderId });
    // Each has failed at least once, and waits.
    await until(async () =>
      (await h.service.store.deliveries.due(Number.MAX_SAFE_INTEGER, 10)).every((d) => d.attempts >= 2),
    );
    const waiting = await backlog(h, 'webhook');
    assert.equal(waiting.pending, 3);
    assert.match(waiting.lastError!, /ECONNREFUSED/);
    assert.deepEqual((await h.api<HostSettings>('GET', '/settings')).body.deliveries.webhook, waiting);
    assert.equal(receiver.received.length, 0);

    await receiver.up();
    await receiver.waitFor(3);
    await until(async () => (await backlog(h, 'webhook')).pending === 0);
    const ids = (await errorsOf(h, child)).map((e) => e._id).sort();
    assert.deepEqual(receiver.received.map((r) => r.body._id).sort(), ids);

    await sendWebhook(h, child, { orderId: 4 });
    await receiver.waitFor(4);
    await until(async () => (await backlog(h, 'webhook')).pending === 0);
    assert.equal(receiver.received.length, 4, 'only the new entry was sent');
  });

  test('a receiver answering 500 is retried until it answers 2xx', async () => {
    let calls = 0;
    const flaky = await new Receiver(() =>
      ++calls <= 2 ? { status: 500, body: { error: 'busy' } } : { status: 200, body: {} },
    ).up();
    await h.api('PUT', '/settings', { errorWebhookUrl: flaky.url });
    const child = await (await newUser(h)).install(REFUSE);
    await sendWebhook(h, child, { orderId: 'flaky' });
    await flaky.waitFor(3);
    await until(async () => (await backlog(h, 'webhook')).pending === 0);
    assert.equal(flaky.received.length, 3);
    assert.ok(
      flaky.received.every((r) => r.body.error === 'Refused order flaky'),
      'each attempt carried the entry',
    );
    await flaky.down();
  });

  test('clearing the URL drops what waited for it', async () => {
    await receiver.down();
    await h.api('PUT', '/settings', { errorWebhookUrl: receiver.url });
    const child = await (await newUser(h)).install(REFUSE);
    await sendWebhook(h, child, { orderId: 'dropped' });
    assert.equal((await backlog(h, 'webhook')).pending, 1);
    await h.api('PUT', '/settings', { errorWebhookUrl: null });
    assert.equal((await backlog(h, 'webhook')).pending, 0);
    await sendWebhook(h, child, { orderId: 'not queued' });
    assert.equal((await backlog(h, 'webhook')).pending, 0);
  });
});

test('entries not yet delivered survive a restart and are delivered after it, once each', async () => {
  const db = join(mkdtempSync(join(tmpdir(), 'forge-restart-')), 'forge.db');
  const receiver = new Receiver();
  await receiver.up();
  await receiver.down();
  // Before the restart, retries are far apart: only the restart can bring the entries out.
  const first = await startHarness({ db, delivery: { backoff: () => 60 * 60 * 1000 } });
  await first.api('PUT', '/settings', { errorWebhookUrl: receiver.url });
  const child = await (await newUser(first)).install(REFUSE);
  for (const orderId of ['before-1', 'before-2']) await sendWebhook(first, child, { orderId });
  await until(async () => (await first.service.store.deliveries.backlog('webhook')).lastError !== null);
  const ids = (await errorsOf(first, child)).map((e) => e._id).sort();
  await first.close();

  await receiver.up();
  const second = await startHarness({ db, delivery: FAST });
  try {
    await receiver.waitFor(2);
    await until(async () => (await backlog(second, 'webhook')).pending === 0);
    assert.deepEqual(receiver.received.map((r) => r.body._id).sort(), ids);
  } finally {
    await second.close();
    await receiver.down();
  }
});

describe('event bus delivery', () => {
  let h: Harness;
  let busCalls = 0;
  // A stand-in for EventBridge: the first call fails as the service would when busy, then it accepts.
  const bus = new Receiver(() =>
    ++busCalls === 1
      ? { status: 500, body: { __type: 'InternalException', message: 'Try again' } }
      : { status: 200, body: { Entries: [{ EventId: `event-${busCalls}` }], FailedEntryCount: 0 } },
  );
  before(async () => {
    h = await startHarness({ delivery: FAST });
    await bus.up();
  });
  after(async () => {
    await h.close();
    await bus.down();
  });

  test('while on, each error entry goes to the bus through the EventBridge client, retried after a failure', async () => {
    const settings = await h.api<HostSettings>('PUT', '/settings', {
      eventBus: {
        enabled: true,
        busName: 'forge-errors',
        region: 'eu-west-1',
        endpoint: `http://127.0.0.1:${bus.port}`,
        accessKeyId: 'AKIDFORGETEST',
        secretAccessKey: 'bus-secret',
      },
    });
    assert.equal(settings.status, 200);
    const child = await (await newUser(h)).install(REFUSE);
    await sendWebhook(h, child, { orderId: 'to the bus' });
    await bus.waitFor(2);
    await until(async () => (await backlog(h, 'eventBus')).pending === 0);
    assert.equal(bus.received.length, 2, 'one failed attempt, one delivery');

    const [entry] = await errorsOf(h, child);
    const { headers, body } = bus.received[1]!;
    assert.equal(headers['x-amz-target'], 'AWSEvents.PutEvents');
    assert.equal(headers['content-type'], 'application/x-amz-json-1.1');
    assert.match(
      String(headers.authorization),
      /^AWS4-HMAC-SHA256 Credential=AKIDFORGETEST\/\d{8}\/eu-west-1\/events\/aws4_request/,
    );
    assert.ok(!JSON.stringify(bus.received).includes('bus-secret'), 'the secret key signs, it is never sent');
    assert.equal(body.Entries.length, 1);
    const [event] = body.Entries;
    assert.equal(event.Source, 'forge.workflows');
    assert.equal(event.DetailType, 'Workflow Execution Failed');
    assert.equal(event.EventBusName, 'forge-errors');
    assert.deepEqual(JSON.parse(event.Detail), entry);
  });

  test('switched off, nothing more goes to the bus', async () => {
    await h.api('PUT', '/settings', { eventBus: { enabled: false } });
    const child = await (await newUser(h)).install(REFUSE);
    await sendWebhook(h, child, { orderId: 'not to the bus' });
    assert.equal((await errorsOf(h, child)).length, 1);
    // The entry was stored with no delivery for the bus: nothing can be sent later either.
    assert.equal((await backlog(h, 'eventBus')).pending, 0);
    assert.equal((await h.service.store.deliveries.due(Number.MAX_SAFE_INTEGER, 10)).length, 0);
  });
});
