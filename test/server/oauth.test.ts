/**
 * The authorization-code flow against an independent authorization server (oidc-provider on
 * loopback): code + PKCE with client_secret_basic and client_secret_post, the code exchanged
 * server-side, denied consent, a wrong client secret; the browser binding of the existing flow
 * (the element confirms the grant with the user token) is kept.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { StoredCredential } from '../../server/engine/placement.js';
import { followRedirects, startProvider, type TestProvider } from './oauth-support.js';
import { API, APP_ORIGIN, assertProblem, TestService } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'forge-oauth-'));
let provider: TestProvider;
let forge: TestService;
const lines: string[] = [];
let startLines: string[] = [];

const env = {
  FORGE_BASIC_ID: 'basic-client',
  FORGE_BASIC_SECRET: 'basic-secret-basic-secret-basic-secret',
  FORGE_POST_ID: 'post-client',
  FORGE_POST_SECRET: 'post-secret-post-secret-post-secret',
  FORGE_WRONG_ID: 'basic-client',
  FORGE_WRONG_SECRET: 'not-the-secret',
};

/** The app's API stand-in: refuses the tokens in `refused` with a 401, answers others; records what it was sent. */
const api = { refused: new Set<string>(), seen: [] as string[], url: '' };
let apiServer: Server;

