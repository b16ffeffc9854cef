/**
 * Who may call what. Every matrix here is generated from the service's own route table, so an
 * endpoint added later is covered without anyone remembering to list it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Clock } from '../../server/clock.js';
import { LOCAL_PROVIDER_PREFIX } from '../../server/views.js';
import {
  type Answer,
  API,
  APP_ORIGIN,
  assertProblem,
  FOREIGN_ORIGIN,
  sample,
  TestService,
  unknownId,
} from './support.js';

type Route = { method: string; path: string; access: 'apiKey' | 'user' | 'any' | 'public' };

let forge: TestService;
let routes: Route[];
/** User A calls; user B owns the resources A must not reach. */
let a: { userId: string; token: string; childId: string };
let b: { userId: string; token: string; childId: string };

before(async () => {
  forge = await TestService.start();
  routes = forge.service.routes as Route[];
  a = await forge.userWithChild();
  b = await forge.userWithChild();
  await forge.seedExecution(b.childId, new Date());
  await forge.seedError(b.childId);
});
after(() => forge.close());

const guarded = () => routes.filter((r) => r.access !== 'public');
const name = (route: Route) => `${route.method} ${route.path}`;

/** The route's path with its parameters filled in; a parameter without a value fails the test. */
function pathOf(route: Route, values: Record<string, string>): string {
  const path = route.path.replace(/:(\w+)/g, (_, key: string) => {
    assert.ok(values[key] !== undefined, `no test value for :${key} of ${name(route)}; add one to this file`);
    return encodeURIComponent(values[key]);
  });
  return route.path.startsWith(LOCAL_PROVIDER_PREFIX) ? `${forge.url}${path}` : `${forge.url}${API}${path}`;
}

const idsOf = (user: { userId: string; childId: string }) => ({
  userId: user.userId,
  workflowId: user.childId,
  blockId: sample.variablesBlock.id,
  integration: sample.parent.integrations[0]!,
  token: 'not-a-webhook-token',
  file: 'slack.svg',
});

/** Calls a route the way a client would: with a JSON body where the method carries one. */
function call(route: Route, values: Record<string, string>, headers: Record<string, string> = {}): Promise<Answer> {
  const hasBody = ['POST', 'PUT', 'PATCH'].includes(route.method);
  return forge.request(route.method, pathOf(route, values), {
    headers,
    ...(hasBody ? { json: {} } : {}),
  });
}

/** A's data and B's data, as the API key sees them: nothing a refused call does may change them. */
async function snapshot() {
  const read = async (path: string) => (await forge.asHost('GET', path)).body;
  return Promise.all(
    [a, b].flatMap((user) => [
      read(`/user/${user.userId}`),
      read(`/workflow/${user.childId}`),
      read(`/workflow/${user.childId}/logs`),
      read(`/workflow/${user.childId}/errors`),
      forge.store.credentials.list(user.userId),
    ]),
  );
}

describe('the route table', () => {
  test('holds every operation of the seed and of the embed surface', () => {
    const expected = [
      'GET /workflow',
      'PUT /workflow/:workflowId/activate',
      'PUT /workflow/:workflowId/deactivate',
      'PATCH /user/:userId/disableWorkflows',
      'GET /workflow/:workflowId/logs',
      'PATCH /workflow/:workflowId/variables/:blockId',
      'POST /user',
      'GET /user',
      'GET /user/:userId',
      'PATCH /user/:userId',
      'DELETE /user/:userId',
      'GET /user/:userId/token',
      'GET /workflow/:workflowId/errors',
      'GET /workflow/:workflowId',
      'POST /workflow/:workflowId/install',
      'DELETE /workflow/:workflowId',
      'GET /credentials',
      'POST /credentials/:integration',
      'POST /credentials/:integration/oauth',
      'GET /setup',
    ];
    const present = new Set(routes.map(name));
    for (const operation of expected) assert.ok(present.has(operation), `no route for ${operation}`);
  });

  test('the embed surface is exactly the operations DESIGN.md lists for a user token', () => {
    const embed = routes.filter((r) => r.access === 'user' || r.access === 'any').map(name);
    assert.deepEqual(embed.sort(), [
      'DELETE /credentials/:integration',
      'DELETE /workflow/:workflowId',
      'GET /credentials',
      'GET /setup',
      'GET /user/:userId',
      'GET /workflow',
      'GET /workflow-health',
      'GET /workflow-summary',
      'GET /workflow/:workflowId',
      'GET /workflow/:workflowId/errors',
      'GET /workflow/:workflowId/logs',
      'PATCH /workflow/:workflowId/variables/:blockId',
      'POST /credentials/:integration',
      'POST /credentials/:integration/oauth',
      'POST /credentials/:integration/oauth/confirm',
      'POST /workflow/:workflowId/install',
      'PUT /workflow/:workflowId/activate',
      'PUT /workflow/:workflowId/deactivate',
    ]);
  });

  test('only pages a browser visits without a credential are public', () => {
    // A new public route is a decision: add it here on purpose, with the reason it needs no credential.
    const publicRoutes = routes.filter((r) => r.access === 'public').map(name);
    assert.deepEqual(publicRoutes.sort(), [
      'GET /.well-known/jwks.json', // public keys, for anyone to verify a token
      'GET /icons/:file', // images in <img> tags
      'GET /icons/blocks/:file',
      'GET /local-oauth/:integration/authorize', // the OAuth popup's pages
      'GET /oauth/authorize',
      'GET /oauth/callback',
      'GET /openapi.json', // the service's own description, the same for every caller
      'POST /hooks/:token', // webhook senders; the unguessable token is the credential
      'POST /local-oauth/:integration/authorize',
      'POST /local-oauth/:integration/introspect', // the local provider's: the token asked about is what it needs
      'POST /local-oauth/:integration/remove-access', // the access token presented is the credential
      'POST /local-oauth/:integration/revoke', // OAuth client authentication, checked by the provider
      'POST /local-oauth/:integration/token', // OAuth client authentication, checked by the provider
    ]);
  });
});

