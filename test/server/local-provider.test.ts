/**
 * The local OAuth provider (server/local-provider/) is a real OAuth 2.0 authorization server, and
 * the service reaches it through the production flow (catalog `auth`, oauth4webapi): PKCE
 * checked, codes used once, short-lived access tokens refreshed with rotation, a replayed refresh
 * token revokes the grant, revocation (RFC 7009), introspection for the sandbox, which takes
 * only the tokens the provider still considers valid. Its client is made on first start.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startService } from '../../server/app.js';
import type { StoredCredential } from '../../server/engine/placement.js';
import { revokeCredential } from '../../server/oauth/client.js';
import { type RunningSandbox, startSandbox } from '../../server/sandbox.js';
import { APP_ORIGIN, TestService } from './support.js';

type OAuthCredential = Extract<StoredCredential, { kind: 'oauth2' }>;

const dir = mkdtempSync(join(tmpdir(), 'forge-local-provider-'));
const TOKEN_TTL_SECONDS = 2;
let sandbox: RunningSandbox;
let forge: TestService;

const postToSlack = (integration: string) => ({
  workflowId: `wf-${integration}`,
  name: `Post to ${integration}`,
  integrations: [integration],
  blocks: [
    { id: '00000000-0000-4000-8000-000000000001', name: 'Hook', type: 'webhook', parameters: {} },
    {
      id: '00000000-0000-4000-8000-000000000002',
      name: 'Post',
      type: 'http',
      integration,
      parameters: {
        method: 'POST',
        url: '{{env.SANDBOX_URL}}/slack/chat.postMessage',
        body: { channel: '#general', text: 'hello' },
      },
    },
  ],
});

before(async () => {
  sandbox = await startSandbox({ port: 0 });
  const catalog = join(dir, 'catalog.json');
  writeFileSync(
    catalog,
    JSON.stringify({
      integrations: [
        // Spelled out as the demo catalog does, and (older catalogs) with no `auth` at all.
        {
          name: 'slack',
          displayName: 'Slack',
          icon: 'slack.svg',
          type: 'oauth2',
          auth: {
            kind: 'oauth2',
            authorizationUrl: '/local-oauth/slack/authorize',
            tokenUrl: '/local-oauth/slack/token',
            revocationUrl: '/local-oauth/slack/revoke',
            scopes: ['chat:write'],
            clientAuth: 'post',
            clientIdEnv: 'FORGE_LOCAL_OAUTH_CLIENT_ID',
            clientSecretEnv: 'FORGE_LOCAL_OAUTH_CLIENT_SECRET',
          },
        },
        { name: 'legacy', displayName: 'Legacy', icon: 'legacy.svg', type: 'oauth2' },
      ],
      workflows: [postToSlack('slack')],
    }),
  );
  forge = await TestService.start({
    catalog,
    sandboxUrl: sandbox.url,
    env: {},
    localProvider: { accessTokenTtlSeconds: TOKEN_TTL_SECONDS },
  });
  sandbox.useProvider(forge.url);
});

after(async () => {
  await forge?.close();
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

const form = (fields: Record<string, string>) => ({
  body: new URLSearchParams(fields).toString(),
  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
});

/** The popup, over HTTP: start, the consent page (Allow), the callback; answers the consent URL and the posted message. */
async function popup(token: string, integration = 'slack') {
  const started = await forge.request('POST', `/credentials/${integration}/oauth`, {
    credential: token,
    headers: { Origin: APP_ORIGIN },
  });
  assert.equal(started.status, 200, started.text);
  const consentUrl = (await fetch(started.body.url, { redirect: 'manual' })).headers.get('location')!;
  const consentPage = await forge.request('GET', consentUrl);
  assert.equal(consentPage.status, 200, consentPage.text);
  const allowed = await forge.request('POST', consentUrl, form({ decision: 'allow' }));
  assert.equal(allowed.status, 303, allowed.text);
  const page = (await forge.request('GET', allowed.headers.get('location')!)).text;
  const call = /window\.opener\.postMessage\((\{.*?\}), ("[^"]*")\)/.exec(page);
  assert.ok(call, page);
  return { consentUrl: new URL(consentUrl), message: JSON.parse(call[1]!) as Record<string, string> };
}

async function connectedUser(integration = 'slack') {
  const user = await forge.newUser();
  const { message } = await popup(user.token, integration);
  assert.equal(message.status, 'authorized', JSON.stringify(message));
  const confirmed = await forge.request('POST', `/credentials/${integration}/oauth/confirm`, {
    credential: user.token,
    headers: { Origin: APP_ORIGIN },
    json: { grant: message.grant },
  });
  assert.equal(confirmed.status, 200, confirmed.text);
  return user;
}

const stored = async (userId: string, integration = 'slack') =>
  forge.service.secrets.open<OAuthCredential>((await forge.store.credentials.getSecret(userId, integration))!);

async function install(token: string) {
  const installed = await forge.asUser(token, 'POST', '/workflow/wf-slack/install', {});
  assert.equal(installed.status, 201, installed.text);
  return installed.body.workflowId as string;
}

const run = async (childId: string) =>
  forge.service.engine.run((await forge.store.children.get(childId))!, { kind: 'webhook', body: {} });

/** What the sandbox's Slack answers a token. */
const slackAnswers = async (token: string) =>
  (
    await fetch(`${sandbox.url}/slack/chat.postMessage`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ channel: '#general', text: 'hi' }),
    })
  ).status;

