/**
 * The authorization-code flow against an independent authorization server (oidc-provider on
 * loopback): code + PKCE with client_secret_basic and client_secret_post, the code exchanged
 * server-side, denied consent, a wrong client secret; the browser binding of the existing flow
 * (the element confirms the grant with the user token) is kept.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

before(async () => {
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
    api: { baseUrl: `${issuer}/api` },
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
      ],
      workflows: [],
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
  const sealed = await forge.store.getCredentialSecret(userId, integration);
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
