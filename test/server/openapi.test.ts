/**
 * The OpenAPI document: what it covers, that the built copy in docs/ is the one the service
 * serves, and that the check every suite runs on its answers does catch a drift.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { OpenApiCheck } from './openapi-check.js';
import { API, TestService } from './support.js';

let forge: TestService;
// biome-ignore lint/suspicious/noExplicitAny: the document is read as plain JSON and asserted on.
let document: any;
before(async () => {
  forge = await TestService.start();
  document = (await forge.request('GET', '/openapi.json')).body;
});
after(() => forge.close());

const templateOf = (path: string) =>
  (path.startsWith('/local-oauth') ? path : `${API}${path}`).replace(/:(\w+)/g, '{$1}');

describe('GET /forge/2021-12/openapi.json', () => {
  test('is OpenAPI 3.1 with both security schemes', () => {
    assert.equal(document.openapi, '3.1.0');
    const schemes = document.components.securitySchemes;
    assert.deepEqual(Object.keys(schemes).sort(), ['apiKey', 'userToken']);
    assert.equal(schemes.userToken.bearerFormat, 'JWT');
  });

  test('describes every route of the service, with the credential it takes and its problem documents', () => {
    const credential = { apiKey: [['apiKey']], user: [['userToken']], any: [['apiKey'], ['userToken']], public: [] };
    for (const route of forge.service.routes) {
      const operation = document.paths[templateOf(route.path)]?.[route.method.toLowerCase()];
      assert.ok(operation, `${route.method} ${route.path} is not in the document`);
      assert.deepEqual(
        operation.security.map((s: object) => Object.keys(s)),
        credential[route.access],
        `security of ${route.method} ${route.path}`,
      );
      assert.equal(
        operation.responses['4XX'].content['application/problem+json'].schema.$ref,
        '#/components/schemas/Problem',
      );
      const success = Object.keys(operation.responses).filter((code) => /^[23]/.test(code));
      assert.ok(success.length > 0, `${route.method} ${route.path} documents no success answer`);
    }
  });

  test('documents request bodies and parameters from the route schemas', () => {
    const createUser = document.paths[`${API}/user`].post;
    const body = createUser.requestBody.content['application/json'].schema;
    assert.deepEqual([...body.required].sort(), ['email', 'name']);
    assert.equal(body.additionalProperties, false);
    const logs = document.paths[`${API}/workflow/{workflowId}/logs`].get;
    const limit = logs.parameters.find((p: { name: string }) => p.name === 'limit');
    assert.deepEqual(
      [limit.in, limit.schema.minimum, limit.schema.maximum, limit.schema.default],
      ['query', 1, 30, 10],
    );
  });

  test('docs/openapi.json, written by the build, is the document the service serves', (t) => {
    if (!existsSync('docs/openapi.json')) return t.skip('run npm run build first');
    assert.deepEqual(JSON.parse(readFileSync('docs/openapi.json', 'utf8')), document);
  });
});

describe('the answer check every suite runs', () => {
  test('refuses an answer that does not match its documented schema, and an undocumented status', () => {
    const check = new OpenApiCheck(document);
    const url = `${forge.url}${API}/user/abc`;
    check.verify('GET', url, 200, 'application/json', { _id: 'abc', fullName: 'Ada', email: 'a@b.co', workflows: [] });
    assert.throws(
      () => check.verify('GET', url, 200, 'application/json', { _id: 'abc', fullName: 'Ada', workflows: [] }),
      /does not match the OpenAPI document.*email/,
    );
    assert.throws(() => check.verify('GET', url, 302, 'text/html', ''), /is not in the OpenAPI document/);
    assert.throws(() => check.verify('GET', url, 404, 'application/json', {}), /not documented/);
  });

  test('has checked the answers of this file', () => {
    assert.ok(forge.openApi.checked > 0);
  });
});