describe('401: a missing, invalid or expired credential, on every guarded endpoint', () => {
  const now = () => Math.floor(Date.now() / 1000);
  const credentials: Array<[string, () => Promise<string | undefined>]> = [
    ['no Authorization header', async () => undefined],
    ['"Bearer" with nothing after it', async () => 'Bearer'],
    ['Basic credentials', async () => 'Basic dXNlcjpwYXNz'],
    ['an API key that is not the key', async () => 'Bearer forge_sk_0123456789abcdefghijklmnopqrstuv'],
    ['neither an API key nor a JWT', async () => 'Bearer opaque-thing'],
    ['a malformed JWT', async () => 'Bearer a.b.c'],
    ['an unsigned JWT (alg none)', async () => `Bearer ${unsigned(a.userId)}`],
    ['a token signed with another key', async () => `Bearer ${await forge.signedByStranger(a.userId)}`],
    [
      'an expired token',
      async () => `Bearer ${await forge.signedByService({ sub: a.userId, iat: now() - 3600, exp: now() - 1800 })}`,
    ],
    [
      'a token living longer than 30 minutes',
      async () => `Bearer ${await forge.signedByService({ sub: a.userId, iat: now(), exp: now() + 3600 })}`,
    ],
    [
      'a token for another audience',
      async () =>
        `Bearer ${await forge.signedByService({ sub: a.userId, iat: now(), exp: now() + 60, aud: 'someone-else' })}`,
    ],
    [
      'the token of a deleted user',
      async () => {
        const gone = await forge.newUser();
        await forge.asHost('DELETE', `/user/${gone.userId}`);
        return `Bearer ${gone.token}`;
      },
    ],
  ];

  for (const [what, header] of credentials) {
    test(what, async () => {
      const before = await snapshot();
      const authorization = await header();
      for (const route of guarded()) {
        const answer = await call(route, idsOf(a), authorization ? { Authorization: authorization } : {});
        assertProblem(answer, 401);
        assert.match(answer.headers.get('www-authenticate') ?? '', /^Bearer/, name(route));
      }
      assert.deepEqual(await snapshot(), before, 'a refused call changed data');
    });
  }

  test('a token asked to live 1 second stops working once it has expired', async () => {
    // A service whose clock the test moves: the second passes without waiting for it.
    // At a whole second, so 999 ms later the token's one second has not passed.
    let now = Math.floor(Date.now() / 1000) * 1000;
    const clock: Clock = { now: () => now, onJump: () => () => {} };
    const timed = await TestService.start({ clock });
    try {
      const { userId } = await timed.createUser();
      const token = await timed.token(userId, 1);
      assert.equal((await timed.asUser(token, 'GET', `/user/${userId}`)).status, 200);
      now += 999;
      assert.equal((await timed.asUser(token, 'GET', `/user/${userId}`)).status, 200, 'alive within its second');
      now += 2000;
      assertProblem(await timed.asUser(token, 'GET', `/user/${userId}`), 401, { detail: /expired/ });
    } finally {
      await timed.close();
    }
  });
});

describe('403: a valid credential of the wrong kind', () => {
  test("user A's token on every API-key operation, even on A's own ids", async () => {
    const before = await snapshot();
    for (const route of guarded().filter((r) => r.access === 'apiKey')) {
      assertProblem(await call(route, idsOf(a), { Authorization: `Bearer ${a.token}` }), 403, {
        detail: /API key/,
      });
    }
    assert.deepEqual(await snapshot(), before);
  });

  test('the API key on every operation that acts for one user', async () => {
    const before = await snapshot();
    for (const route of guarded().filter((r) => r.access === 'user')) {
      assertProblem(await call(route, idsOf(a), { Authorization: `Bearer ${forge.apiKey}` }), 403, {
        detail: /user's token/,
      });
    }
    assert.deepEqual(await snapshot(), before);
  });

  test('the API key sent from a browser page (with an Origin), on every guarded operation', async () => {
    const before = await snapshot();
    for (const origin of [APP_ORIGIN, FOREIGN_ORIGIN, 'null']) {
      for (const route of guarded()) {
        const answer = await call(route, idsOf(a), { Authorization: `Bearer ${forge.apiKey}`, Origin: origin });
        assertProblem(answer, 403, { detail: /backend/ });
      }
    }
    assert.deepEqual(await snapshot(), before);
  });
});

