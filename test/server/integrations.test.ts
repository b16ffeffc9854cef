/**
 * The catalog's `auth` and `api` (docs/integrations.md): checked at start with problems that
 * name the integration and the field, never part of what the elements read, and the save-time
 * rules of API keys (a value's pattern, the verify request) over HTTP against a real app stand-in.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { checkPreset, presets } from '../../server/catalog/auth.js';
import { Catalog } from '../../server/catalog/catalog.js';
import { assertProblem, TestService } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'forge-integrations-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function catalogFile(integrations: unknown[], workflows: unknown[] = []): string {
  const path = join(dir, `catalog-${++files}.json`);
  writeFileSync(path, JSON.stringify({ integrations, workflows }));
  return path;
}

const acme = {
  name: 'acme',
  displayName: 'Acme',
  icon: 'acme.svg',
  type: 'oauth2',
  auth: {
    kind: 'oauth2',
    authorizationUrl: 'https://acme.example/oauth/authorize',
    tokenUrl: 'https://acme.example/oauth/token',
    scopes: ['read', 'write'],
    clientAuth: 'basic',
    clientIdEnv: 'FORGE_ACME_CLIENT_ID',
    clientSecretEnv: 'FORGE_ACME_CLIENT_SECRET',
  },
  api: { baseUrl: 'https://api.acme.example/v2' },
};

const problemsOf = (integrations: unknown[]) => {
  try {
    new Catalog(catalogFile(integrations));
  } catch (error) {
    return (error as Error).message;
  }
  return '';
};

describe('the catalog is checked at start', () => {
  test('a well-formed auth and api load', () => {
    const catalog = new Catalog(
      catalogFile([
        acme,
        {
          ...acme,
          name: 'hub',
          auth: { kind: 'oauth2', preset: 'hubspot', clientIdEnv: 'A', clientSecretEnv: 'B' },
          api: undefined,
        },
      ]),
    );
    assert.equal(catalog.apps.get('acme')?.auth?.kind, 'oauth2');
    assert.equal(catalog.apps.get('hub')?.baseUrl, 'https://api.hubapi.com');
  });

  test('each problem names the integration and the field', () => {
    const message = problemsOf([
      { ...acme, auth: { ...acme.auth, clientAuth: 'header', clientSecretEnv: undefined } },
      {
        ...acme,
        name: 'keyco',
        type: 'apiKey',
        auth: { kind: 'apiKey' },
        api: { baseUrl: 'https://{{connection.host}}/x' },
      },
      { ...acme, name: 'preset', auth: { kind: 'oauth2', preset: 'nope', clientIdEnv: 'A', clientSecretEnv: 'B' } },
      {
        ...acme,
        name: 'leak',
        type: 'apiKey',
        requiredParameters: [{ name: 'key', displayName: 'Key', description: 'k', secret: true }],
        auth: { kind: 'apiKey', header: { name: 'X-Key', value: '{{credential.key}}' } },
        api: { baseUrl: 'https://api.leak.example/{{connection.key}}' },
      },
    ]);
    assert.match(message, /integrations\[0\] \(acme\)\.auth\.clientSecretEnv: required/);
    assert.match(message, /integrations\[0\] \(acme\)\.auth\.clientAuth: /);
    assert.match(message, /integrations\[1\] \(keyco\)\.auth: an apiKey auth needs one of "header" or "query"/);
    assert.match(message, /integrations\[2\] \(preset\)\.auth\.preset: no built-in preset "nope"/);
    assert.match(message, /integrations\[3\] \(leak\)\.api\.baseUrl: \{\{connection\.key\}\} is a secret parameter/);
  });

  test('every built-in preset is well formed', () => {
    const all = presets();
    for (const name of [
      'slack',
      'hubspot',
      'google',
      'microsoft',
      'salesforce',
      'github',
      'gitlab',
      'notion',
      'airtable',
      'asana',
      'linear',
      'atlassian',
      'zendesk',
      'shopify',
      'mailchimp',
      'quickbooks',
      'xero',
      'pipedrive',
      'zoom',
      'dropbox',
      'intercom',
      'calendly',
    ]) {
      assert.ok(all[name], `a preset for ${name}`);
    }
    for (const [name, preset] of Object.entries(all)) {
      assert.ok(checkPreset(preset), `${name}: ${JSON.stringify(checkPreset.errors)}`);
      // A catalog entry naming only the preset, its client's variables and scopes needs nothing else.
      const entry = {
        ...acme,
        name,
        auth: { kind: 'oauth2', preset: name, clientIdEnv: 'ID', clientSecretEnv: 'SECRET', scopes: ['x'] },
        api: undefined,
      };
      assert.equal(problemsOf([entry]), '', name);
    }
  });
});

describe('what the elements read never carries auth or api', () => {
  let service: TestService;
  let app: Server;
  let appUrl: string;
  before(async () => {
    // The app's stand-in: its key is "good-key", sent as X-Api-Key to /v1/me.
    app = createServer((request, response) => {
      const ok = request.url === '/api/v1/me' && request.headers['x-api-key'] === 'good-key';
      response.writeHead(ok ? 200 : 401, { 'Content-Type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
    const keyco = {
      name: 'keyco',
      displayName: 'KeyCo',
      icon: 'keyco.svg',
      type: 'apiKey',
      requiredParameters: [
        { name: 'apiKey', displayName: 'API key', description: 'Your key.', secret: true },
        {
          name: 'region',
          displayName: 'Region',
          description: 'eu or us.',
          pattern: '^(eu|us)$',
          patternMessage: 'Choose eu or us.',
        },
        { name: 'team', displayName: 'Team', description: 'Lower case.', pattern: '^[a-z]+$' },
      ],
      auth: {
        kind: 'apiKey',
        header: { name: 'X-Api-Key', value: '{{credential.apiKey}}' },
        verify: { path: '/v1/me' },
      },
      api: { baseUrl: `${appUrl}/api` },
    };
    const workflow = {
      workflowId: 'wf-both',
      name: 'Both',
      integrations: ['acme', 'keyco'],
      blocks: [{ id: '00000000-0000-4000-8000-000000000001', name: 'Hook', type: 'webhook', parameters: {} }],
    };
    service = await TestService.start({ catalog: catalogFile([acme, keyco], [workflow]) });
  });
  after(async () => {
    await service?.close();
    await new Promise<void>((resolve) => app.close(() => resolve()));
  });

  test('GET /workflow, /workflow-summary and /setup', async () => {
    const { token } = await service.newUser();
    for (const path of ['/workflow', '/workflow-summary', '/setup?workflowId=wf-both', '/setup?integration=keyco']) {
      const answer = await service.asUser(token, 'GET', path);
      assert.equal(answer.status, 200, `${path}: ${answer.text}`);
      for (const secret of [
        'FORGE_ACME',
        'tokenUrl',
        'authorizationUrl',
        '"auth"',
        '"api"',
        'baseUrl',
        '"secret"',
        '"pattern"',
        'X-Api-Key',
      ]) {
        assert.ok(!answer.text.includes(secret), `${path} carries ${secret}`);
      }
    }
  });

  test('a value that fails its pattern is a 400 naming the field; nothing is saved', async () => {
    const { token } = await service.newUser();
    const answer = await service.asUser(token, 'POST', '/credentials/keyco', {
      apiKey: 'good-key',
      region: 'evil.example',
      team: 'Ops',
    });
    assertProblem(answer, 400);
    // The end user reads these next to the fields: the catalog's words, or plain ones; never the expression.
    assert.deepEqual(answer.body.errors, [
      { path: 'body.region', message: 'Choose eu or us.' },
      { path: 'body.team', message: 'This is not a valid Team: check it and try again.' },
    ]);
    assert.deepEqual((await service.asUser(token, 'GET', '/credentials')).body.data, []);
  });

  test('a key the app refuses on its verify request is a 400 that says so; a good one is saved', async () => {
    const { token } = await service.newUser();
    const refused = await service.asUser(token, 'POST', '/credentials/keyco', {
      apiKey: 'bad-key',
      region: 'eu',
      team: 'ops',
    });
    assertProblem(refused, 400);
    assert.match(refused.body.detail, /KeyCo refused these values \(401\)/);
    assert.deepEqual((await service.asUser(token, 'GET', '/credentials')).body.data, []);
    const saved = await service.asUser(token, 'POST', '/credentials/keyco', {
      apiKey: 'good-key',
      region: 'eu',
      team: 'ops',
    });
    assert.equal(saved.status, 200, saved.text);
  });
});
