/**
 * Error deliveries have an attempt cap, then a dead letter the host lists and resends with the
 * API key; only the instance holding a delivery's lease can finish it (issue 27, item 5). On
 * SQLite, and on PostgreSQL with FORGE_TEST_POSTGRES.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ErrorLogEntry, HostSettings } from '../../src/api/types.js';
import { type Harness, newUser, REFUSE, Receiver, sendWebhook, startHarness, until } from './engine-support.js';

const MAX_ATTEMPTS = 3;

const errorsOf = async (h: Harness, childId: string) =>
  (await h.api<{ errors: ErrorLogEntry[] }>('GET', `/workflow/${childId}/errors`)).body.errors;

const webhookBacklog = async (h: Harness) => (await h.api<HostSettings>('GET', '/settings')).body.deliveries.webhook;

describe('dead letters', () => {
  let h: Harness;
  let failing = true;
  const receiver = new Receiver(() => (failing ? { status: 500, body: { error: 'down' } } : { status: 204, body: '' }));
  let child: string;
  before(async () => {
    h = await startHarness({ delivery: { backoff: () => 20, maxAttempts: MAX_ATTEMPTS } });
    await receiver.up();
    await h.api('PUT', '/settings', { errorWebhookUrl: receiver.url });
    child = await (await newUser(h)).install(REFUSE);
  });
  after(async () => {
    await h.close();
    await receiver.down();
  });

  test('a delivery that failed its last allowed attempt is a dead letter, listed for the host, and tried no more', async () => {
    await sendWebhook(h, child, { orderId: 'capped' });
    await until(async () => (await webhookBacklog(h)).deadLetters === 1, 'a dead letter');
    assert.deepEqual(await webhookBacklog(h), {
      pending: 0,
      deadLetters: 1,
      lastError: `the error webhook ${receiver.url} answered 500`,
    });
    assert.equal(receiver.received.length, MAX_ATTEMPTS);

    const [entry] = await errorsOf(h, child);
    const listed = await h.api('GET', '/deadLetters');
    assert.equal(listed.status, 200);
    assert.equal(listed.body.data.length, 1);
    const [letter] = listed.body.data;
    assert.deepEqual(letter, {
      channel: 'webhook',
      attempts: MAX_ATTEMPTS,
      lastError: `the error webhook ${receiver.url} answered 500`,
      deadAt: letter.deadAt,
      entry,
    });
    assert.match(letter.deadAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.ok(letter.deadAt >= entry!.createdAt, 'given up on after the entry was made');
    assert.deepEqual((await h.api('GET', '/deadLetters?channel=eventBus')).body, { data: [] });
    assert.deepEqual((await h.api('GET', '/deadLetters?page=2&limit=1')).body, { data: [] });

    // A new failure wakes the worker: the dead letter stays where it is.
    await sendWebhook(h, child, { orderId: 'second' });
    await until(async () => (await webhookBacklog(h)).deadLetters === 2, 'a second dead letter');
    assert.equal(receiver.received.length, 2 * MAX_ATTEMPTS);
  });

  test('resending delivers a dead letter once its receiver is back, with a new count of attempts', async () => {
    failing = false;
    const before = receiver.received.length;
    const [first] = (await h.api('GET', '/deadLetters')).body.data;
    const resent = await h.api('POST', '/deadLetters/resend', { errorIds: [first.entry._id], channel: 'webhook' });
    assert.deepEqual(resent, { status: 200, body: { resent: 1 } });
    await receiver.waitFor(before + 1);
    await until(async () => (await webhookBacklog(h)).deadLetters === 1, 'the resent one delivered');
    assert.deepEqual(receiver.received[before]!.body, first.entry);
    assert.equal((await webhookBacklog(h)).pending, 0);

    // Without errorIds: every dead letter (of the channel).
    const all = await h.api('POST', '/deadLetters/resend', { channel: 'webhook' });
    assert.deepEqual(all.body, { resent: 1 });
    await until(async () => (await webhookBacklog(h)).deadLetters === 0, 'every dead letter delivered');
    await until(async () => (await webhookBacklog(h)).pending === 0, 'an empty outbox');
    assert.equal(receiver.received.length, before + 2, 'each resent entry arrived once');
    assert.deepEqual((await h.api('GET', '/deadLetters')).body, { data: [] });
    assert.deepEqual((await h.api('POST', '/deadLetters/resend', {})).body, { resent: 0 });
  });

  test('bad input is a 4xx that says what to send', async () => {
    const unknown = '0123456789abcdef01234567';
    const notDead = await h.api('POST', '/deadLetters/resend', { errorIds: [unknown] });
    assert.equal(notDead.status, 404);
    assert.match(notDead.body.detail, new RegExp(`${unknown}; nothing was resent\\. GET /deadLetters lists them`));
    for (const [body, field] of [
      [{ errorIds: [] }, 'body.errorIds'],
      [{ errorIds: ['not-an-id'] }, 'body.errorIds.0'],
      [{ channel: 'email' }, 'body.channel'],
      [{ colour: 'red' }, 'body.colour'],
    ] as const) {
      const refused = await h.api('POST', '/deadLetters/resend', body);
      assert.equal(refused.status, 400, JSON.stringify(body));
      assert.deepEqual(
        refused.body.errors.map((e: { path: string }) => e.path),
        [field],
      );
    }
    // An array's item is named by the array and its index (it read "0: Must be …").
    const badId = await h.api('POST', '/deadLetters/resend', { errorIds: ['not-an-id'] });
    assert.equal(badId.body.errors[0].message, 'errorIds[0] must be an error log entry’s _id: 24 hex digits.');
    const noBody = await h.api('POST', '/deadLetters/resend');
    assert.equal(noBody.status, 400);
    assert.match(noBody.body.detail, /JSON body/);
    for (const query of ['limit=101', 'page=0', 'channel=email']) {
      const refused = await h.api('GET', `/deadLetters?${query}`);
      assert.equal(refused.status, 400, query);
    }
  });

  test('only the host’s API key lists or resends them: a user token is refused, no credential is a 401', async () => {
    const user = await newUser(h);
    for (const [method, path, body] of [
      ['GET', '/deadLetters', undefined],
      ['POST', '/deadLetters/resend', {}],
    ] as const) {
      const asUser = await h.api(method, path, body, user.token);
      assert.equal(asUser.status, 403, `${method} ${path} with a user token`);
      assert.match(asUser.body.detail, /API key/);
      const anonymous = await fetch(`${h.service.url}/forge/2021-12${path}`, {
        method,
        headers: body ? { 'Content-Type': 'application/json' } : {},
        body: body ? JSON.stringify(body) : undefined,
      });
      assert.equal(anonymous.status, 401, `${method} ${path} without a credential`);
    }
  });
});

describe('a delivery lease', () => {
  let h: Harness;
  const receiver = new Receiver(() => ({ status: 503, body: {} }));
  before(async () => {
    // The service's own worker fails the first attempt, then waits an hour: the test leases by hand.
    h = await startHarness({ delivery: { backoff: () => 60 * 60 * 1000 } });
    await receiver.up();
    await h.api('PUT', '/settings', { errorWebhookUrl: receiver.url });
  });
  after(async () => {
    await h.close();
    await receiver.down();
  });

  test('only its holder finishes a delivery: a holder whose lease ran out and was taken changes nothing', async () => {
    const child = await (await newUser(h)).install(REFUSE);
    await sendWebhook(h, child, { orderId: 'leased' });
    await until(async () => (await webhookBacklog(h)).lastError !== null, 'the first attempt');
    const outbox = h.service.store.deliveries;
    const [entry] = await errorsOf(h, child);
    // Two hours on (the shift moves the database's clock as a test clock would): it is due.
    const later = 2 * 60 * 60 * 1000;
    const leaseMs = 30_000;
    const byA = await outbox.leaseNext('instance-a', leaseMs, later);
    assert.equal(byA?.entry._id, entry!._id);
    assert.equal(await outbox.leaseNext('instance-b', leaseMs, later), undefined, 'A’s lease holds');
    // A stalls past its lease; B takes the delivery.
    const byB = await outbox.leaseNext('instance-b', leaseMs, later + leaseMs + 1_000);
    assert.equal(byB?.entry._id, entry!._id);

    const failed = { attempts: 5, lastError: 'stale', shiftMs: later };
    assert.equal(await outbox.finish(entry!._id, 'webhook', 'instance-a'), false);
    assert.equal(await outbox.postpone(entry!._id, 'webhook', 'instance-a', { ...failed, retryInMs: 0 }), false);
    assert.equal(await outbox.deadLetter(entry!._id, 'webhook', 'instance-a', failed), false);
    await outbox.release(entry!._id, 'webhook', 'instance-a');
    const backlog = await webhookBacklog(h);
    assert.equal(backlog.pending, 1);
    assert.match(backlog.lastError!, /answered 503$/, 'A’s failure was recorded');
    assert.equal(await outbox.leaseNext('instance-c', leaseMs, later + leaseMs + 2_000), undefined, 'B still holds it');

    assert.equal(await outbox.finish(entry!._id, 'webhook', 'instance-b'), true);
    assert.deepEqual(await webhookBacklog(h), { pending: 0, deadLetters: 0, lastError: null });
  });

  test('due times follow the database’s clock: an entry postponed for a minute is not due until then', async () => {
    const child = await (await newUser(h)).install(REFUSE);
    await sendWebhook(h, child, { orderId: 'timed' });
    await until(async () => (await webhookBacklog(h)).lastError !== null, 'the first attempt');
    const outbox = h.service.store.deliveries;
    const taken = await outbox.leaseNext('instance-a', 30_000, 2 * 60 * 60 * 1000);
    assert.ok(taken);
    assert.equal(
      await outbox.postpone(taken.entry._id, 'webhook', 'instance-a', {
        attempts: 2,
        retryInMs: 60_000,
        lastError: 'later',
        shiftMs: 0,
      }),
      true,
    );
    const wait = await outbox.msUntilNext(0);
    assert.ok(wait !== undefined && wait > 50_000 && wait <= 60_000, `due in ${wait} ms`);
    assert.equal(await outbox.leaseNext('instance-a', 30_000, 0), undefined, 'not due yet');
    assert.equal((await outbox.leaseNext('instance-a', 30_000, 61_000))?.entry._id, taken.entry._id);
    assert.equal(await outbox.finish(taken.entry._id, 'webhook', 'instance-a'), true);
  });
});
