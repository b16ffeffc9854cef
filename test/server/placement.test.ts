/**
 * Where a credential goes (docs/integrations.md, "Placement"): the placement rules on their
 * own, then a real HTTP block against a real local server that records what it was sent.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type AppConfig, parseAppConfig } from '../../server/catalog/auth.js';
import { runnerFor } from '../../server/engine/blocks.js';
import { type AppAccess, placeCredential } from '../../server/engine/placement.js';

function config(entry: Record<string, unknown>): AppConfig {
  const problems: string[] = [];
  const parsed = parseAppConfig({ name: 'keyco', type: 'apiKey', ...entry }, 'integrations[0]', problems);
  assert.deepEqual(problems, []);
  return parsed;
}

const keyParameters = [
  { name: 'apiKey', displayName: 'API key', description: '…', secret: true },
  { name: 'subdomain', displayName: 'Account', description: '…', pattern: '^[a-z0-9-]+$' },
];

describe('placement rules', () => {
  test('a named header, the base URL filled with the connection value', () => {
    const access = placeCredential(
      config({
        requiredParameters: keyParameters,
        auth: { kind: 'apiKey', header: { name: 'X-Api-Key', value: '{{credential.apiKey}}' } },
        api: { baseUrl: 'https://{{connection.subdomain}}.keyco.example/api' },
      }),
      { kind: 'parameters', values: { apiKey: 'k-123', subdomain: 'acme' } },
    );
    assert.deepEqual(access, {
      baseUrl: 'https://acme.keyco.example/api',
      headers: { 'X-Api-Key': 'k-123' },
      query: {},
      anyOrigin: false,
      connection: { subdomain: 'acme' },
    });
  });

  test('a query parameter', () => {
    const access = placeCredential(
      config({
        requiredParameters: keyParameters.slice(0, 1),
        auth: { kind: 'apiKey', query: { name: 'api_key', value: '{{credential.apiKey}}' } },
        api: { baseUrl: 'https://api.keyco.example' },
      }),
      { kind: 'parameters', values: { apiKey: 'k-9' } },
    );
    assert.deepEqual(access?.query, { api_key: 'k-9' });
    assert.deepEqual(access?.headers, {});
  });

  test('Basic: username and password from templates', () => {
    const access = placeCredential(
      config({
        requiredParameters: keyParameters.slice(0, 1),
        auth: { kind: 'basic', username: '{{credential.apiKey}}', password: 'X' },
        api: { baseUrl: 'https://api.keyco.example' },
      }),
      { kind: 'parameters', values: { apiKey: 'sk_test_1' } },
    );
    assert.equal(access?.headers.Authorization, `Basic ${Buffer.from('sk_test_1:X').toString('base64')}`);
  });

  test('OAuth: Bearer, or the header a preset names (Shopify)', () => {
    const oauth = (extra: Record<string, unknown>) =>
      config({
        type: 'oauth2',
        requiredParameters: undefined,
        auth: { kind: 'oauth2', clientIdEnv: 'FORGE_X_ID', clientSecretEnv: 'FORGE_X_SECRET', ...extra },
      });
    const bearer = placeCredential(
      oauth({ authorizationUrl: 'https://a.example/auth', tokenUrl: 'https://a.example/token' }),
      { kind: 'oauth2', accessToken: 't1' },
    );
    assert.deepEqual(bearer?.headers, { Authorization: 'Bearer t1' });
    const shopify = placeCredential(oauth({ preset: 'shopify' }), {
      kind: 'oauth2',
      accessToken: 't2',
      connection: { shop: 'my-shop' },
    });
    assert.deepEqual(shopify?.headers, { 'X-Shopify-Access-Token': 't2' });
    assert.equal(shopify?.baseUrl, 'https://my-shop.myshopify.com/admin/api/2025-07');
  });

  test('a connection value cannot move the host: it is encoded, the suffix stays', () => {
    const access = placeCredential(
      config({
        requiredParameters: keyParameters,
        auth: { kind: 'apiKey', header: { name: 'X-Api-Key', value: '{{credential.apiKey}}' } },
        api: { baseUrl: 'https://{{connection.subdomain}}.keyco.example/api' },
      }),
      { kind: 'parameters', values: { apiKey: 'k', subdomain: 'evil.example/#' } },
    );
    assert.equal(access?.baseUrl, 'https://evil.example%2F%23.keyco.example/api');
  });
});

describe('an HTTP block sends the credential only to its API origin', () => {
  let server: Server;
  let origin: string;
  const seen: Array<{ url: string; headers: IncomingMessage['headers'] }> = [];
  before(async () => {
    server = createServer((request, response) => {
      seen.push({ url: request.url ?? '', headers: request.headers });
      response.setHeader('Content-Type', 'application/json');
      response.end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const run = async (url: string, access: AppAccess) => {
    seen.length = 0;
    await runnerFor('http')({
      block: { id: '00000000-0000-4000-8000-000000000001', name: 'Call', type: 'http', parameters: { url } },
      scope: { outputs: new Map(), blockNames: new Map(), vars: {}, env: {} },
      trigger: { kind: 'webhook', body: {} },
      values: undefined,
      access,
      signal: new AbortController().signal,
      httpTimeoutMs: 5000,
    });
    return seen[0]!;
  };
  const access = (): AppAccess => ({
    baseUrl: `${origin}/api`,
    headers: { 'X-Api-Key': 'secret-1' },
    query: { api_key: 'secret-2' },
    anyOrigin: false,
    connection: { team: 'a b' },
  });

  test('a relative URL is appended to the base URL and carries the credential', async () => {
    const sent = await run('/chat.postMessage', access());
    assert.equal(sent.url, '/api/chat.postMessage?api_key=secret-2');
    assert.equal(sent.headers['x-api-key'], 'secret-1');
  });

  test('{{connection.X}} in a block URL is the connection value, encoded', async () => {
    const sent = await run('/teams/{{connection.team}}', access());
    assert.equal(sent.url, '/api/teams/a%20b?api_key=secret-2');
  });

  test('another origin gets nothing', async () => {
    const other = origin.replace('127.0.0.1', 'localhost');
    const sent = await run(`${other}/api/x`, access());
    assert.equal(sent.url, '/api/x');
    assert.equal(sent.headers['x-api-key'], undefined);
  });
});