const token = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
  forge.request('POST', `${forge.url}/local-oauth/slack/token`, {
    ...form(fields),
    headers: { ...form(fields).headers, ...headers },
  });

const client = () => ({
  client_id: forge.service.env.FORGE_LOCAL_OAUTH_CLIENT_ID!,
  client_secret: forge.service.env.FORGE_LOCAL_OAUTH_CLIENT_SECRET!,
});

describe('the local provider is an OAuth 2.0 authorization server, reached by the production flow', () => {
  test('a connection gets a short-lived access token and a refresh token; the sandbox takes the token', async () => {
    const user = await connectedUser();
    const credential = await stored(user.userId);
    assert.ok(credential.refreshToken);
    assert.equal(credential.lifetimeMs, TOKEN_TTL_SECONDS * 1000);
    assert.equal(credential.scope, 'chat:write');
    assert.equal(await slackAnswers(credential.accessToken), 200);
  });

  test('an integration without `auth` connects to the local provider through the same flow', async () => {
    const user = await connectedUser('legacy');
    const credential = await stored(user.userId, 'legacy');
    assert.ok(credential.accessToken && credential.refreshToken);
  });

  test('PKCE is required and checked; a wrong client secret is invalid_client', async () => {
    const { token: userToken } = await forge.newUser();
    const { consentUrl } = await popup(userToken);
    // Without a challenge: back to the client with invalid_request, no code.
    const withoutPkce = new URL(consentUrl);
    withoutPkce.searchParams.delete('code_challenge');
    const refused = await forge.request('POST', withoutPkce.toString(), form({ decision: 'allow' }));
    const back = new URL(refused.headers.get('location')!);
    assert.equal(back.searchParams.get('error'), 'invalid_request');
    assert.equal(back.searchParams.get('code'), null);
    // A code for this consent, exchanged with a verifier that does not match its challenge.
    const allowed = await forge.request('POST', consentUrl.toString(), form({ decision: 'allow' }));
    const code = new URL(allowed.headers.get('location')!).searchParams.get('code')!;
    const redirect_uri = consentUrl.searchParams.get('redirect_uri')!;
    const wrong = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri,
      code_verifier: 'x'.repeat(43),
      ...client(),
    });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.error, 'invalid_grant');
    // A wrong client secret is invalid_client, with a 401.
    const stranger = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri,
      ...client(),
      client_secret: 'x',
    });
    assert.equal(stranger.status, 401);
    assert.equal(stranger.body.error, 'invalid_client');
  });

  test('an expired token is refreshed before the run; the refresh token rotates', async () => {
    const user = await connectedUser();
    const child = await install(user.token);
    const before = await stored(user.userId);
    // The provider's clock is real: wait out the two-second token.
    await new Promise((resolve) => setTimeout(resolve, TOKEN_TTL_SECONDS * 1000 + 100));
    assert.equal(await slackAnswers(before.accessToken), 401, 'an expired token is refused as a real API does');
    const outcome = await run(child);
    assert.equal(outcome.execution.finished, true, JSON.stringify(outcome.error));
    const after = await stored(user.userId);
    assert.notEqual(after.accessToken, before.accessToken);
    assert.ok(after.refreshToken && after.refreshToken !== before.refreshToken);
    assert.equal(await slackAnswers(after.accessToken), 200);
  });

  test('a replayed refresh token revokes the grant: the connection turns broken', async () => {
    const user = await connectedUser();
    const child = await install(user.token);
    const first = await stored(user.userId);
    // The service rotates once (a stand-in for the token expiring: an expiry in the past)...
    await forge.store.credentials.replaceSecret(
      user.userId,
      'slack',
      forge.service.secrets.seal({ ...first, expiresAt: Date.now() - 1 }),
    );
    assert.equal((await run(child)).execution.finished, true);
    const rotated = await stored(user.userId);
    // ...then someone replays the first refresh token: the provider takes the whole grant back.
    const replay = await token({ grant_type: 'refresh_token', refresh_token: first.refreshToken!, ...client() });
    assert.equal(replay.status, 400);
    assert.equal(replay.body.error, 'invalid_grant');
    assert.equal(await slackAnswers(rotated.accessToken), 401);
    const failed = await run(child);
    assert.equal(failed.error?.kind, 'connection', JSON.stringify(failed.error));
    assert.equal((await forge.store.credentials.getConnection(user.userId, 'slack'))?.status, 'broken');
  });

  test('revocation (RFC 7009) ends the grant: its tokens are refused and a refresh fails', async () => {
    const user = await connectedUser();
    const credential = await stored(user.userId);
    const slack = forge.service.catalog.apps.get('slack')!.auth;
    assert.equal(slack?.kind, 'oauth2');
    if (slack?.kind !== 'oauth2') return;
    const app = { integration: 'slack', auth: slack, serviceUrl: forge.url };
    assert.equal(await revokeCredential(app, forge.service.env, credential), true);
    assert.equal(await slackAnswers(credential.accessToken), 401);
    const refresh = await token({ grant_type: 'refresh_token', refresh_token: credential.refreshToken!, ...client() });
    assert.equal(refresh.body.error, 'invalid_grant');
  });

  test('the sandbox refuses tokens the provider never issued, and another app’s', async () => {
    assert.equal(await slackAnswers('made-up-token'), 401);
    const user = await connectedUser('legacy');
    assert.equal(await slackAnswers((await stored(user.userId, 'legacy')).accessToken), 401);
  });

  test('the demo’s revoke removes the grant at the provider: the next run breaks the connection', async () => {
    const user = await connectedUser();
    const child = await install(user.token);
    assert.equal((await fetch(`${sandbox.url}/sandbox/revoke/slack`, { method: 'POST' })).status, 204);
    const failed = await run(child);
    assert.equal(failed.error?.kind, 'connection', JSON.stringify(failed.error));
    assert.equal((await forge.store.credentials.getConnection(user.userId, 'slack'))?.status, 'broken');
  });
});

