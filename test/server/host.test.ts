import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { type RunningService, startService } from '../../server/app.js';
import { createTokenHandler, type NodeContext, toNodeHandler } from '../../src/host/index.js';
import { testDatabase } from './backend.js';

let service: RunningService;
let userId: string;

before(async () => {
  service = await startService({ port: 0, db: (await testDatabase()).db });
  const created = await fetch(`${service.url}/forge/2021-12/user`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${service.apiKey!}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'Ada Lovelace', email: 'ada@example.com' }),
  });
  ({ userId } = await created.json());
});
after(() => service.close());

const tokenRequest = (init: RequestInit = {}) => new Request('http://app.example/forge-token', init);

/** Every answer of the handler, as text, so a test can check the API key is nowhere in it. */
async function answer(response: Response) {
  const text = await response.text();
  assert.ok(!text.includes(service.apiKey!), 'the response repeats the API key');
  return { status: response.status, headers: response.headers, body: JSON.parse(text) };
}

describe('createTokenHandler', () => {
  test("answers {token} with the signed-in user's token, not cached", async () => {
    const handler = createTokenHandler({ apiKey: service.apiKey!, serviceUrl: service.url, getUserId: () => userId });
    const { status, headers, body } = await answer(await handler(tokenRequest()));
    assert.equal(status, 200);
    assert.equal(headers.get('cache-control'), 'no-store');
    assert.match(headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(headers.get('access-control-allow-origin'), null);
    assert.equal(decodeJwt(body.token).sub, userId);
    // The token is one the service accepts for that user.
    const own = await fetch(`${service.url}/forge/2021-12/user/${userId}`, {
      headers: { Authorization: `Bearer ${body.token}` },
    });
    assert.equal(own.status, 200);
  });

  test('reads the user from the request, e.g. its session cookie', async () => {
    const handler = createTokenHandler({
      apiKey: service.apiKey!,
      serviceUrl: `${service.url}/forge/2021-12/`,
      getUserId: async (request) => (request.headers.get('cookie') === `session=${userId}` ? userId : null),
    });
    const signedIn = await answer(await handler(tokenRequest({ headers: { cookie: `session=${userId}` } })));
    assert.equal(decodeJwt(signedIn.body.token).sub, userId);
    const stranger = await answer(await handler(tokenRequest({ headers: { cookie: 'session=someone-else' } })));
    assert.equal(stranger.status, 401);
  });

  test('answers 401 without asking the service when nobody is signed in', async () => {
    let serviceCalls = 0;
    const handler = createTokenHandler({
      apiKey: service.apiKey!,
      serviceUrl: service.url,
      getUserId: () => null,
      fetch: (...args) => {
        serviceCalls++;
        return fetch(...args);
      },
    });
    const { status, headers, body } = await answer(await handler(tokenRequest()));
    assert.equal(status, 401);
    assert.equal(serviceCalls, 0);
    assert.match(headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.equal(headers.get('cache-control'), 'no-store');
    assert.equal(body.status, 401);
    assert.match(body.detail, /Sign in/);
  });

  test('asks for a shorter token when expiresIn is set', async () => {
    const handler = createTokenHandler({
      apiKey: service.apiKey!,
      serviceUrl: service.url,
      getUserId: () => userId,
      expiresIn: 60,
    });
    const { body } = await answer(await handler(tokenRequest()));
    const claims = decodeJwt(body.token);
    assert.equal(claims.exp! - claims.iat!, 60);
  });

  test('answers a generic 502 when the service refuses the key, and logs the reason without the key', async () => {
    const logged: string[] = [];
    const wrongKey = 'forge_sk_not-the-right-key';
    const handler = createTokenHandler({
      apiKey: wrongKey,
      serviceUrl: service.url,
      getUserId: () => userId,
      onError: (message) => logged.push(message),
    });
    const response = await handler(tokenRequest());
    const text = await response.text();
    assert.equal(response.status, 502);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    assert.ok(!text.includes(wrongKey));
    assert.doesNotMatch(JSON.parse(text).detail, /API key/);
    assert.equal(logged.length, 1);
    assert.match(logged[0]!, /did not accept the API key/);
    assert.ok(!logged[0]!.includes(wrongKey));
  });

  test('answers 502 when the service cannot be reached, and logs where it looked', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const logged: string[] = [];
    const handler = createTokenHandler({
      apiKey: service.apiKey!,
      serviceUrl: `http://127.0.0.1:${port}`,
      getUserId: () => userId,
      onError: (message) => logged.push(message),
    });
    const { status, body } = await answer(await handler(tokenRequest()));
    assert.equal(status, 502);
    assert.match(body.detail, /Try again/);
    assert.ok(!JSON.stringify(body).includes(String(port)), 'the browser learns where the service is');
    assert.match(logged[0]!, /Could not reach the Forge service/);
    assert.match(logged[0]!, new RegExp(`127\\.0\\.0\\.1:${port}`));
  });

  test('logs, but does not tell the browser, that the session names a user the service does not have', async () => {
    const logged: string[] = [];
    const handler = createTokenHandler({
      apiKey: service.apiKey!,
      serviceUrl: service.url,
      getUserId: () => 'no-such-user',
      onError: (message) => logged.push(message),
    });
    const { status, body } = await answer(await handler(tokenRequest()));
    assert.equal(status, 502);
    assert.ok(!JSON.stringify(body).includes('no-such-user'));
    assert.match(logged[0]!, /no user no-such-user/);
  });

  test("keeps the service's own error text out of the browser's answer and puts it in the log", async (t) => {
    // A service that fails with a detail meant for its operators, as a proxy or a broken
    // deployment in front of the real one would.
    const upstream = createServer((_req, res) => {
      res.writeHead(500, { 'Content-Type': 'application/problem+json' });
      res.end(
        JSON.stringify({
          type: 'about:blank',
          title: 'Internal error',
          status: 500,
          detail: 'database at /srv/forge/prod.db is locked by pid 4242',
        }),
      );
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise((resolve) => upstream.close(resolve)));
    const logged: string[] = [];
    const handler = createTokenHandler({
      apiKey: service.apiKey!,
      serviceUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
      getUserId: () => userId,
      onError: (message) => logged.push(message),
    });
    const response = await handler(tokenRequest());
    const text = await response.text();
    assert.equal(response.status, 502);
    assert.doesNotMatch(text, /prod\.db|pid 4242|answered 500/);
    assert.match(JSON.parse(text).detail, /Try again in a moment/);
    assert.match(logged[0]!, /answered 500: database at \/srv\/forge\/prod\.db is locked by pid 4242/);
  });

  test('answers 405 to anything but GET', async () => {
    const handler = createTokenHandler({ apiKey: service.apiKey!, serviceUrl: service.url, getUserId: () => userId });
    const response = await handler(tokenRequest({ method: 'POST', body: '{}' }));
    assert.equal(response.status, 405);
    assert.equal(response.headers.get('allow'), 'GET');
  });

  test('refuses incomplete options at start-up with a message that never contains the key', () => {
    const base = { apiKey: service.apiKey!, serviceUrl: service.url, getUserId: () => userId };
    assert.throws(() => createTokenHandler({ ...base, apiKey: '' }), /needs apiKey/);
    assert.throws(() => createTokenHandler({ ...base, serviceUrl: 'localhost:4010' }), /needs serviceUrl/);
    assert.throws(() => createTokenHandler({ ...base, expiresIn: 3600 }), /1 to 1800/);
    assert.throws(
      () => createTokenHandler({ ...base, getUserId: undefined as never }),
      (error: Error) => /needs getUserId/.test(error.message) && !error.message.includes(service.apiKey!),
    );
  });
});

describe('toNodeHandler', () => {
  let server: Server;
  let origin: string;
  let failWith: Error | undefined;
  let nextCalls: unknown[] = [];
  let useNext = false;

  before(async () => {
    const handler = toNodeHandler(
      createTokenHandler<NodeContext>({
        apiKey: service.apiKey!,
        serviceUrl: service.url,
        // Reads Node's own request, as an Express session middleware would be read.
        getUserId: (_request, { req }) => {
          if (failWith) throw failWith;
          return /(?:^|; )session=([^;]+)/.exec(req.headers.cookie ?? '')?.[1] ?? null;
        },
        onError: () => undefined,
      }),
    );
    server = createServer((req, res) => {
      if (!useNext) return handler(req, res);
      handler(req, res, (error) => {
        nextCalls.push(error);
        res.writeHead(418).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  test('serves the token over node:http with the session read from the cookie', async () => {
    const response = await fetch(`${origin}/forge-token`, { headers: { cookie: `theme=dark; session=${userId}` } });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    assert.equal(decodeJwt((await response.json()).token).sub, userId);
  });

  test('answers 405 to a POST without waiting for its body', async () => {
    // A body that never ends: a handler that reads it before answering never answers.
    const { status, allow, connection } = await new Promise<{ status?: number; allow?: string; connection?: string }>(
      (resolve, reject) => {
        const request = httpRequest(`${origin}/forge-token`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/octet-stream', 'Transfer-Encoding': 'chunked' },
        });
        const timer = setTimeout(() => {
          request.destroy();
          reject(new Error('no answer while the body was still arriving: the adapter waited for all of it'));
        }, 5_000);
        request.on('response', (response) => {
          clearTimeout(timer);
          response.resume();
          request.destroy();
          resolve({
            status: response.statusCode,
            allow: response.headers.allow,
            connection: response.headers.connection,
          });
        });
        request.on('error', () => undefined);
        request.write(Buffer.alloc(64 * 1024));
      },
    );
    assert.equal(status, 405);
    assert.equal(allow, 'GET');
    // The connection closes, so Node does not read the rest of the body to reuse it.
    assert.equal(connection, 'close');
  });

  test('answers 413 to a body over maxBodyBytes, and passes a smaller one to the handler', async (t) => {
    const received: number[] = [];
    const echo = toNodeHandler(
      async (request) => {
        received.push((await request.arrayBuffer()).byteLength);
        return new Response(null, { status: 204 });
      },
      { methods: ['POST'], maxBodyBytes: 1024 },
    );
    const small = createServer((req, res) => echo(req, res));
    await new Promise<void>((resolve) => small.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise((resolve) => small.close(resolve)));
    const url = `http://127.0.0.1:${(small.address() as AddressInfo).port}/`;
    const ok = await fetch(url, { method: 'POST', body: 'x'.repeat(1024) });
    assert.equal(ok.status, 204);
    const tooLarge = await fetch(url, { method: 'POST', body: 'x'.repeat(1025) });
    assert.equal(tooLarge.status, 413);
    assert.match((await tooLarge.json()).detail, /over 1024 bytes/);
    // Without a Content-Length (a stream), the count is kept while reading.
    const streamed = await fetch(url, {
      method: 'POST',
      body: new Blob(['x'.repeat(2048)]).stream(),
      duplex: 'half',
    } as RequestInit);
    assert.equal(streamed.status, 413);
    assert.deepEqual(received, [1024]);
  });

  test('passes the 401 through when there is no session', async () => {
    const response = await fetch(`${origin}/forge-token`);
    assert.equal(response.status, 401);
    assert.match(response.headers.get('content-type') ?? '', /problem\+json/);
  });

  test("hands a failure to Express's next, or answers a 500 that hides the cause", async (t) => {
    failWith = new Error('session store down at redis://internal:6379');
    t.after(() => {
      failWith = undefined;
      useNext = false;
    });
    const consoleError = t.mock.method(console, 'error', () => undefined);
    const plain = await fetch(`${origin}/forge-token`);
    const text = await plain.text();
    assert.equal(plain.status, 500);
    assert.ok(!text.includes('redis'));
    assert.match(JSON.parse(text).detail, /see the server log/);
    assert.equal(consoleError.mock.callCount(), 1);

    useNext = true;
    nextCalls = [];
    const express = await fetch(`${origin}/forge-token`);
    assert.equal(express.status, 418);
    assert.deepEqual(nextCalls, [failWith]);
  });
});