before(async () => {
  apiServer = createServer((request, response) => {
    const token = (request.headers.authorization ?? '').replace(/^Bearer /, '');
    api.seen.push(token);
    response.writeHead(api.refused.has(token) || !token ? 401 : 200, { 'Content-Type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => apiServer.listen(0, '127.0.0.1', resolve));
  api.url = `http://127.0.0.1:${(apiServer.address() as AddressInfo).port}`;
  const started = await startProvider();
  const { issuer } = started;
  const integration = (name: string, clientAuth: 'basic' | 'post', envName: string, extra = {}) => ({
    name,
    displayName: name[0]!.toUpperCase() + name.slice(1),
    icon: `${name}.svg`,
    type: 'oauth2',
    auth: {
      kind: 'oauth2',
      authorizationUrl: `${issuer}/auth`,
      tokenUrl: `${issuer}/token`,
      revocationUrl: `${issuer}/token/revocation`,
      scopes: ['read', 'write'],
      clientAuth,
      clientIdEnv: `FORGE_${envName}_ID`,
      clientSecretEnv: `FORGE_${envName}_SECRET`,
      ...extra,
    },
    api: { baseUrl: `${api.url}/v1` },
  });
  const workflow = (integration: string) => ({
    workflowId: `wf-${integration}`,
    name: `Ping ${integration}`,
    integrations: [integration],
    blocks: [
      { id: '00000000-0000-4000-8000-000000000001', name: 'Hook', type: 'webhook', parameters: {} },
      {
        id: '00000000-0000-4000-8000-000000000002',
        name: 'Ping',
        type: 'http',
        integration,
        parameters: { method: 'GET', url: '/ping' },
      },
    ],
  });
  const catalog = join(dir, 'catalog.json');
  writeFileSync(
    catalog,
    JSON.stringify({
      integrations: [
        integration('basicco', 'basic', 'BASIC'),
        integration('postco', 'post', 'POST'),
        integration('wrongco', 'basic', 'WRONG'),
        integration('unset', 'basic', 'UNSET'),
        integration('downco', 'basic', 'BASIC', { tokenUrl: 'http://127.0.0.1:9/token' }),
        // A revocation endpoint that cannot be reached (nothing listens on port 9).
        integration('norevoke', 'basic', 'BASIC', { revocationUrl: 'http://127.0.0.1:9/revoke' }),
        // The account label is read from the token answer, as Slack's `team.name`.
        integration('teamco', 'basic', 'BASIC', { account: 'team.name' }),
      ],
      workflows: [workflow('basicco'), workflow('downco'), workflow('norevoke')],
    }),
  );
  forge = await TestService.start({ catalog, env, log: (line) => lines.push(line) });
  startLines = [...lines];
  provider = started.configure(
    [
      {
        client_id: 'basic-client',
        client_secret: env.FORGE_BASIC_SECRET,
        token_endpoint_auth_method: 'client_secret_basic',
      },
      {
        client_id: 'post-client',
        client_secret: env.FORGE_POST_SECRET,
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    `${forge.url}${API}/oauth/callback`,
  );
});

after(async () => {
  await forge?.close();
  await new Promise<void>((resolve) => apiServer.close(() => resolve()));
  await provider?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the popup: start, the provider's pages, the callback; answers the message posted to the opener. */
async function popup(token: string, integration: string) {
  const started = await forge.request('POST', `/credentials/${integration}/oauth`, {
    credential: token,
    headers: { Origin: APP_ORIGIN },
  });
  assert.equal(started.status, 200, started.text);
  const authorize = await fetch(started.body.url, { redirect: 'manual' });
  assert.equal(authorize.status, 302);
  const toProvider = new URL(authorize.headers.get('location')!);
  const callback = await followRedirects(toProvider.toString(), `${forge.url}${API}/oauth/callback`);
  const page = await (await fetch(callback)).text();
  const call = /window\.opener\.postMessage\((\{.*?\}), ("[^"]*")\)/.exec(page);
  assert.ok(call, page);
  return { message: JSON.parse(call[1]!) as Record<string, string>, authorizeUrl: toProvider };
}

const confirm = (token: string, integration: string, grant: string) =>
  forge.request('POST', `/credentials/${integration}/oauth/confirm`, {
    credential: token,
    headers: { Origin: APP_ORIGIN },
    json: { grant },
  });

const stored = async (userId: string, integration: string) => {
  const sealed = await forge.store.credentials.getSecret(userId, integration);
  return sealed ? forge.service.secrets.open<StoredCredential>(sealed) : undefined;
};

describe('authorization code with PKCE against oidc-provider', () => {
  for (const integration of ['basicco', 'postco']) {
    test(`${integration}: the code is exchanged server-side and the grant confirmed by the element`, async () => {
      const { userId, token } = await forge.newUser();
      const before = provider.tokenRequests.authorization_code;
      const { message, authorizeUrl } = await popup(token, integration);
      // The redirect carries the client id, the scopes, state and an S256 challenge.
      assert.equal(
        authorizeUrl.searchParams.get('client_id'),
        integration === 'basicco' ? 'basic-client' : 'post-client',
      );
      assert.equal(authorizeUrl.searchParams.get('scope'), 'read write');
      assert.equal(authorizeUrl.searchParams.get('code_challenge_method'), 'S256');
      assert.match(authorizeUrl.searchParams.get('code_challenge') ?? '', /^[\w-]{43}$/);
      assert.equal(authorizeUrl.searchParams.get('redirect_uri'), `${forge.url}${API}/oauth/callback`);
      assert.equal(message.status, 'authorized', JSON.stringify(message));
      assert.equal(provider.tokenRequests.authorization_code, before + 1);
      // Nothing is the user's until the element confirms.
      assert.equal(await stored(userId, integration), undefined);
      const confirmed = await confirm(token, integration, message.grant!);
      assert.equal(confirmed.status, 200, confirmed.text);
      const credential = await stored(userId, integration);
      assert.equal(credential?.kind, 'oauth2');
      if (credential?.kind !== 'oauth2') return;
      assert.ok(credential.accessToken.length > 10);
      assert.ok(credential.refreshToken);
      assert.ok(credential.expiresAt && credential.expiresAt > Date.now());
    });
  }

  test('denied consent reaches the element as "denied"; nothing is stored', async () => {
    const { userId, token } = await forge.newUser();
    provider.denyNext = true;
    const { message } = await popup(token, 'basicco');
    assert.equal(message.status, 'denied');
    assert.equal(message.grant, undefined);
    assert.equal(await stored(userId, 'basicco'), undefined);
  });

  test('a wrong client secret is a clear failure, in the log the provider’s answer; nothing is stored', async () => {
    const { userId, token } = await forge.newUser();
    lines.length = 0;
    const { message } = await popup(token, 'wrongco');
    assert.equal(message.status, 'error');
    assert.match(message.message!, /Wrongco could not be connected \(The app refused the service’s OAuth client\.\)/);
    assert.equal(message.grant, undefined);
    assert.equal(await stored(userId, 'wrongco'), undefined);
    const logged = lines.find((line) => line.startsWith('oauth wrongco'));
    assert.match(logged ?? '', /invalid_client/);
    assert.ok(!logged?.includes(env.FORGE_WRONG_SECRET));
  });

  test('an integration whose client is not configured: a warning at start, and a problem naming the variable', async () => {
    const { token } = await forge.newUser();
    const answer = await forge.request('POST', '/credentials/unset/oauth', {
      credential: token,
      headers: { Origin: APP_ORIGIN },
    });
    assert.deepEqual(
      startLines.filter((line) => line.startsWith('warning:')),
      ["warning: unset can't be connected until FORGE_UNSET_ID and FORGE_UNSET_SECRET are set (its OAuth client)"],
    );
    assertProblem(answer, 409);
    assert.match(answer.body.detail, /FORGE_UNSET_ID/);
  });
});

/** A user connected to basicco (or another integration of the provider) through the real flow. */
async function connectedUser(integration = 'basicco') {
  const user = await forge.newUser();
  if (integration !== 'downco') {
    const { message } = await popup(user.token, integration);
    assert.equal((await confirm(user.token, integration, message.grant!)).status, 200);
  }
  return user;
}

async function install(user: { token: string }, integration = 'basicco') {
  const installed = await forge.asUser(user.token, 'POST', `/workflow/wf-${integration}/install`, {});
  assert.equal(installed.status, 201, installed.text);
  return installed.body.workflowId as string;
}

const run = async (childId: string) =>
  forge.service.engine.run((await forge.store.children.get(childId))!, { kind: 'webhook', body: {} });

/** A counter's value on the service's /metrics text (0 before it is first counted). */
async function counted(name: string, labels: string): Promise<number> {
  const text = await forge.service.metrics!.registry.metrics();
  return Number(new RegExp(`^${name}\\{${labels}\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
}

/** Moves the stored token's expiry: the test's stand-in for waiting until it is about to expire. */
async function expireSoon(userId: string, integration = 'basicco') {
  const credential = (await stored(userId, integration)) as Extract<StoredCredential, { kind: 'oauth2' }>;
  const sealed = forge.service.secrets.seal({ ...credential, expiresAt: Date.now() + 1000 });
  await forge.store.credentials.replaceSecret(userId, integration, sealed);
  return credential;
}

describe('tokens stay fresh, exactly once', () => {
  test('a fresh token makes no request beyond the run’s own', async () => {
    const user = await connectedUser();
    const child = await install(user);
    const refreshes = provider.tokenRequests.refresh_token;
    const outcome = await run(child);
    assert.equal(outcome.execution.finished, true, JSON.stringify(outcome.error));
    assert.equal(provider.tokenRequests.refresh_token, refreshes);
  });

  test('a token about to expire is refreshed once however many runs need it; the rotated refresh token replaces the old', async () => {
    const user = await connectedUser();
    const child = await install(user);
    const old = await expireSoon(user.userId);
    const refreshes = provider.tokenRequests.refresh_token;
    const refreshed = await counted('forge_token_refreshes_total', 'integration="basicco",outcome="refreshed"');
    api.seen.length = 0;
    const outcomes = await Promise.all([run(child), run(child), run(child)]);
    assert.deepEqual(
      outcomes.map((o) => o.execution.finished),
      [true, true, true],
    );
    assert.equal(provider.tokenRequests.refresh_token, refreshes + 1);
    assert.equal(
      await counted('forge_token_refreshes_total', 'integration="basicco",outcome="refreshed"'),
      refreshed + 1,
    );
    const now = (await stored(user.userId, 'basicco')) as Extract<StoredCredential, { kind: 'oauth2' }>;
    assert.notEqual(now.accessToken, old.accessToken);
    assert.ok(now.refreshToken && now.refreshToken !== old.refreshToken);
    assert.deepEqual(new Set(api.seen), new Set([now.accessToken]));
  });

  test('after a 401 the token is refreshed once and the request made once more', async () => {
    const user = await connectedUser();
    const child = await install(user);
    const old = (await stored(user.userId, 'basicco')) as Extract<StoredCredential, { kind: 'oauth2' }>;
    api.refused.add(old.accessToken);
    api.seen.length = 0;
    const refreshes = provider.tokenRequests.refresh_token;
    const outcome = await run(child);
    assert.equal(outcome.execution.finished, true, JSON.stringify(outcome.error));
    assert.equal(provider.tokenRequests.refresh_token, refreshes + 1);
    assert.equal(api.seen.length, 2);
    assert.equal(api.seen[0], old.accessToken);
  });

  test('a replayed refresh token (the provider revokes the grant) marks the connection broken; runs then fail at once', async () => {
    const user = await connectedUser();
    const child = await install(user);
    const old = await expireSoon(user.userId);
    assert.equal((await run(child)).execution.finished, true);
    // The old refresh token again: oidc-provider treats the replay as theft and revokes the grant.
    await forge.store.credentials.replaceSecret(
      user.userId,
      'basicco',
      forge.service.secrets.seal({ ...old, expiresAt: Date.now() + 1000 }),
    );
    const broken = await counted('forge_connections_broken_total', 'integration="basicco"');
    const refusedRefreshes = await counted('forge_token_refreshes_total', 'integration="basicco",outcome="broken"');
    const failed = await run(child);
    assert.equal(failed.error?.kind, 'connection', JSON.stringify(failed.error));
    assert.equal((await forge.store.credentials.getConnection(user.userId, 'basicco'))?.status, 'broken');
    // The metrics count the refresh the provider refused and the connection it broke.
    assert.equal(await counted('forge_connections_broken_total', 'integration="basicco"'), broken + 1);
    assert.equal(
      await counted('forge_token_refreshes_total', 'integration="basicco",outcome="broken"'),
      refusedRefreshes + 1,
    );
    api.seen.length = 0;
    const refreshes = provider.tokenRequests.refresh_token;
    const again = await run(child);
    assert.equal(again.error?.kind, 'connection');
    assert.deepEqual(api.seen, []);
    assert.equal(provider.tokenRequests.refresh_token, refreshes);
    // Connecting again clears it at once.
    const { message } = await popup(user.token, 'basicco');
    assert.equal((await confirm(user.token, 'basicco', message.grant!)).status, 200);
    assert.equal((await forge.store.credentials.getConnection(user.userId, 'basicco'))?.status, 'connected');
    assert.equal((await run(child)).execution.finished, true);
  });

  test('a token endpoint that cannot be reached fails the run as the app’s; the refresh token is kept', async () => {
    const user = await forge.newUser();
    const credential = { kind: 'oauth2', accessToken: 'a1', refreshToken: 'r1', expiresAt: Date.now() + 1000 };
    await forge.store.credentials.save(user.userId, 'downco', forge.service.secrets.seal(credential));
    const child = await install(user, 'downco');
    const outcome = await run(child);
    assert.equal(outcome.error?.kind, 'app', JSON.stringify(outcome.error));
    assert.match(outcome.error?.error ?? '', /could not renew its access token/);
    assert.deepEqual(await stored(user.userId, 'downco'), credential);
    assert.equal((await forge.store.credentials.getConnection(user.userId, 'downco'))?.status, 'connected');
  });
});

describe('connections the user can read and disconnect', () => {
  /** Asks the provider for a new token with a refresh token: what an app does with a grant still alive. */
  const refreshAtProvider = (refreshToken: string) =>
    fetch(`${provider.issuer}/token`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: `Basic ${Buffer.from(`basic-client:${env.FORGE_BASIC_SECRET}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }),
    });

  test('the account label comes from the token answer, and GET /credentials and GET /setup show it', async () => {
    provider.tokenAnswerExtras = { team: { name: 'Acme Team', id: 'T123' } };
    try {
      const user = await connectedUser('teamco');
      const [listed] = (await forge.asUser(user.token, 'GET', '/credentials')).body.data;
      assert.deepEqual(
        { ...listed, connectedAt: undefined },
        {
          integration: 'teamco',
          connectedAt: undefined,
          status: 'connected',
          account: 'Acme Team',
        },
      );
      const setup = await forge.asUser(user.token, 'GET', '/setup?integration=teamco');
      assert.deepEqual(setup.body.credentials, [listed]);
    } finally {
      provider.tokenAnswerExtras = {};
    }
  });

  test('DELETE /credentials/:integration revokes the grant at the provider and switches off what needs it', async () => {
    const user = await connectedUser();
    const child = await install(user);
    const credential = (await stored(user.userId, 'basicco')) as Extract<StoredCredential, { kind: 'oauth2' }>;
    const disconnected = await forge.asUser(user.token, 'DELETE', '/credentials/basicco');
    assert.equal(disconnected.status, 200, disconnected.text);
    assert.deepEqual(disconnected.body, { integration: 'basicco', switchedOff: [child], revocation: 'revoked' });
    assert.equal((await forge.store.children.get(child))?.active, false);
    assert.deepEqual((await forge.asUser(user.token, 'GET', '/credentials')).body.data, []);
    // The grant is gone at the provider: its refresh token no longer works.
    const refresh = await refreshAtProvider(credential.refreshToken!);
    assert.equal(refresh.status, 400);
    assert.equal((await refresh.json()).error, 'invalid_grant');
    assertProblem(await forge.asUser(user.token, 'DELETE', '/credentials/basicco'), 404);
  });

  test('the host disconnects with the API key: the same revocation', async () => {
    const user = await connectedUser();
    const credential = (await stored(user.userId, 'basicco')) as Extract<StoredCredential, { kind: 'oauth2' }>;
    const disconnected = await forge.asHost('DELETE', `/user/${user.userId}/credentials/basicco`);
    assert.equal(disconnected.status, 200, disconnected.text);
    assert.equal(disconnected.body.revocation, 'revoked');
    assert.equal((await refreshAtProvider(credential.refreshToken!)).status, 400);
  });

  test('another user’s token never disconnects this user, nor reaches the provider', async () => {
    const owner = await connectedUser();
    const other = await forge.newUser();
    const credential = (await stored(owner.userId, 'basicco')) as Extract<StoredCredential, { kind: 'oauth2' }>;
    assertProblem(await forge.asUser(other.token, 'DELETE', '/credentials/basicco'), 404);
    const byHostRoute = await forge.asUser(other.token, 'DELETE', `/user/${owner.userId}/credentials/basicco`);
    assert.ok([401, 403].includes(byHostRoute.status), byHostRoute.text);
    assert.equal((await forge.store.credentials.getConnection(owner.userId, 'basicco'))?.status, 'connected');
    // The owner's grant still works at the provider.
    assert.equal((await refreshAtProvider(credential.refreshToken!)).status, 200);
  });

  test('a revocation endpoint that fails: the connection is deleted all the same, the answer and the log say so', async () => {
    const user = await connectedUser('norevoke');
    const child = await install(user, 'norevoke');
    lines.length = 0;
    const disconnected = await forge.asUser(user.token, 'DELETE', '/credentials/norevoke');
    assert.equal(disconnected.status, 200, disconnected.text);
    assert.deepEqual(disconnected.body, { integration: 'norevoke', switchedOff: [child], revocation: 'failed' });
    // Not half-deleted: no credential left, the workflow off, nothing left to run with the token.
    assert.equal(await stored(user.userId, 'norevoke'), undefined);
    assert.equal((await forge.store.children.get(child))?.active, false);
    assert.deepEqual((await forge.asUser(user.token, 'GET', '/credentials')).body.data, []);
    assert.match(lines.find((line) => line.startsWith('oauth norevoke')) ?? '', /revocation for user .* failed/);
    assert.ok(!lines.some((line) => line.includes(env.FORGE_BASIC_SECRET)));
  });
});