describe('its client is made on first start and kept', () => {
  test('the same client id after a restart on the same database; grants survive it', async () => {
    // The client is derived from the service's key: here each database keeps its own key file,
    // as on a SQLite install, even in the suite's PostgreSQL pass (which sets FORGE_SECRET_KEY).
    const envKey = process.env.FORGE_SECRET_KEY;
    delete process.env.FORGE_SECRET_KEY;
    const started: Array<{ close(): Promise<void> }> = [];
    try {
      const db = join(dir, 'forge.db');
      const first = await startService({ port: 0, db, allowedOrigins: [APP_ORIGIN], scheduler: false, env: {} });
      started.push(first);
      const clientId = first.env.FORGE_LOCAL_OAUTH_CLIENT_ID;
      assert.match(clientId ?? '', /^forge-local-[0-9a-f]{16}$/);
      assert.ok((first.env.FORGE_LOCAL_OAUTH_CLIENT_SECRET ?? '').length >= 43);
      await started.pop()!.close();
      const second = await startService({ port: 0, db, allowedOrigins: [APP_ORIGIN], scheduler: false, env: {} });
      started.push(second);
      assert.equal(second.env.FORGE_LOCAL_OAUTH_CLIENT_ID, clientId);
      // Another database (another key) is another client.
      const other = await startService({ port: 0, db: ':memory:', scheduler: false, env: {} });
      started.push(other);
      assert.notEqual(other.env.FORGE_LOCAL_OAUTH_CLIENT_ID, clientId);
    } finally {
      // A failed assertion must not leave a service listening: the test file would never end.
      for (const service of started) await service.close();
      if (envKey !== undefined) process.env.FORGE_SECRET_KEY = envKey;
    }
  });
});

describe('a popup its consent page cuts from its opener', () => {
  const start = (token: string, body: unknown) =>
    forge.request('POST', '/credentials/slack/oauth', {
      credential: token,
      headers: { Origin: APP_ORIGIN },
      json: body,
    });

  test('the return page must be on the origin that starts the flow', async () => {
    const { token: userToken } = await forge.newUser();
    for (const returnUrl of ['https://elsewhere.example/return', 'not a url', 42]) {
      const answer = await start(userToken, { returnUrl });
      assert.equal(answer.status, 400, JSON.stringify(returnUrl));
      assert.match(answer.body.detail, /return page on this page's own origin/);
    }
  });

  test('the callback page hands the result to the return page when it has no opener; without one it says what to do', async () => {
    const { token: userToken } = await forge.newUser();
    for (const returnUrl of [`${APP_ORIGIN}/forge-oauth-return.html`, undefined]) {
      const started = await start(userToken, returnUrl ? { returnUrl } : {});
      assert.equal(started.status, 200, started.text);
      const consentUrl = (await fetch(started.body.url, { redirect: 'manual' })).headers.get('location')!;
      const allowed = await forge.request('POST', consentUrl, form({ decision: 'allow' }));
      const page = (await forge.request('GET', allowed.headers.get('location')!)).text;
      assert.match(page, /window\.opener\.postMessage/);
      assert.match(page, /Close this window and choose Connect again/);
      if (returnUrl) assert.ok(page.includes(`location.replace(${JSON.stringify(returnUrl)} + '#'`), page);
      else assert.match(page, /\} else if \(null\)/);
    }
  });
});
