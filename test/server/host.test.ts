import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { type RunningService, startService } from '../../server/app.js';
import { createTokenHandler, type NodeContext, toNodeHandler } from '../../src/host/index.js';

let service: RunningService;
let userId: string;

before(async () => {
  service = await startService({ port: 0, db: ':memory:' });
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

  test('answers 502 naming the API key, without repeating it, when the service refuses the key', async () => {
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
    assert.match(JSON.parse(text).detail, /did not accept the API key/);
    assert.equal(logged.length, 1);
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
    assert.match(body.detail, /Could not reach the Forge service/);
    assert.match(logged[0]!, new RegExp(`127\\.0\\.0\\.1:${port}`));
  });

  test('answers 502 saying so when the session names a user the service does not have', async () => {
    const handler = createTokenHandler({
      apiKey: service.apiKey!,
      serviceUrl: service.url,
      getUserId: () => 'no-such-user',
      onError: () => undefined,
    });
    const { status, body } = await answer(await handler(tokenRequest()));
    assert.equal(status, 502);
    assert.match(body.detail, /no user no-such-user/);
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
