/**
 * What the HTTP stack owes every caller beyond the service interface: HEAD, over-long URLs and
 * header blocks, encoded and non-UTF-8 bodies, the health probes, a request log with ids that
 * holds no secret, and a shutdown that finishes what is in flight.
 */
import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { type RunningService, startService } from '../../server/app.js';
import { startSandbox } from '../../server/sandbox.js';
import { type Harness, newUser, PAYMENTS, sendWebhook, writeTestCatalog } from './engine-support.js';
import { API, APP_ORIGIN, assertProblem, rawRequest, TestService } from './support.js';

let forge: TestService;
before(async () => {
  forge = await TestService.start();
});
after(() => forge.close());

describe('the HTTP edges', () => {
  test('HEAD answers wherever GET does, with the same status and headers and no body', async () => {
    const { userId } = await forge.createUser();
    for (const path of ['/workflow', `/user/${userId}`, '/openapi.json', '/.well-known/jwks.json']) {
      const get = await forge.asHost('GET', path);
      const head = await forge.request('HEAD', path, { credential: forge.apiKey });
      assert.equal(head.status, get.status, path);
      assert.equal(head.text, '', path);
      assert.equal(head.headers.get('content-type'), get.headers.get('content-type'), path);
    }
    assert.equal((await forge.request('HEAD', '/user')).status, 401, 'HEAD is guarded as GET is');
  });

  test('an over-long URL is a 414 problem document', async () => {
    const answer = await forge.request('GET', `/workflow?integration=${'x'.repeat(9000)}`, {
      credential: forge.apiKey,
    });
    assertProblem(answer, 414, { detail: /longer than/ });
  });

  test('an over-long header block is a 431 problem document', async () => {
    const answer = await rawRequest(forge.url, 'GET', `${API}/workflow`, {
      headers: { Authorization: `Bearer ${forge.apiKey}`, 'X-Padding': 'x'.repeat(20_000) },
    });
    assert.equal(answer.status, 431);
    assert.match(String(answer.headers['content-type']), /^application\/problem\+json/);
    assert.match(JSON.parse(answer.text).detail, /16 KB/);
  });

  test('a gzip-encoded body is a 415 that asks for an uncompressed one', async () => {
    const answer = await forge.request('POST', '/user', {
      credential: forge.apiKey,
      body: gzipSync(JSON.stringify({ name: 'Ada', email: 'gzip@example.com' })),
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
    });
    assertProblem(answer, 415, { detail: /Content-Encoding "gzip".*uncompressed/ });
  });

  test('a body that is not UTF-8 is a 400 that says so', async () => {
    const latin1 = Buffer.from('{"name": "Zoë", "email": "latin1@example.com"}', 'latin1');
    const answer = await forge.request('POST', '/user', {
      credential: forge.apiKey,
      body: latin1,
      headers: { 'Content-Type': 'application/json' },
    });
    assertProblem(answer, 400, { detail: /not valid UTF-8/ });
  });

  test('a character split across two chunks of the body arrives whole, at the service and the sandbox', async () => {
    const json = JSON.stringify({ name: 'Zoë 🙂 Ñandú', email: 'chunks@example.com' });
    assert.equal(await postInTwoChunks(`${forge.url}${API}/user`, json, forge.apiKey), 200);
    const users = (await forge.asHost('GET', '/user')).body.data;
    assert.ok(users.some((u: { fullName: string }) => u.fullName === 'Zoë 🙂 Ñandú'));

    const sandbox = await startSandbox({ port: 0 });
    try {
      const message = JSON.stringify({ channel: '#general', text: 'Paid 🙂 by Zoë' });
      assert.equal(await postInTwoChunks(`${sandbox.url}/slack/chat.postMessage`, message, 'x'), 200);
      assert.deepEqual(sandbox.requests.at(-1)?.body, JSON.parse(message));
    } finally {
      await sandbox.close();
    }
  });
});

