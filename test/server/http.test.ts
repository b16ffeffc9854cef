/**
 * The HTTP edges: unknown paths and methods, body limits and media types, and a batch of odd
 * input thrown at every route, none of which may produce a 500.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_BODY_BYTES } from '../../server/http.js';
import { LOCAL_PROVIDER_PREFIX } from '../../server/views.js';
import {
  type Answer,
  API,
  assertProblem,
  demoCatalog,
  otherParent,
  rawRequest,
  TestService,
  unknownId,
} from './support.js';

type Route = { method: string; path: string; access: string };

let forge: TestService;
let routes: Route[];
before(async () => {
  forge = await TestService.start();
  routes = forge.service.routes as Route[];
});
after(() => forge.close());

const routedPath = (path: string) => (path.startsWith(LOCAL_PROVIDER_PREFIX) ? path : `${API}${path}`);

describe('unknown paths and methods', () => {
  for (const path of [
    '/',
    '/forge',
    API,
    `${API}/`,
    '/forge/2020-01/workflow',
    `${API}/nothing`,
    `${API}/workflow/a/b/c`,
  ]) {
    test(`${path} is a 404 problem document`, async () => {
      assertProblem(await forge.request('GET', `${forge.url}${path}`, { credential: forge.apiKey }), 404, {
        detail: /No endpoint/,
      });
    });
  }

  test('a method a path does not answer is a 405 whose Allow header lists the ones it does', async () => {
    const methodsByPath = new Map<string, string[]>();
    for (const { path, method } of routes) methodsByPath.set(path, [...(methodsByPath.get(path) ?? []), method]);
    for (const [path, allowed] of methodsByPath) {
      const other = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].find((m) => !allowed.includes(m))!;
      const concrete = routedPath(path).replace(/:\w+/g, 'x');
      const answer = await forge.request(other, `${forge.url}${concrete}`);
      assertProblem(answer, 405);
      assert.deepEqual(answer.headers.get('allow')!.split(', ').sort(), [...allowed].sort(), path);
    }
  });

  test('a path that is not correctly URL-encoded is a 400', async () => {
    const answer = await rawRequest(forge.url, 'GET', `${API}/user/%E0%A4%A`, {
      headers: { Authorization: `Bearer ${forge.apiKey}` },
    });
    assert.equal(answer.status, 400);
    assert.match(JSON.parse(answer.text).detail, /URL-encoded/);
  });

  // find-my-way before 9.10.2 skipped a target's first character as if it were the slash, so
  // `*forge/2021-12/workflow` was answered as the workflow list: past a proxy that allows or
  // refuses requests by their path, a request it never matched.
  test('a request target that does not begin with / is a 400, not the route it ends like', async () => {
    for (const target of [`*${API.slice(1)}/workflow`, `*${API.slice(1)}/user/x`, '*healthz']) {
      const answer = await rawRequest(forge.url, 'GET', target, {
        headers: { Authorization: `Bearer ${forge.apiKey}` },
      });
      assert.equal(answer.status, 400, target);
      assert.match(JSON.parse(answer.text).detail, /does not begin with \//, target);
    }
  });

  // `/workflow/` reached `/workflow/:workflowId` with an empty id and was told "No workflow .",
  // and `PUT /workflow/` got a 405 for the methods of that route.
  test('a path with an empty segment is a 404 that names the path meant, with or without a credential', async () => {
    for (const [method, path, meant] of [
      ['GET', `${API}/workflow/`, `${API}/workflow`],
      ['PUT', `${API}/workflow/`, `${API}/workflow`],
      ['GET', `${API}/user//token?x=1`, `${API}/user/token`],
      ['GET', `/${API}/workflow`, `${API}/workflow`],
      ['GET', '/healthz/', '/healthz'],
    ] as const) {
      for (const headers of [{ Authorization: `Bearer ${forge.apiKey}` }, {}] as Array<Record<string, string>>) {
        const answer = await rawRequest(forge.url, method, path, { headers });
        assert.equal(answer.status, 404, `${method} ${path}`);
        assert.ok(JSON.parse(answer.text).detail.includes(`Did you mean ${method} ${meant}?`), answer.text);
      }
    }
    // Slashes in the query are not the path's.
    const listed = await rawRequest(forge.url, 'GET', `${API}/workflow?next=https://example.com/a//b/`, {
      headers: { Authorization: `Bearer ${forge.apiKey}` },
    });
    assert.equal(listed.status, 200);
  });

  // The path was read as a URL, which took `//forge/…` for a host and resolved `..`, so the
  // detail named `/2021-12/workflow` or the very path that exists.
  test('a 404 names the path as it was sent', async () => {
    const path = `${API}/../2021-12/workflow`;
    const answer = await rawRequest(forge.url, 'GET', path, { headers: { Authorization: `Bearer ${forge.apiKey}` } });
    assert.equal(answer.status, 404);
    assert.equal(
      JSON.parse(answer.text).detail,
      `No endpoint GET ${path}. See the API section of the README for the endpoints.`,
    );
  });
});

describe('request bodies', () => {
  const createUser = (body: string, contentType = 'application/json') =>
    forge.request('POST', '/user', { credential: forge.apiKey, body, headers: { 'Content-Type': contentType } });

  test(`a body over ${MAX_BODY_BYTES} bytes is a 413; one just under is read`, async () => {
    const padding = (size: number) => JSON.stringify({ name: 'x'.repeat(size - 28), email: 'a@b.co' });
    assert.equal(padding(MAX_BODY_BYTES).length, MAX_BODY_BYTES);
    assertProblem(await createUser(padding(MAX_BODY_BYTES + 1)), 413, { detail: /smaller/ });
    // Read and judged on its fields: the name is too long, which is a 400, not a 413.
    assertProblem(await createUser(padding(MAX_BODY_BYTES)), 400, { errors: ['body.name'] });
  });

  test('a streamed body that grows past the limit is a 413, and the client can go on', async () => {
    for (let round = 0; round < 6; round++) {
      const chunk = new TextEncoder().encode(' '.repeat(16 * 1024));
      const stream = new ReadableStream({
        start(controller) {
          for (let i = 0; i < 20; i++) controller.enqueue(chunk);
          controller.close();
        },
      });
      const response = await fetch(`${forge.url}${API}/user`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${forge.apiKey}`, 'Content-Type': 'application/json' },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      assert.equal(response.status, 413);
      await response.text();
      assert.equal((await forge.asHost('GET', '/workflow')).status, 200, `request after 413 #${round + 1}`);
    }
  });

  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
    test(`a body sent as ${type.split(';')[0]} is a 415 that asks for JSON`, async () => {
      assertProblem(await createUser('{"name": "Ada", "email": "ada@example.com"}', type), 415, {
        detail: /application\/json/,
      });
    });
  }

  test('a body without a Content-Type is a 415', async () => {
    const answer = await rawRequest(forge.url, 'POST', `${API}/user`, {
      headers: { Authorization: `Bearer ${forge.apiKey}` },
      body: '{"name": "Ada", "email": "nocontent@example.com"}',
    });
    assert.equal(answer.status, 415);
    assert.match(String(answer.headers['content-type']), /^application\/problem\+json/);
  });

  test('JSON media types with parameters or a +json suffix are JSON', async () => {
    for (const [i, type] of ['application/json; charset=utf-8', 'application/merge-patch+json'].entries()) {
      const answer = await createUser(JSON.stringify({ name: 'Ada', email: `typed${i}@example.com` }), type);
      assert.equal(answer.status, 200, `${type}: ${answer.text}`);
    }
  });

  test('a body that is not valid JSON is a 400 that says so', async () => {
    assertProblem(await createUser('{"name": "Ada",'), 400, { detail: /not valid JSON/ });
  });
});

describe('nothing a client sends produces a 500', () => {
  /** Odd path parameters, already percent-encoded where a raw character would not be legal. */
  const oddParameters = [
    '%00',
    '%E2%80%AE',
    '%F0%9F%99%82',
    'x'.repeat(4000),
    '..',
    '%2e%2e',
    '%2F',
    '%ZZ',
    '%',
    "'%3B%20DROP%20TABLE%20users%3B--",
    '__proto__',
    'constructor',
    'toString',
    'hasOwnProperty',
    'null',
    '-1',
    '1e309',
    '%20',
    demoCatalog.workflows[0]!.workflowId,
  ];

  const oddBodies = [
    'null',
    '[]',
    '"text"',
    '0',
    'true',
    '{}',
    '{"a":null}',
    '[{"name":"Ada","email":"a@b.co"}]',
    '{"name":{"$gt":""},"email":["x"],"fullName":{}}',
    '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}',
    '1e999',
    '{"n":1e999,"m":-1e999,"big":123456789012345678901234567890}',
    `{"deep":${'['.repeat(20_000)}${']'.repeat(20_000)}}`,
    `{"name":"${'\\ud800'.repeat(50)}","email":"\\udfff@x.y"}`,
    `{"name":"${'🙂'.repeat(5000)}"}`,
    '{"variables":{"__proto__":{"x":1}}}',
    '{"variables":{"toString":{"x":1}}}',
    '{"variables":null,"errorWebhookUrl":{"a":1},"eventBus":[1]}',
    '{"toString":1,"valueOf":"x","channel":{"length":1}}',
  ];

  const oddQueries = [
    '?page=1e999&limit=-0&order[]=x&integration[]=y&expiresIn=1e309&state=%00',
    '?page=NaN&limit=Infinity&order=&expiresIn=0x10&state=&code=&error=',
    `?${'a=1&'.repeat(2000)}`,
    '?page=100000000000000000000&limit=30',
  ];

  let checked = 0;
  /** Fires a request exactly as given and checks the service answered it properly. */
  async function expectNo500(method: string, path: string, headers: Record<string, string>, body?: string) {
    const answer = await rawRequest(forge.url, method, path, {
      headers: body === undefined ? headers : { ...headers, 'Content-Type': 'application/json' },
      body,
    });
    checked++;
    assert.ok(
      answer.status < 500,
      `${method} ${path.slice(0, 120)} ${body?.slice(0, 80) ?? ''} → ${answer.status} ${answer.text.slice(0, 200)}`,
    );
    if (/problem\+json/.test(String(answer.headers['content-type']))) {
      assert.equal(JSON.parse(answer.text).status, answer.status);
    }
  }

  let caller: { userId: string; token: string; childId: string };
  let credentials: Record<string, string>[];
  before(async () => {
    caller = await forge.userWithChild(otherParent);
    credentials = [{ Authorization: `Bearer ${forge.apiKey}` }, { Authorization: `Bearer ${caller.token}` }, {}];
  });

  test('odd path parameters, with every kind of caller', async () => {
    for (const route of routes) {
      for (const parameter of oddParameters) {
        const path = routedPath(route.path).replace(/:\w+/g, parameter);
        await Promise.all(credentials.map((headers) => expectNo500(route.method, path, headers)));
      }
    }
  });

  test('odd bodies, on every route that takes one, with real ids so the body is read', async () => {
    // A parent the caller has not connected every integration of, so no install goes through.
    const notConnected = demoCatalog.workflows.find((w) =>
      w.integrations.some((i) => !otherParent.integrations.includes(i)),
    )!;
    const variablesBlock = otherParent.blocks.find((b) => b.type === 'variables')!;
    const parametersIntegration = demoCatalog.integrations.find((i) => i.requiredParameters?.length)!;
    for (const route of routes.filter((r) => ['POST', 'PUT', 'PATCH'].includes(r.method))) {
      const path = routedPath(route.path).replace(/:(\w+)/g, (_, key: string) => {
        if (key === 'workflowId') return route.path.endsWith('/install') ? notConnected.workflowId : caller.childId;
        if (key === 'userId') return caller.userId;
        if (key === 'blockId') return variablesBlock.id;
        if (key === 'integration') return parametersIntegration.name;
        return unknownId();
      });
      for (const body of oddBodies) {
        await Promise.all(credentials.map((headers) => expectNo500(route.method, path, headers, body)));
      }
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'a body polluted Object.prototype');
  });

  test('odd query strings on every route', async () => {
    for (const route of routes) {
      const path = routedPath(route.path).replace(/:\w+/g, unknownId());
      for (const query of oddQueries) {
        await Promise.all(credentials.map((headers) => expectNo500(route.method, `${path}${query}`, headers)));
      }
    }
    for (const query of oddQueries) {
      await expectNo500('GET', `${API}/workflow/${caller.childId}/logs${query}`, credentials[1]!);
    }
  });

  test('odd Authorization headers', async () => {
    const odd = [
      'Bearer ',
      'Bearer a.b',
      'Bearer ...',
      `Bearer ${'a'.repeat(8000)}.${'b'.repeat(8000)}.c`,
      'Bearer eyJhbGciOiJFUzI1NiJ9.e30.AAAA',
      'Bearer eyJ9.eyJ9.eyJ9',
      `Bearer ${Buffer.from('{"alg":"ES256","crit":["x"]}').toString('base64url')}.e30.AA`,
      'Bearer forge_sk_',
      `Bearer ${forge.apiKey} extra`,
      'bearer\tx',
    ];
    for (const route of routes) {
      const path = routedPath(route.path).replace(/:\w+/g, unknownId());
      await Promise.all(odd.map((authorization) => expectNo500(route.method, path, { Authorization: authorization })));
    }
  });

  test('after all of it the service still answers', async () => {
    assert.ok(checked > 1000, `only ${checked} requests were checked`);
    const answer: Answer = await forge.asHost('GET', '/workflow');
    assert.equal(answer.status, 200);
    assert.equal(answer.body.data.length, demoCatalog.workflows.filter((w) => w.active !== false).length);
  });
});
