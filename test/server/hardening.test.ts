/**
 * Regression tests for what a red team and a fuzzer found (issue "Hardening"): each test
 * failed on the service before its fix. OAuth's binding to the browser lives in
 * credentials.test.ts, rate limits in rate-limit.test.ts.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { startService } from '../../server/app.js';
import { generateApiKey, TOKEN_AUDIENCE, TOKEN_ISSUER } from '../../server/auth.js';
import { isPublicAddress } from '../../server/engine/public-address.js';
import { sqliteOnly } from './backend.js';
import { assertProblem, TestService } from './support.js';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'forge-hardening-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Everything SQLite keeps of a database on disk: the file and its write-ahead log. */
const bytesOnDisk = (db: string) =>
  [db, `${db}-wal`]
    .filter(existsSync)
    .map((file) => readFileSync(file).toString('latin1'))
    .join('');

/** A small HTTP server that records what reaches it and answers as told. */
class Capture {
  readonly requests: Array<{ method: string; url: string; headers: IncomingHttpHeaders; body: string }> = [];
  private server?: Server;
  url = '';

  constructor(
    private readonly answer: (url: string) => {
      status: number;
      headers?: Record<string, string>;
      body?: string;
    } = () => ({
      status: 200,
      body: '{}',
    }),
  ) {}