// server/app.ts registers the plugins in this order; each hook runs in the order its plugin was
// registered, and a route gets only the hooks and error handler registered before it.
describe('the order of the stack', () => {
  test('CORS comes before the credential check: a page on an allowed origin can read its 401', async () => {
    const refused = await forge.request('GET', '/workflow', {
      credential: 'not-a-credential',
      headers: { Origin: APP_ORIGIN },
    });
    assertProblem(refused, 401);
    assert.equal(refused.headers.get('access-control-allow-origin'), APP_ORIGIN);
    assert.equal(refused.headers.get('cache-control'), 'no-store');
  });

  test('the URL guards come before the credential check: a 414 or a NUL needs no credential', async () => {
    assertProblem(await forge.request('GET', `/workflow?integration=${'x'.repeat(9000)}`), 414);
    assertProblem(await forge.request('GET', '/user/%00'), 400, { detail: /NUL/ });
  });

  test('the credential check comes before the rate limit: a refused caller uses none of it', async () => {
    const limited = await TestService.start({ rateLimits: { token: { limit: 1, windowSeconds: 60 } } });
    try {
      const { userId } = await limited.createUser();
      for (let i = 0; i < 3; i++) {
        const refused = await limited.request('GET', `/user/${userId}/token`, { credential: 'not-a-credential' });
        assertProblem(refused, 401);
      }
      assert.equal((await limited.asHost('GET', `/user/${userId}/token`)).status, 200);
      assertProblem(await limited.asHost('GET', `/user/${userId}/token`), 429);
    } finally {
      await limited.close();
    }
  });

  test('CORS comes before the URL guards: a page on an allowed origin can read its 414', async () => {
    const refused = await forge.request('GET', `/workflow?integration=${'x'.repeat(9000)}`, {
      headers: { Origin: APP_ORIGIN },
    });
    assertProblem(refused, 414);
    assert.equal(refused.headers.get('access-control-allow-origin'), APP_ORIGIN);
  });

  test('the credential check comes before the body: a refused caller learns nothing of its encoding', async () => {
    const body = gzipSync(JSON.stringify({ name: 'Ada', email: 'order@example.com' }));
    const headers = { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' };
    assertProblem(await forge.request('POST', '/user', { credential: 'not-a-credential', body, headers }), 401);
    assertProblem(await forge.request('POST', '/user', { credential: forge.apiKey, body, headers }), 415);
  });

  // The order itself is the code of that one hook (server/plugins/request-checks.ts); the tests
  // above show it from outside. Here: no route, the not-found handler's included, can skip it.
  test('every route runs the request checks, in one onRequest hook, and nothing before its body is read', () => {
    const table = forge.service.app.printRoutes({ includeHooks: true, commonPrefix: false });
    const orders = [...table.matchAll(/\(onRequest\) (\[.*\])/g)].map((m) => m[1]);
    assert.ok(orders.length > 20, table);
    for (const order of orders) assert.deepEqual(JSON.parse(order!), ['checkRequest()']);
    assert.doesNotMatch(table, /\(preParsing\)/);
    const routes = [...table.matchAll(/\(onRequest\)/g)].length;
    // HEAD routes add Fastify's own onSend hook after it.
    const withAnswerHeaders = [...table.matchAll(/\(onSend\) \["answerHeaders\(\)"/g)].length;
    assert.equal(withAnswerHeaders, routes, table);
  });
});

/** POSTs JSON in two writes with a pause between them: two chunks on the wire, the emoji cut in half. */
function postInTwoChunks(url: string, json: string, credential: string): Promise<number> {
  const bytes = Buffer.from(json);
  const cut = bytes.indexOf(Buffer.from('🙂')) + 2;
  const { hostname, port, pathname } = new URL(url);
  return new Promise<number>((resolve, reject) => {
    const req = httpRequest(
      {
        host: hostname,
        port,
        method: 'POST',
        path: pathname,
        headers: { Authorization: `Bearer ${credential}`, 'Content-Type': 'application/json' },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode!);
      },
    );
    req.on('error', reject);
    req.write(bytes.subarray(0, cut));
    setTimeout(() => req.end(bytes.subarray(cut)), 50);
  });
}

describe('health probes', () => {
  test('GET /healthz answers while the process runs; GET /readyz while the database answers', async () => {
    const health = await fetch(`${forge.url}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: 'ok' });
    const ready = await fetch(`${forge.url}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready' });
  });

  test('GET /readyz is a 503 problem document when the database cannot answer', async () => {
    const other = await TestService.start();
    try {
      await other.store.close();
      const answer = await other.request('GET', `${other.url}/readyz`);
      assertProblem(answer, 503, { detail: /database/ });
      assert.equal((await fetch(`${other.url}/healthz`)).status, 200, 'the process itself is still up');
    } finally {
      await other.service.app.close();
    }
  });
});

/** The engine suites' harness over a service of this file's own (its own catalog, log or sandbox). */
function harnessOf(service: RunningService) {
  return {
    service,
    async api(method: string, path: string, body?: unknown, credential = service.apiKey) {
      const response = await fetch(`${service.url}${API}${path}`, {
        method,
        headers: { Authorization: `Bearer ${credential}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: await response.json() };
    },
  } as unknown as Harness;
}

describe('the request log', () => {
  test('is one JSON line per request with its id, and holds no API key, token, credential value or webhook token', async () => {
    const lines: string[] = [];
    const service = await startService({
      port: 0,
      db: ':memory:',
      catalog: writeTestCatalog(),
      scheduler: false,
      logStream: { write: (line) => void lines.push(line) },
    });
    const h = harnessOf(service);
    try {
      const user = await newUser(h);
      const childId = await user.install(PAYMENTS);
      const secretValue = 'crm-secret-value-0123456789';
      assert.equal((await h.api('POST', '/credentials/crm', { apiKey: secretValue }, user.token)).status, 200);
      await h.api('GET', `/user/${user.userId}`, undefined, user.token);
      await h.api('GET', '/user', undefined, `${service.apiKey}x`);
      const webhookToken = (await service.store.children.get(childId))!.webhookToken;
      await sendWebhook(h, childId, { amount: 1 });

      const log = lines.join('');
      const entries = lines.map((line) => JSON.parse(line));
      const requests = entries.filter((e) => e.req);
      assert.ok(requests.length >= 7, `only ${requests.length} requests logged`);
      for (const entry of requests) {
        assert.ok(entry.reqId && entry.req.method && entry.res.statusCode, JSON.stringify(entry));
      }
      assert.equal(new Set(requests.map((e) => e.reqId)).size, requests.length, 'each request has its own id');
      assert.ok(
        entries.some((e) => e.res?.statusCode === 401),
        'the refused request is logged',
      );
      for (const [what, secret] of [
        ['the API key', service.apiKey!],
        ['the user token', user.token],
        ['a credential value', secretValue],
        ['the webhook token', webhookToken],
      ] as const) {
        assert.ok(!log.includes(secret), `${what} is in the log`);
      }
    } finally {
      await service.close();
    }
  });
});

describe('shutdown', () => {
  test('close() stops accepting, finishes the request and workflow run in flight, then closes the database', async () => {
    // A stand-in for the API the workflow's HTTP block calls: slow enough to be caught mid-run.
    let reached!: () => void;
    const runReachedApi = new Promise<void>((resolve) => (reached = resolve));
    const slowApi = createServer((_req, res) => {
      reached();
      setTimeout(() => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}'), 400);
    });
    await new Promise<void>((resolve) => slowApi.listen(0, '127.0.0.1', resolve));
    const service = await startService({
      port: 0,
      db: ':memory:',
      catalog: writeTestCatalog(),
      scheduler: false,
      sandboxUrl: `http://127.0.0.1:${(slowApi.address() as AddressInfo).port}`,
    });
    const h = harnessOf(service);
    try {
      const user = await newUser(h);
      const childId = await user.install(PAYMENTS);
      const hook = `${service.url}/forge/2021-12/hooks/${(await service.store.children.get(childId))!.webhookToken}`;
      const inFlight = fetch(hook, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Prefer: 'wait=30' },
        body: JSON.stringify({ amount: 500, customer: { name: 'Ada' } }),
      });
      await runReachedApi;
      const closed = service.close();
      const answer = await inFlight;
      const body = await answer.json();
      assert.equal(answer.status, 200);
      assert.equal(body.finished, true, JSON.stringify(body));
      // Otherwise its keep-alive connection would hold the close for the keep-alive timeout.
      assert.equal(answer.headers.get('connection'), 'close', 'the answer sent while closing ends its connection');
      await closed;
      await assert.rejects(fetch(`${service.url}/healthz`), 'a closed service accepts no connection');
      await assert.rejects(service.store.ping(), 'the database is closed');
    } finally {
      await service.close();
      slowApi.close();
    }
  });
});