describe("404: user A's token on user B's resources, exactly as if they did not exist", () => {
  test("every embed operation on B's user and workflow ids", async () => {
    const before = await snapshot();
    const scoped = guarded().filter((r) => r.access !== 'apiKey' && /:(userId|workflowId)/.test(r.path));
    assert.ok(scoped.length >= 9, 'the embed surface lost its per-user operations');
    const nobody = { userId: unknownId(), childId: unknownId() };
    const masked = (answer: Answer, user: { userId: string; childId: string }) =>
      answer.text.replaceAll(user.userId, '<user>').replaceAll(user.childId, '<workflow>');
    for (const route of scoped) {
      const onB = await call(route, idsOf(b), { Authorization: `Bearer ${a.token}` });
      const onNobody = await call(route, idsOf(nobody), { Authorization: `Bearer ${a.token}` });
      assertProblem(onB, 404);
      assert.equal(onB.headers.get('content-type'), onNobody.headers.get('content-type'), name(route));
      assert.equal(masked(onB, b), masked(onNobody, nobody), `${name(route)} tells B's ids from unknown ones`);
    }
    assert.deepEqual(await snapshot(), before, "A's calls changed B's data");
  });

  test("B's own token still reaches B's resources (the 404s are about A, not broken ids)", async () => {
    assert.equal((await forge.asUser(b.token, 'GET', `/user/${b.userId}`)).status, 200);
    assert.equal((await forge.asUser(b.token, 'GET', `/workflow/${b.childId}/logs`)).body.data.length, 1);
    assert.equal((await forge.asUser(b.token, 'GET', `/workflow/${b.childId}/errors`)).body.errors.length, 1);
  });
});

describe('CORS', () => {
  const embed = (route: Route) => route.access === 'user' || route.access === 'any';
  const preflight = (route: Route, origin: string) =>
    forge.request('OPTIONS', pathOf(route, idsOf(a)), {
      headers: {
        Origin: origin,
        'Access-Control-Request-Method': route.method,
        'Access-Control-Request-Headers': 'authorization, content-type',
      },
    });

  test('a preflight from an allowed origin is answered on the embed surface only', async () => {
    for (const route of routes) {
      const answer = await preflight(route, APP_ORIGIN);
      assert.equal(answer.status, 204, name(route));
      if (embed(route)) {
        assert.equal(answer.headers.get('access-control-allow-origin'), APP_ORIGIN, name(route));
        assert.match(answer.headers.get('access-control-allow-methods')!, new RegExp(`\\b${route.method}\\b`));
        assert.match(answer.headers.get('access-control-allow-headers')!, /Authorization/i);
        assert.match(answer.headers.get('access-control-allow-headers')!, /Content-Type/i);
        assert.match(answer.headers.get('vary')!, /Origin/);
      } else {
        for (const [header] of answer.headers) assert.doesNotMatch(header, /^access-control-/, name(route));
      }
    }
  });

  test('a preflight from any other origin gets no CORS header anywhere', async () => {
    for (const route of routes) {
      for (const [header] of (await preflight(route, FOREIGN_ORIGIN)).headers) {
        assert.doesNotMatch(header, /^access-control-/, name(route));
      }
    }
  });

  test('embed answers carry the allowed origin, errors included, so the element can read them', async () => {
    const nobody = { userId: unknownId(), childId: unknownId() };
    for (const route of routes.filter(embed)) {
      for (const [values, authorization] of [
        [idsOf(nobody), `Bearer ${a.token}`],
        [idsOf(a), undefined],
      ] as const) {
        const answer = await call(route, values, {
          Origin: APP_ORIGIN,
          ...(authorization ? { Authorization: authorization } : {}),
        });
        assert.equal(answer.headers.get('access-control-allow-origin'), APP_ORIGIN, `${name(route)} ${answer.status}`);
      }
      const foreign = await call(route, idsOf(nobody), { Origin: FOREIGN_ORIGIN, Authorization: `Bearer ${a.token}` });
      assert.equal(foreign.headers.get('access-control-allow-origin'), null, name(route));
    }
  });

  test('API-key operations never answer a browser with CORS headers', async () => {
    for (const route of guarded().filter((r) => r.access === 'apiKey')) {
      for (const authorization of [`Bearer ${forge.apiKey}`, `Bearer ${a.token}`]) {
        const answer = await call(route, idsOf({ userId: unknownId(), childId: unknownId() }), {
          Origin: APP_ORIGIN,
          Authorization: authorization,
        });
        assertProblem(answer, 403);
        for (const [header] of answer.headers) assert.doesNotMatch(header, /^access-control-/, name(route));
      }
    }
  });
});

/** A JWT with `alg: none`: well-formed, claims right, but no signature. */
function unsigned(sub: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ sub, iat: now, exp: now + 60, iss: 'urn:forge:local-service', aud: 'forge-embed' })}.`;
}