  async up(): Promise<this> {
    this.server = createServer(async (req, res) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      this.requests.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const { status, headers = {}, body: text = '' } = this.answer(req.url!);
      res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(text);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async down(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

/** Waits for `check` to hold (a delivery arriving in the background), failing after 10 s. */
async function eventually(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// A catalog made for these tests: a webhook workflow whose variables go into an HTTP block's
// URL path, with variables named like the members of every JavaScript object.
const BLOCK = {
  hook: 'f1111111-1111-4111-8111-111111111111',
  vars: 'f2222222-2222-4222-8222-222222222222',
  call: 'f3333333-3333-4333-8333-333333333333',
  fail: 'f4444444-4444-4444-8444-444444444444',
};
const PATHS = 'wf-paths';
const FAILS = 'wf-fails';

function writeCatalog(): string {
  const path = join(mkdtempSync(join(dir, 'catalog-')), 'catalog.json');
  const variable = (n: number, name: string, value: string | number) => ({
    uuid: `e${n}111111-1111-4111-8111-111111111111`,
    name,
    value,
  });
  writeFileSync(
    path,
    JSON.stringify({
      integrations: [],
      workflows: [
        {
          workflowId: PATHS,
          name: 'Look a file up',
          integrations: [],
          blocks: [
            { name: 'Hook', id: BLOCK.hook, type: 'webhook', parameters: {} },
            {
              name: 'Settings',
              id: BLOCK.vars,
              type: 'variables',
              parameters: {
                variables: [
                  variable(1, 'folder', 'reports'),
                  variable(2, 'constructor', 'built'),
                  variable(3, '__proto__', 'proto'),
                  variable(4, 'count', 3),
                ],
              },
            },
            {
              name: 'Look up',
              id: BLOCK.call,
              type: 'http',
              parameters: { method: 'GET', url: '{{env.SANDBOX_URL}}/files/{{vars.folder}}/index.json' },
            },
          ],
        },
        {
          workflowId: FAILS,
          name: 'Always fails',
          integrations: [],
          blocks: [
            { name: 'Hook', id: 'f5555555-5555-4555-8555-555555555555', type: 'webhook', parameters: {} },
            { name: 'Fail', id: BLOCK.fail, type: 'fail', parameters: { message: 'Refused on purpose.' } },
          ],
        },
      ],
    }),
  );
  return path;
}

describe('item 4 and 13: data at rest', () => {
  test('the database, its -wal and -shm are readable by their owner only', { skip: sqliteOnly }, async () => {
    const db = join(dir, 'modes.db');
    const forge = await TestService.start({ db });
    try {
      await forge.newUser();
      for (const file of [db, `${db}-wal`, `${db}-shm`]) {
        assert.ok(existsSync(file), `${file} is missing`);
        assert.equal(statSync(file).mode & 0o777, 0o600, `${file} is not owner-only`);
      }
    } finally {
      await forge.close();
    }
  });

  test('the file holds neither the token-signing private key nor the generated API key', {
    skip: sqliteOnly,
  }, async () => {
    const db = join(dir, 'secrets.db');
    const forge = await TestService.start({ db });
    const apiKey = forge.apiKey;
    const { userId } = await forge.newUser();
    await forge.close();
    const text = bytesOnDisk(db);
    assert.ok(text.includes(userId), 'the check reads the wrong files');
    assert.ok(!text.includes(apiKey), 'the API key is stored in clear');
    assert.ok(!text.includes(apiKey.slice('forge_sk_'.length)), 'the API key is stored in clear');
    assert.doesNotMatch(text, /"d"\s*:\s*"[\w-]{20,}"/, 'a private JWK is stored in clear');

    // The key still works after a restart, and tokens minted before it still verify.
    const again = await TestService.start({ db });
    try {
      assert.equal(again.service.apiKeyGenerated, false);
      const answer = await again.request('GET', '/user', { credential: apiKey });
      assert.equal(answer.status, 200, answer.text);
    } finally {
      await again.close();
    }
  });

  test('a database of an older version, with both keys in clear, is sealed and hashed on start', async () => {
    const db = join(dir, 'legacy.db');
    const first = await TestService.start({ db });
    const { userId } = await first.newUser();
    // What older versions stored: the API key and the private JWK as they are.
    const legacyKey = generateApiKey();
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const legacyJwk = { ...(await exportJWK(privateKey)), kid: 'legacy-key' };
    await first.store.settings.delete('apiKeyHash');
    await first.store.settings.set('apiKey', legacyKey);
    await first.store.settings.set('signingKey', JSON.stringify(legacyJwk));
    await first.close();

    const again = await TestService.start({ db });
    try {
      assert.equal(again.service.apiKey, legacyKey, 'the key is shown once more, as it will not be again');
      assert.equal(again.service.apiKeyGenerated, false);
      const now = Math.floor(Date.now() / 1000);
      const token = await new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid: 'legacy-key' })
        .setSubject(userId)
        .setIssuer(TOKEN_ISSUER)
        .setAudience(TOKEN_AUDIENCE)
        .setIssuedAt(now)
        .setExpirationTime(now + 600)
        .sign(privateKey);
      assert.equal((await again.asUser(token, 'GET', `/user/${userId}`)).status, 200, 'the signing key was lost');
    } finally {
      await again.close();
    }
    const text = bytesOnDisk(db);
    assert.ok(!text.includes(legacyKey), 'the old API key is still in the file');
    assert.ok(!text.includes(String(legacyJwk.d)), 'the old private key is still in the file');
    const third = await TestService.start({ db }, legacyKey);
    try {
      assert.equal(third.service.apiKey, undefined);
      assert.equal((await third.asHost('GET', '/user')).status, 200);
    } finally {
      await third.close();
    }
  });

  test('a key file beside the database that others can read or write is refused', { skip: sqliteOnly }, async () => {
    const db = join(dir, 'loose.db');
    const forge = await TestService.start({ db });
    await forge.close();
    for (const mode of [0o644, 0o620, 0o604]) {
      chmodSync(`${db}.key`, mode);
      await assert.rejects(startService({ port: 0, db, scheduler: false }), (error: Error) => {
        assert.match(error.message, /key/);
        assert.match(error.message, /chmod 600/);
        return true;
      });
    }
    chmodSync(`${db}.key`, 0o600);
    const fine = await TestService.start({ db });
    await fine.close();
  });
});

describe('item 10: a configured API key needs 32 random characters after the prefix', () => {
  for (const key of ['forge_sk_', 'forge_sk_short', `forge_sk_${'a'.repeat(31)}`, `forge_sk_${' '.repeat(40)}`]) {
    test(JSON.stringify(key), async () => {
      await assert.rejects(startService({ port: 0, db: ':memory:', apiKey: key, scheduler: false }), /32/);
    });
  }
  test('a generated key is accepted', async () => {
    const forge = await TestService.start({ apiKey: generateApiKey() });
    await forge.close();
  });
});

describe('with one service', () => {
  let forge: TestService;
  let sandbox: Capture;
  before(async () => {
    sandbox = await new Capture().up();
    forge = await TestService.start({ catalog: writeCatalog(), sandboxUrl: sandbox.url });
  });
  after(async () => {
    await forge.close();
    await sandbox.down();
  });

  const installPaths = async (variables?: Record<string, Record<string, unknown>>) => {
    const user = await forge.newUser();
    const installed = await forge.asUser(user.token, 'POST', `/workflow/${PATHS}/install`, { variables });
    assert.equal(installed.status, 201, installed.text);
    const childId = installed.body.workflowId as string;
    const hook = (await forge.asHost('GET', `/workflow/${childId}`)).body.webhookUrl as string;
    return { ...user, childId, hook };
  };

  test('item 5: a webhook body nested thousands deep is a 400 before anything runs', async () => {
    const { token, childId, hook } = await installPaths();
    const before = sandbox.requests.length;
    const deep = `${'{"a":'.repeat(4000)}1${'}'.repeat(4000)}`;
    const answer = await forge.request('POST', hook, { body: deep, headers: { 'Content-Type': 'application/json' } });
    assertProblem(answer, 400, { detail: /deep/ });
    assert.equal(sandbox.requests.length, before, 'the workflow ran');
    assert.deepEqual((await forge.asUser(token, 'GET', `/workflow/${childId}/logs`)).body.data, []);
    // A body of ordinary depth still runs.
    const fine = await forge.request('POST', hook, { json: { order: { lines: [{ sku: 'a' }] } } });
    assert.equal(fine.status, 202, fine.text);
  });

  test('item 6: the API key is refused on a request a browser sent, GETs without Origin too', async () => {
    const browsers: Array<Record<string, string>> = [
      { 'Sec-Fetch-Site': 'same-origin', 'Sec-Fetch-Mode': 'cors', 'Sec-Fetch-Dest': 'empty' },
      { 'Sec-Fetch-Site': 'none', 'Sec-Fetch-Mode': 'navigate', 'Sec-Fetch-Dest': 'document' },
      { 'Sec-Fetch-Dest': 'document' },
    ];
    for (const headers of browsers) {
      for (const path of ['/user', `/user/${(await forge.createUser()).userId}/token`]) {
        const answer = await forge.request('GET', path, { credential: forge.apiKey, headers });
        assertProblem(answer, 403, { detail: /backend/ });
      }
    }
    // A backend's fetch (Node's sends Sec-Fetch-Mode: cors, no Sec-Fetch-Site) still works.
    const backend = await forge.request('GET', '/user', {
      credential: forge.apiKey,
      headers: { 'Sec-Fetch-Mode': 'cors' },
    });
    assert.equal(backend.status, 200);
  });

  test('item 9: the webhook URL never reaches the embed surface; the API key reads and rotates it', async () => {
    const { token, childId, hook } = await installPaths();
    assert.match(hook, /\/hooks\/[\w-]{20,}$/);
    const token8 = hook.slice(hook.lastIndexOf('/') + 1);
    const asUser = await forge.asUser(token, 'GET', `/workflow/${childId}`);
    assert.equal(asUser.status, 200);
    const setup = await forge.asUser(token, 'GET', `/setup?workflowId=${PATHS}`);
    const user = await forge.asUser(token, 'GET', `/user/${asUser.body.userId}`);
    for (const answer of [asUser, setup, user]) {
      assert.equal(answer.status, 200);
      assert.ok(!answer.text.includes(token8), `the webhook token reached the page: ${answer.text}`);
    }
    assert.equal(asUser.body.webhookUrl, undefined);

    const rotated = await forge.asHost('POST', `/workflow/${childId}/rotateWebhook`);
    assert.equal(rotated.status, 200, rotated.text);
    assert.notEqual(rotated.body.webhookUrl, hook);
    assert.equal((await forge.asHost('GET', `/workflow/${childId}`)).body.webhookUrl, rotated.body.webhookUrl);
    assertProblem(await forge.request('POST', hook, { json: {} }), 404);
    assert.equal((await forge.request('POST', rotated.body.webhookUrl, { json: {} })).status, 202);
    assertProblem(await forge.asUser(token, 'POST', `/workflow/${childId}/rotateWebhook`), 403);
  });

  test('item 11: DELETE /user erases the e-mail, payloads and webhook token from the file', {
    skip: sqliteOnly,
  }, async () => {
    const db = join(dir, 'erase.db');
    const onDisk = await TestService.start({ db, catalog: writeCatalog(), sandboxUrl: sandbox.url });
    try {
      const { userId, token, email } = await onDisk.newUser();
      const child = (await onDisk.asUser(token, 'POST', `/workflow/${PATHS}/install`, {})).body.workflowId;
      const hook = (await onDisk.asHost('GET', `/workflow/${child}`)).body.webhookUrl as string;
      const payload = `payload-${Math.random().toString(36).slice(2)}`;
      // Waiting for the run: the payload is in its execution, not only in the queued job.
      const sent = await onDisk.request('POST', hook, { json: { secret: payload }, headers: { Prefer: 'wait=30' } });
      assert.equal(sent.status, 200);
      const webhookToken = hook.slice(hook.lastIndexOf('/') + 1);
      const before = bytesOnDisk(db);
      for (const value of [email, payload, webhookToken]) assert.ok(before.includes(value), `${value} not written`);

      assert.equal((await onDisk.asHost('DELETE', `/user/${userId}`)).status, 200);
      const afterDelete = bytesOnDisk(db);
      for (const value of [email, payload, webhookToken]) {
        assert.ok(!afterDelete.includes(value), `${value} is still in the database file`);
      }
    } finally {
      await onDisk.close();
    }
  });

  test('item 12: a variable value never becomes a dot segment of an HTTP block’s path', async () => {
    for (const folder of ['..', '.', '%2e%2e', '.%2E', '..%2F..']) {
      const { token, childId, hook } = await installPaths({ [BLOCK.vars]: { folder } });
      const before = sandbox.requests.length;
      const run = await forge.request('POST', hook, { json: {}, headers: { Prefer: 'wait=30' } });
      assert.equal(run.status, 200, run.text);
      const reached = sandbox.requests.slice(before).map((r) => r.url);
      for (const url of reached) assert.match(url, /^\/files\/[^/]+\/index\.json$/, `${folder} walked to ${url}`);
      if (reached.length === 0) {
        const [error] = (await forge.asUser(token, 'GET', `/workflow/${childId}/errors`)).body.errors;
        assert.match(error.error, /path/, `${folder}: ${error.error}`);
      }
    }
    // Dots inside a segment are fine.
    const { hook } = await installPaths({ [BLOCK.vars]: { folder: 'v1.2' } });
    const before = sandbox.requests.length;
    await forge.request('POST', hook, { json: {}, headers: { Prefer: 'wait=30' } });
    assert.equal(sandbox.requests[before]?.url, '/files/v1.2/index.json');
  });

  test('item 14: variables named constructor and __proto__ save, read back and run', async () => {
    const { token, childId, hook } = await installPaths();
    const read = await forge.asUser(token, 'GET', `/workflow/${childId}`);
    const values = () =>
      Object.fromEntries(
        read.body.blocks
          .find((b: { id: string }) => b.id === BLOCK.vars)
          .parameters.variables.map((v: { name: string; value: unknown }) => [v.name, v.value]),
      );
    assert.deepEqual(values(), { folder: 'reports', constructor: 'built', ['__proto__']: 'proto', count: 3 });
    const saved = await forge.asUser(token, 'PATCH', `/workflow/${childId}/variables/${BLOCK.vars}`, {
      constructor: 'changed',
      ['__proto__']: 'also changed',
    });
    assert.equal(saved.status, 200, saved.text);
    assert.deepEqual(
      saved.body.variables.map((v: { name: string; value: unknown }) => [v.name, v.value]),
      [
        ['folder', 'reports'],
        ['constructor', 'changed'],
        ['__proto__', 'also changed'],
        ['count', 3],
      ],
    );
    const run = await forge.request('POST', hook, { json: {}, headers: { Prefer: 'wait=30' } });
    assert.equal(run.status, 200);
    assert.equal(run.body.finished, true, run.text);
  });

  test('item 15: a string is accepted for a numeric variable; a numeric one is stored as a number', async () => {
    const { token, childId } = await installPaths({ [BLOCK.vars]: { count: '7' } });
    const variablesOf = async () =>
      (await forge.asUser(token, 'GET', `/workflow/${childId}`)).body.blocks.find(
        (b: { id: string }) => b.id === BLOCK.vars,
      ).parameters.variables;
    assert.equal((await variablesOf()).find((v: { name: string }) => v.name === 'count').value, 7);
    const path = `/workflow/${childId}/variables/${BLOCK.vars}`;
    for (const [sent, stored] of [
      ['12', 12],
      [' 4.5 ', 4.5],
      ['three', 'three'],
      [9, 9],
    ] as const) {
      const answer = await forge.asUser(token, 'PATCH', path, { count: sent });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.body.variables.find((v: { name: string }) => v.name === 'count').value, stored);
    }
    assertProblem(await forge.asUser(token, 'PATCH', path, { count: true }), 400, { errors: ['body.count'] });
  });

  test('item 16: the logs query has one rule: empty is the default, only plain whole numbers', async () => {
    const { childId, token } = await installPaths();
    for (const query of ['order=', 'page=', 'limit=', 'page=&limit=&order=', 'limit=30', 'page=2']) {
      const answer = await forge.asUser(token, 'GET', `/workflow/${childId}/logs?${query}`);
      assert.equal(answer.status, 200, `${query}: ${answer.text}`);
    }
    for (const query of ['limit=1e1', 'limit=%2B5', 'limit=010', 'page=1.0', 'page=0x1', 'limit= 5', 'page=-1']) {
      assertProblem(await forge.asUser(token, 'GET', `/workflow/${childId}/logs?${query}`), 400, {
        detail: /whole number/,
      });
    }
  });
});

describe('item 14: token claims', () => {
  let forge: TestService;
  before(async () => {
    forge = await TestService.start();
  });
  after(() => forge.close());

  test('a token issued "in the future" is refused even though exp - iat is 30 minutes', async () => {
    const { userId } = await forge.createUser();
    const now = Math.floor(Date.now() / 1000);
    const iat = now + 24 * 3600;
    const future = await forge.signedByService({ sub: userId, iat, exp: iat + 1800 });
    assertProblem(await forge.asUser(future, 'GET', `/user/${userId}`), 401);
    const fine = await forge.signedByService({ sub: userId, iat: now, exp: now + 1800 });
    assert.equal((await forge.asUser(fine, 'GET', `/user/${userId}`)).status, 200);
  });

  test('a token whose kid names another key is refused', async () => {
    const { userId } = await forge.createUser();
    const now = Math.floor(Date.now() / 1000);
    const token = await forge.signedByService({ sub: userId, iat: now, exp: now + 600, kid: 'some-other-key' });
    assertProblem(await forge.asUser(token, 'GET', `/user/${userId}`), 401);
  });
});

describe('item 7 and 9: the error webhook', () => {
  test('private, loopback and link-local targets are refused unless the operator allows them', async () => {
    const forge = await TestService.start();
    try {
      for (const url of [
        'http://127.0.0.1:9/errors',
        'http://localhost/errors',
        'http://api.localhost/errors',
        'http://10.1.2.3/errors',
        'http://172.16.0.1/errors',
        'http://192.168.1.10/errors',
        'http://169.254.169.254/latest/meta-data',
        'http://[::1]/errors',
        'http://[fd00::1]/errors',
        'http://[::ffff:127.0.0.1]/errors',
        'http://0.0.0.0/errors',
        'http://2130706433/errors',
      ]) {
        assertProblem(await forge.asHost('PUT', '/settings', { errorWebhookUrl: url }), 400, {
          errors: ['body.errorWebhookUrl'],
        });
      }
      assert.equal((await forge.asHost('GET', '/settings')).body.errorWebhookUrl, null);
      const fine = await forge.asHost('PUT', '/settings', { errorWebhookUrl: 'https://hooks.example.com/errors' });
      assert.equal(fine.status, 200, fine.text);
    } finally {
      await forge.close();
    }
    const allowed = await TestService.start({ allowPrivateWebhooks: true });
    try {
      const local = await allowed.asHost('PUT', '/settings', { errorWebhookUrl: 'http://127.0.0.1:9/errors' });
      assert.equal(local.status, 200, local.text);
    } finally {
      await allowed.close();
    }
  });

  test('a host name that resolves to a private address is refused when delivering', async (t) => {
    // This machine's own name: not an address, so it passes the settings check, yet it
    // resolves to this machine or its private network.
    const name = hostname();
    const address = await lookup(name).catch(() => undefined);
    if (!address || isPublicAddress(address.address))
      return t.skip(`${name} does not resolve to a private address here`);
    const receiver = await new Capture(() => ({ status: 204 })).up();
    const forge = await TestService.start({ catalog: writeCatalog(), delivery: { backoff: () => 60_000 } });
    try {
      const { token } = await forge.newUser();
      const child = (await forge.asUser(token, 'POST', `/workflow/${FAILS}/install`, {})).body.workflowId;
      const hook = (await forge.asHost('GET', `/workflow/${child}`)).body.webhookUrl as string;
      const port = new URL(receiver.url).port;
      const set = await forge.asHost('PUT', '/settings', { errorWebhookUrl: `http://${name}:${port}/errors` });
      assert.equal(set.status, 200, set.text);
      await forge.request('POST', hook, { json: {} });
      await eventually(
        async () => (await forge.store.deliveries.backlog('webhook')).lastError !== null,
        'the refusal recorded',
      );
      assert.match((await forge.store.deliveries.backlog('webhook')).lastError!, /private address/);
      assert.equal(receiver.requests.length, 0);
    } finally {
      await forge.close();
      await receiver.down();
    }
  });

  test('a redirect is not followed and the answer is not echoed; deliveries carry a signature', async () => {
    const final = await new Capture().up();
    const redirecting = await new Capture(() => ({
      status: 307,
      headers: { Location: `${final.url}/internal` },
      body: '{"secret":"internal-answer"}',
    })).up();
    const receiver = await new Capture(() => ({ status: 204 })).up();
    const forge = await TestService.start({
      catalog: writeCatalog(),
      allowPrivateWebhooks: true,
      delivery: { backoff: () => 60_000 },
    });
    try {
      const { token } = await forge.newUser();
      const child = (await forge.asUser(token, 'POST', `/workflow/${FAILS}/install`, {})).body.workflowId;
      const hook = (await forge.asHost('GET', `/workflow/${child}`)).body.webhookUrl as string;

      await forge.asHost('PUT', '/settings', { errorWebhookUrl: `${redirecting.url}/errors` });
      await forge.request('POST', hook, { json: {} });
      await eventually(() => redirecting.requests.length === 1, 'the first attempt');
      await eventually(
        async () => (await forge.store.deliveries.backlog('webhook')).lastError !== null,
        'the failure recorded',
      );
      assert.equal(final.requests.length, 0, 'the redirect was followed');
      const settings = await forge.asHost('GET', '/settings');
      assert.match(settings.body.deliveries.webhook.lastError, /307/);
      assert.doesNotMatch(settings.text, /internal-answer/);

      await forge.asHost('PUT', '/settings', { errorWebhookUrl: `${receiver.url}/errors` });
      await eventually(() => receiver.requests.length >= 1, 'the delivery');
      const { headers, body } = receiver.requests[0]!;
      const secret = (await forge.asHost('GET', '/settings')).body.errorWebhookSecret as string;
      assert.match(secret, /^whsec_[\w-]{32,}$/);
      const signature = String(headers['forge-signature']);
      const parts = Object.fromEntries(signature.split(',').map((part) => part.split('=') as [string, string]));
      assert.ok(Math.abs(Number(parts.t) - Date.now() / 1000) < 60, signature);
      const expected = createHmac('sha256', secret).update(`${parts.t}.${body}`).digest('hex');
      assert.equal(parts.v1, expected);
      assert.equal(JSON.parse(body).workflowId, child);
    } finally {
      await forge.close();
      await Promise.all([final.down(), redirecting.down(), receiver.down()]);
    }
  });
});
