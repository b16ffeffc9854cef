/**
 * The red team's findings of issue 28, each held by a test that failed on the code before its
 * fix: the event bus's address rule and what GET /settings tells of an endpoint's answer (M1),
 * expression parsing time (L1), how much of an app's answer is read (L2), e-mail uniqueness
 * under Unicode (L3), the key file's owner and kind (L4), the error webhook secret's rotation
 * (L5), the rate of POST /user, and `localhost.`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { chmodSync, chownSync, mkdtempSync, renameSync, symlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { startService } from '../../server/app.js';
import type { Clock } from '../../server/clock.js';
import { sqliteOnly } from './backend.js';
import { B, newUser, PAYMENTS, REFUSE, Receiver, sendWebhook, startHarness, until } from './engine-support.js';
import { assertProblem, TestService } from './support.js';

const run = promisify(execFile);

const busSettings = (endpoint: string) => ({
  eventBus: {
    enabled: true,
    busName: 'forge-errors',
    region: 'eu-west-1',
    endpoint,
    accessKeyId: 'AKIDFORGETEST',
    secretAccessKey: 'bus-secret',
  },
});

describe('M1: the event bus follows the error webhook address rule', () => {
  let forge: TestService;
  before(async () => {
    forge = await TestService.start();
  });
  after(() => forge.close());

  for (const endpoint of [
    'http://127.0.0.1:4566',
    'http://[::1]:4566',
    'http://169.254.169.254/',
    'http://localhost.:4566',
  ]) {
    test(`PUT /settings refuses the bus endpoint ${endpoint}`, async () => {
      const answer = await forge.asHost('PUT', '/settings', busSettings(endpoint));
      assertProblem(answer, 400, { detail: /private|this machine/ });
      assert.equal(answer.body.errors[0].path, 'body.eventBus.endpoint');
      assert.match(answer.body.errors[0].message, /^endpoint must be a public address: .*--allow-private-webhooks/);
      assert.equal((await forge.asHost('GET', '/settings')).body.eventBus.endpoint, null);
    });
  }

  test('PUT /settings refuses localhost. as the error webhook, as delivery would', async () => {
    const answer = await forge.asHost('PUT', '/settings', { errorWebhookUrl: 'http://localhost.:9000/errors' });
    assertProblem(answer, 400, { detail: /this machine/ });
    assert.equal(answer.body.errors[0].path, 'body.errorWebhookUrl');
  });
});

describe('M1: GET /settings never shows what an endpoint answered', () => {
  const INTERNAL = 'internal-answer-7f3e';
  let h: Awaited<ReturnType<typeof startHarness>>;
  // An endpoint inside the network (allowed here with allowPrivateWebhooks) that answers with
  // text a prober would want to read.
  const bus = new Receiver(() => ({ status: 500, body: { __type: `${INTERNAL}Exception`, message: INTERNAL } }));
  const hook = new Receiver(() => ({ status: 500, body: { message: INTERNAL } }));
  before(async () => {
    h = await startHarness({ delivery: { backoff: () => 60_000 } });
    await bus.up();
    await hook.up();
  });
  after(async () => {
    await h.close();
    await bus.down();
    await hook.down();
  });

  test('lastError says the status, not the answer', async () => {
    assert.equal(
      (await h.api('PUT', '/settings', { errorWebhookUrl: hook.url, ...busSettings(`http://127.0.0.1:${bus.port}`) }))
        .status,
      200,
    );
    const child = await (await newUser(h)).install(REFUSE);
    await sendWebhook(h, child, { orderId: 'to a prober' });
    await bus.waitFor(1);
    await hook.waitFor(1);
    let settings = (await h.api('GET', '/settings')).body;
    await until(async () => {
      settings = (await h.api('GET', '/settings')).body;
      return settings.deliveries.eventBus.lastError !== null && settings.deliveries.webhook.lastError !== null;
    });
    assert.equal(settings.deliveries.eventBus.lastError, 'the event bus answered 500');
    assert.match(settings.deliveries.webhook.lastError, /answered 500$/);
    assert.ok(!JSON.stringify(settings).includes(INTERNAL), JSON.stringify(settings.deliveries));
  });
});

describe('L1: expressions are found in time linear in the text', () => {
  test('a 100 KB value of "{{" and spaces with no end is evaluated', async () => {
    // In a process of its own, so that the old cubic pattern, which never came back, fails the
    // test when the process is ended instead of holding the test process.
    const source = `
      import { evaluateText } from ${JSON.stringify(new URL('../../server/engine/expressions.ts', import.meta.url).href)};
      const scope = { outputs: new Map(), blockNames: new Map(), vars: {}, env: {} };
      const text = '{{' + ' '.repeat(100_000) + 'x';
      process.stdout.write(String(evaluateText(text, scope) === text));`;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', source], {
      timeout: 30_000,
    }).catch((error: Error & { killed?: boolean }) => {
      throw new Error(error.killed ? 'no answer within 30 s: the parse backtracks' : error.message);
    });
    assert.equal(stdout, 'true', 'a text with no complete expression stays as it is');
  });
});

describe('L2: the HTTP block reads an answer as it streams and stops at 256 KB', () => {
  let app: Server;
  let closed = 0;
  let h: Awaited<ReturnType<typeof startHarness>>;
  before(async () => {
    // An app that sends 300 KB and then never ends its answer: reading it whole never finishes.
    app = createServer((request, response) => {
      request.resume();
      response.socket?.on('close', () => closed++);
      response.writeHead(200, { 'Content-Type': 'text/plain' });
      response.write('a'.repeat(300 * 1024));
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    h = await startHarness({
      sandboxUrl: `http://127.0.0.1:${(app.address() as AddressInfo).port}`,
      httpTimeoutMs: 60_000,
    });
  });
  after(async () => {
    await h.close();
    app.closeAllConnections();
    await new Promise((resolve) => app.close(resolve));
  });

  test('the run goes on with the first 256 KB, and the connection is let go', async () => {
    const child = await (await newUser(h)).install(PAYMENTS);
    await sendWebhook(h, child, { amount: 20, customer: { name: 'Ada' } });
    let runs: Array<{
      finished: boolean;
      results: Array<{ blockId: string; data: Array<Array<{ json: { status: number; body: string } }>> }>;
    }> = [];
    await until(async () => {
      runs = (await h.api('GET', `/workflow/${child}/logs`)).body.data;
      return runs.length === 1;
    });
    const post = runs[0]!.results.find((r) => r.blockId === B.post)!;
    assert.equal(post.data[0]![0]!.json.status, 200);
    assert.equal(post.data[0]![0]!.json.body, 'a'.repeat(256 * 1024));
    await until(() => closed === 1, 'the service closes the connection to the app');
  });
});

describe('L3: one user per e-mail, however it is spelled in Unicode', () => {
  let forge: TestService;
  before(async () => {
    forge = await TestService.start();
  });
  after(() => forge.close());

  const create = (email: string) => forge.asHost('POST', '/user', { name: 'Renée', email });

  test('NFC and NFD, upper and lower case, fullwidth letters and a trailing dot are the same address', async () => {
    assert.equal((await create('ren\u00e9e@example.com')).status, 200);
    for (const same of [
      'rene\u0301e@example.com',
      'REN\u00c9E@Example.COM',
      'ren\u00e9e@example.com.',
      're\uff4e\u00e9e@example.com',
    ]) {
      const answer = await create(same);
      assertProblem(answer, 409, { detail: /already exists/ });
    }
    const users = (await forge.asHost('GET', '/user')).body.data as Array<{ email: string }>;
    assert.deepEqual(
      users.map((u) => u.email),
      ['ren\u00e9e@example.com'],
    );
  });

  test('an invisible or control character is refused with a 400 that names it', async () => {
    for (const [email, code] of [
      ['ren\u200bee@example.com', 'U+200B'],
      ['renee\u202e@example.com', 'U+202E'],
      ['renee@exa\u0007mple.com', 'U+0007'],
    ] as const) {
      const answer = await create(email);
      assertProblem(answer, 400, {
        detail: new RegExp(`invisible or control character \\(${code.replace('+', '\\+')}\\)`),
      });
      assert.equal(answer.body.errors[0].path, 'body.email');
    }
  });

  test('PATCH /user/:id normalizes the same way', async () => {
    const { userId } = await forge.createUser();
    const answer = await forge.asHost('PATCH', `/user/${userId}`, {
      email: 'RENE\u0301E@example.com.',
      fullName: 'Other',
    });
    assertProblem(answer, 409, { detail: /already exists/ });
  });
});

describe('L4: the key file must be a regular file of the service account, mode 600', { skip: sqliteOnly }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'forge-key-'));

  test('a symlink to a good key file is refused', async () => {
    const db = join(dir, 'linked.db');
    const forge = await TestService.start({ db });
    await forge.close();
    renameSync(`${db}.key`, join(dir, 'real.key'));
    symlinkSync(join(dir, 'real.key'), `${db}.key`);
    await assert.rejects(startService({ port: 0, db, scheduler: false }), /is a symbolic link/);
  });

  test('a 0600 key file owned by another account is refused', {
    skip: process.getuid?.() !== 0 && 'needs root to give the file away',
  }, async () => {
    const db = join(dir, 'owned.db');
    const forge = await TestService.start({ db });
    await forge.close();
    chownSync(`${db}.key`, 65534, 65534);
    chmodSync(`${db}.key`, 0o600);
    await assert.rejects(startService({ port: 0, db, scheduler: false }), /belongs to another account \(uid 65534\)/);
    chownSync(`${db}.key`, 0, 0);
    await (await TestService.start({ db })).close();
  });
});

describe('L5: the error webhook secret rotates, with a grace period where both sign', () => {
  let now = Date.parse('2026-03-01T12:00:00.000Z');
  const clock: Clock = { now: () => now, onJump: () => () => {} };
  const receiver = new Receiver();
  let h: Awaited<ReturnType<typeof startHarness>>;
  before(async () => {
    await receiver.up();
    h = await startHarness({ clock, webhookSecretGraceMs: 60 * 60 * 1000 });
  });
  after(async () => {
    await h.close();
    await receiver.down();
  });

  const signaturesOf = (index: number) => {
    const { headers, body } = receiver.received[index]!;
    const parts = String(headers['forge-signature']).split(',');
    const t = parts.find((p) => p.startsWith('t='))!.slice(2);
    const v1 = parts.filter((p) => p.startsWith('v1=')).map((p) => p.slice(3));
    const sign = (secret: string) =>
      createHmac('sha256', secret)
        .update(`${t}.${JSON.stringify(body)}`)
        .digest('hex');
    return { v1, sign };
  };

  test('only the API key rotates it', async () => {
    const { token } = await newUser(h);
    assert.equal((await h.api('POST', '/settings/rotateErrorWebhookSecret', undefined, token)).status, 403);
  });

  test('after a rotation both secrets sign until the grace period ends, then only the new one', async () => {
    const old = (await h.api('GET', '/settings')).body.errorWebhookSecret;
    await h.api('PUT', '/settings', { errorWebhookUrl: receiver.url });
    const rotated = await h.api('POST', '/settings/rotateErrorWebhookSecret');
    assert.equal(rotated.status, 200);
    assert.match(rotated.body.errorWebhookSecret, /^whsec_/);
    assert.notEqual(rotated.body.errorWebhookSecret, old);
    assert.equal(rotated.body.previousSecretValidUntil, new Date(now + 60 * 60 * 1000).toISOString());
    assert.equal((await h.api('GET', '/settings')).body.errorWebhookSecret, rotated.body.errorWebhookSecret);

    const child = await (await newUser(h)).install(REFUSE);
    await sendWebhook(h, child, { orderId: 'in the grace period' });
    await receiver.waitFor(1);
    const during = signaturesOf(0);
    assert.deepEqual(during.v1, [during.sign(rotated.body.errorWebhookSecret), during.sign(old)]);

    now += 60 * 60 * 1000 + 1;
    await sendWebhook(h, child, { orderId: 'after it' });
    await receiver.waitFor(2);
    const afterwards = signaturesOf(1);
    assert.deepEqual(afterwards.v1, [afterwards.sign(rotated.body.errorWebhookSecret)]);
  });
});

describe('POST /user is rate-limited per API key', () => {
  let forge: TestService;
  before(async () => {
    forge = await TestService.start({ rateLimits: { user: { limit: 3, windowSeconds: 60 } } });
  });
  after(() => forge.close());

  test('past the limit, 429 with Retry-After', async () => {
    for (let i = 0; i < 3; i++) await forge.createUser();
    const refused = await forge.asHost('POST', '/user', { name: 'One too many', email: 'many@example.com' });
    assertProblem(refused, 429, { detail: /Too many users/ });
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
  });
});
