import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sqliteOnly } from './backend.js';
import {
  ADMIN_ORIGIN,
  type Answer,
  APP_ORIGIN,
  assertKeys,
  assertProblem,
  assertTimestamp,
  demoCatalog,
  FOREIGN_ORIGIN,
  rawRequest,
  TestService,
} from './support.js';

let forge: TestService;
before(async () => {
  forge = await TestService.start();
});
after(() => forge.close());

const oauthIntegration = demoCatalog.integrations.find((i) => i.type === 'oauth2')!;
/** The parameters integration with the most parameters, so "one is missing" can be tested. */
const parametersIntegration = demoCatalog.integrations
  .filter((i) => i.requiredParameters?.length)
  .sort((a, b) => b.requiredParameters!.length - a.requiredParameters!.length)[0]!;
const parameterNames = parametersIntegration.requiredParameters!.map((p) => p.name);
const secretValues = () => Object.fromEntries(parameterNames.map((name) => [name, `secret-${name}-${Math.random()}`]));

describe('POST /credentials/:integration (required parameters)', () => {
  test('answers {integration, connectedAt}; GET /credentials lists it, never the values', async () => {
    const { token } = await forge.newUser();
    const values = secretValues();
    const saved = await forge.asUser(token, 'POST', `/credentials/${parametersIntegration.name}`, values);
    assert.equal(saved.status, 200, saved.text);
    assertKeys(saved.body, ['integration', 'connectedAt']);
    assert.equal(saved.body.integration, parametersIntegration.name);
    assertTimestamp(saved.body.connectedAt);

    const list = await forge.asUser(token, 'GET', '/credentials');
    assert.equal(list.status, 200);
    assert.deepEqual(list.body, { data: [{ ...saved.body, status: 'connected' }] });
    for (const value of Object.values(values)) {
      assert.ok(!saved.text.includes(value) && !list.text.includes(value), 'a secret value was returned');
    }
  });

  test('a user sees only their own connections', async () => {
    const owner = await forge.newUser();
    const other = await forge.newUser();
    await forge.asUser(owner.token, 'POST', `/credentials/${parametersIntegration.name}`, secretValues());
    assert.deepEqual((await forge.asUser(other.token, 'GET', '/credentials')).body, { data: [] });
  });

  test('saving again replaces the values (one connection per integration)', async () => {
    const { userId, token } = await forge.newUser();
    await forge.asUser(token, 'POST', `/credentials/${parametersIntegration.name}`, secretValues());
    const latest = secretValues();
    await forge.asUser(token, 'POST', `/credentials/${parametersIntegration.name}`, latest);
    assert.equal((await forge.asUser(token, 'GET', '/credentials')).body.data.length, 1);
    const sealed = (await forge.store.credentials.getSecret(userId, parametersIntegration.name))!;
    assert.deepEqual(forge.service.secrets.open(sealed), { kind: 'parameters', values: latest });
  });

  test('the values are sealed in the database row, and only the service key opens them', async () => {
    const { userId, token } = await forge.newUser();
    const values = secretValues();
    await forge.asUser(token, 'POST', `/credentials/${parametersIntegration.name}`, values);
    const row = await forge.store.db
      .selectFrom('credentials')
      .selectAll()
      .where('user_id', '=', userId)
      .where('integration', '=', parametersIntegration.name)
      .executeTakeFirstOrThrow();
    const stored = JSON.stringify(row);
    for (const value of Object.values(values)) {
      assert.ok(!stored.includes(value), 'a value is stored in plain text');
      assert.ok(!stored.includes(Buffer.from(value).toString('base64')), 'a value is stored base64-encoded');
    }
    assert.deepEqual(forge.service.secrets.open(row.secret!), { kind: 'parameters', values });
  });

  test('on disk, neither the database nor its write-ahead log holds a value in plain text', {
    skip: sqliteOnly,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'forge-secrets-'));
    const db = join(dir, 'forge.db');
    try {
      const onDisk = await TestService.start({ db });
      const { token } = await onDisk.newUser();
      const values = secretValues();
      const saved = await onDisk.asUser(token, 'POST', `/credentials/${parametersIntegration.name}`, values);
      assert.equal(saved.status, 200);
      const files = [db, `${db}-wal`].filter(existsSync).map((file) => readFileSync(file).toString('latin1'));
      assert.ok(files.join('').includes(parametersIntegration.name), 'the check reads the wrong files');
      for (const value of Object.values(values)) assert.ok(!files.some((text) => text.includes(value)));
      await onDisk.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a missing parameter, an unknown one or a non-text value is a 400 naming each', async () => {
    const { token } = await forge.newUser();
    const [first, ...rest] = parameterNames;
    const path = `/credentials/${parametersIntegration.name}`;
    assertProblem(await forge.asUser(token, 'POST', path, { [first!]: 'x' }), 400, {
      errors: rest.map((name) => `body.${name}`),
    });
    assertProblem(await forge.asUser(token, 'POST', path, { ...secretValues(), extra: 'x' }), 400, {
      errors: ['body.extra'],
    });
    assertProblem(await forge.asUser(token, 'POST', path, { ...secretValues(), [first!]: 12 }), 400, {
      errors: [`body.${first}`],
    });
    assertProblem(await forge.asUser(token, 'POST', path), 400, { detail: new RegExp(`"${first}"`) });
    assert.deepEqual((await forge.asUser(token, 'GET', '/credentials')).body, { data: [] });
  });

  test('an OAuth integration is connected through its popup, not with parameters', async () => {
    const { token } = await forge.newUser();
    assertProblem(await forge.asUser(token, 'POST', `/credentials/${oauthIntegration.name}`, {}), 400, {
      detail: new RegExp(`/credentials/${oauthIntegration.name}/oauth`),
    });
  });

  test('an unknown integration is a 404', async () => {
    const { token } = await forge.newUser();
    assertProblem(await forge.asUser(token, 'POST', '/credentials/no-such-integration', {}), 404);
  });
});

/** The one-time URL handed to the element, from a page on `origin`. */
async function startOAuth(token: string, origin = APP_ORIGIN, integration = oauthIntegration.name): Promise<Answer> {
  return forge.request('POST', `/credentials/${integration}/oauth`, { credential: token, headers: { Origin: origin } });
}

/** What the popup does, page by page, up to the consent form's answer. */
async function consent(url: string, decision: 'allow' | 'deny') {
  const authorize = await forge.request('GET', url);
  assert.equal(authorize.status, 302, authorize.text);
  const consentUrl = authorize.headers.get('location')!;
  assert.ok(consentUrl.startsWith(`${forge.url}/local-oauth/${oauthIntegration.name}/authorize?`), consentUrl);

  const page = await forge.request('GET', consentUrl);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type')!, /^text\/html/);
  assert.match(page.text, new RegExp(`Allow access to your ${oauthIntegration.displayName} account`));
  const action = /<form method="post" action="([^"]+)"/.exec(page.text)?.[1]?.replaceAll('&#38;', '&');
  assert.ok(action, 'the consent page has no form');

  const answer = await forge.request('POST', `${forge.url}${action}`, {
    body: `decision=${decision}`,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  });
  assert.equal(answer.status, 303, answer.text);
  const callback = answer.headers.get('location')!;
  assert.ok(callback.startsWith(`${forge.url}/forge/2021-12/oauth/callback?`), callback);
  return { consentUrl, callback };
}

/** The message the callback page posts to its opener, and the origin it posts it to. */
function postedMessage(html: string): { message: Record<string, unknown>; targetOrigin: string } {
  const call = /window\.opener\.postMessage\((\{.*?\}), ("[^"]*")\)/.exec(html);
  assert.ok(call, `the callback page posts no message: ${html}`);
  return { message: JSON.parse(call[1]!), targetOrigin: JSON.parse(call[2]!) };
}

/** What the element does with the callback's message: confirms the grant with the user's token. */
function confirm(token: string, grant: unknown, origin = APP_ORIGIN, integration = oauthIntegration.name) {
  return forge.request('POST', `/credentials/${integration}/oauth/confirm`, {
    credential: token,
    headers: { Origin: origin },
    json: { grant },
  });
}

/** A finished flow up to the callback page's message, for the user of `token`. */
async function authorized(token: string, origin = APP_ORIGIN) {
  const started = await startOAuth(token, origin);
  const { callback } = await consent(started.body.url, 'allow');
  const page = await forge.request('GET', callback);
  return { page, ...postedMessage(page.text) };
}

const connectedIntegrations = async (token: string) =>
  (await forge.asUser(token, 'GET', '/credentials')).body.data.map((c: { integration: string }) => c.integration);

describe('OAuth, end to end over HTTP with the local provider', () => {
  test('allow: the opener gets a one-time grant; confirming it with the user token stores the credential', async () => {
    const { userId, token } = await forge.newUser();
    const started = await startOAuth(token);
    assert.equal(started.status, 200, started.text);
    assertKeys(started.body, ['url', 'expiresAt']);
    assert.ok(started.body.url.startsWith(`${forge.url}/forge/2021-12/oauth/authorize?state=`));
    assert.ok(!started.body.url.includes(token), 'the user token is in the URL');
    assertTimestamp(started.body.expiresAt);
    const lifetime = Date.parse(started.body.expiresAt) - Date.now();
    assert.ok(lifetime > 0 && lifetime <= 10 * 60_000, 'the URL must be short-lived');

    const { callback } = await consent(started.body.url, 'allow');
    const done = await forge.request('GET', callback);
    assert.equal(done.status, 200);
    assert.match(done.headers.get('content-type')!, /^text\/html/);
    assert.match(done.headers.get('content-security-policy')!, /default-src 'none'/);
    const { message, targetOrigin } = postedMessage(done.text);
    assert.equal(targetOrigin, APP_ORIGIN);
    assertKeys(message, ['type', 'integration', 'status', 'grant']);
    assert.deepEqual(
      { ...message, grant: undefined },
      { type: 'forge-oauth', integration: oauthIntegration.name, status: 'authorized', grant: undefined },
    );
    assert.match(String(message.grant), /^[\w-]{40,}$/);
    assert.deepEqual(await connectedIntegrations(token), [], 'connected before the element confirmed');

    const confirmed = await confirm(token, message.grant);
    assert.equal(confirmed.status, 200, confirmed.text);
    assertKeys(confirmed.body, ['integration', 'connectedAt']);
    assert.equal(confirmed.body.integration, oauthIntegration.name);
    assertTimestamp(confirmed.body.connectedAt);
    assert.deepEqual(await connectedIntegrations(token), [oauthIntegration.name]);
    const grant = forge.service.secrets.open<{ kind: string }>(
      (await forge.store.credentials.getSecret(userId, oauthIntegration.name))!,
    );
    assert.equal(grant.kind, 'oauth2');
  });

  test('connect-CSRF: a stranger who finishes a fresh link connects nothing to its starter', async () => {
    // The attacker starts a flow with their own token and sends the whole link to the victim,
    // whose browser opens it first, signs in at the provider and allows.
    const attacker = await forge.newUser();
    const started = await startOAuth(attacker.token);
    const { callback } = await consent(started.body.url, 'allow');
    const victimPage = await forge.request('GET', callback);
    assert.equal(victimPage.status, 200);
    assert.deepEqual(await connectedIntegrations(attacker.token), [], "the victim's account went to the attacker");
    // Without the one-time value (posted only to an opener on the starter's origin) the
    // attacker has nothing to confirm with; guessing is no better.
    assertProblem(await confirm(attacker.token, 'a'.repeat(43)), 400, { detail: /Connect again/ });
    assert.deepEqual(await connectedIntegrations(attacker.token), []);
  });

  test('a grant confirms once, only for its user, integration and page origin', async () => {
    const owner = await forge.newUser();
    const other = await forge.newUser();
    const { message } = await authorized(owner.token);
    assertProblem(await confirm(other.token, message.grant), 400);
    // Each refused try used the grant up, as a replay would: it cannot be tried again.
    assertProblem(await confirm(owner.token, message.grant), 400);
    assert.deepEqual(await connectedIntegrations(owner.token), []);

    for (const [origin, integration] of [
      [ADMIN_ORIGIN, oauthIntegration.name],
      [APP_ORIGIN, parametersIntegration.name],
    ] as const) {
      const fresh = await authorized(owner.token);
      assertProblem(await confirm(owner.token, fresh.message.grant, origin, integration), 400);
    }
    const last = await authorized(owner.token);
    assert.equal((await confirm(owner.token, last.message.grant)).status, 200);
    assertProblem(await confirm(owner.token, last.message.grant), 400, { detail: /already used/ });
    assert.deepEqual(await connectedIntegrations(other.token), []);
  });

  test('a grant left unconfirmed expires', async () => {
    const quick = await TestService.start({ oauthGrantTtlMs: 50 });
    try {
      const { token } = await quick.newUser();
      const started = await quick.request('POST', `/credentials/${oauthIntegration.name}/oauth`, {
        credential: token,
        headers: { Origin: APP_ORIGIN },
      });
      const consentUrl = (await quick.request('GET', started.body.url)).headers.get('location')!;
      const decided = await quick.request('POST', consentUrl, {
        body: 'decision=allow',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
      const { message } = postedMessage((await quick.request('GET', decided.headers.get('location')!)).text);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const late = await quick.request('POST', `/credentials/${oauthIntegration.name}/oauth/confirm`, {
        credential: token,
        headers: { Origin: APP_ORIGIN },
        json: { grant: message.grant },
      });
      assertProblem(late, 400, { detail: /expired/ });
      assert.deepEqual((await quick.asUser(token, 'GET', '/credentials')).body, { data: [] });
    } finally {
      await quick.close();
    }
  });

  test('confirming needs a grant value in the body', async () => {
    const { token } = await forge.newUser();
    assertProblem(await confirm(token, undefined), 400, { errors: ['body.grant'] });
    assertProblem(await confirm(token, 12), 400, { errors: ['body.grant'] });
  });

  test('the authorize link works once: a second visit shows the expired page', async () => {
    const { token } = await forge.newUser();
    const started = await startOAuth(token);
    assert.equal((await forge.request('GET', started.body.url)).status, 302);
    const again = await forge.request('GET', started.body.url);
    assert.equal(again.status, 400);
    assert.match(again.text, /already used or has expired/);
  });

  test('no page of the service can be framed or leak its URL as a referrer', async () => {
    const { token } = await forge.newUser();
    const started = await startOAuth(token);
    const authorize = await forge.request('GET', started.body.url);
    const consentPage = await forge.request('GET', authorize.headers.get('location')!);
    const { callback } = await consent((await startOAuth(token)).body.url, 'allow');
    const pages = [consentPage, await forge.request('GET', callback), await forge.request('GET', started.body.url)];
    for (const answer of [authorize, ...pages]) {
      assert.equal(answer.headers.get('referrer-policy'), 'no-referrer', answer.text);
    }
    for (const answer of pages) {
      assert.match(answer.headers.get('content-type')!, /^text\/html/);
      assert.match(answer.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
      assert.equal(answer.headers.get('x-frame-options'), 'DENY');
    }
  });

  test('the message goes to the origin that started the flow, not to another allowed one', async () => {
    const { token } = await forge.newUser();
    const started = await startOAuth(token, ADMIN_ORIGIN);
    const { callback } = await consent(started.body.url, 'allow');
    assert.equal(postedMessage((await forge.request('GET', callback)).text).targetOrigin, ADMIN_ORIGIN);
  });

  test('deny: the opener is told "denied", gets no grant and nothing is stored', async () => {
    const { token } = await forge.newUser();
    const started = await startOAuth(token);
    const { callback } = await consent(started.body.url, 'deny');
    const { message } = postedMessage((await forge.request('GET', callback)).text);
    assert.equal(message.status, 'denied');
    assert.equal(message.grant, undefined);
    assert.equal(message.integration, oauthIntegration.name);
    assert.deepEqual((await forge.asUser(token, 'GET', '/credentials')).body, { data: [] });
  });

  test('every link of a finished flow is used up: replaying it connects nothing', async () => {
    const { userId, token } = await forge.newUser();
    const started = await startOAuth(token);
    const { consentUrl, callback } = await consent(started.body.url, 'allow');
    assert.equal((await forge.request('GET', callback)).status, 200);
    await forge.store.db.deleteFrom('credentials').where('user_id', '=', userId).execute();

    // The provider's consent page is the provider's: it may show again (a real one does), but
    // what it answers comes back with the used state, which the service no longer knows.
    const again = await forge.request('POST', consentUrl, {
      body: 'decision=allow',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    for (const url of [callback, started.body.url, again.headers.get('location')!]) {
      const replay = await forge.request('GET', url);
      assert.equal(replay.status, 400, url);
      assert.match(replay.text, /already used or has expired/);
      assert.doesNotMatch(replay.text, /postMessage/);
    }
    assert.deepEqual((await forge.asUser(token, 'GET', '/credentials')).body, { data: [] });
  });

  test('a callback with a code the provider never issued connects nothing', async () => {
    const { token } = await forge.newUser();
    const started = await startOAuth(token);
    const { callback } = await consent(started.body.url, 'allow');
    const forged = new URL(callback);
    forged.searchParams.set('code', 'made-up');
    const { message } = postedMessage((await forge.request('GET', forged.toString())).text);
    assert.equal(message.status, 'error');
    assert.deepEqual((await forge.asUser(token, 'GET', '/credentials')).body, { data: [] });
  });

  test('the provider redirects only to the service callback, whatever redirect_uri says', async () => {
    const { token } = await forge.newUser();
    const started = await startOAuth(token);
    const consentUrl = (await forge.request('GET', started.body.url)).headers.get('location')!;
    for (const redirect of [
      'http://attacker.example/forge/2021-12/oauth/callback',
      'junk/forge/2021-12/oauth/callback',
    ]) {
      const tampered = new URL(consentUrl);
      tampered.searchParams.set('redirect_uri', redirect);
      const answer = await forge.request('POST', tampered.toString(), {
        body: 'decision=allow',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(answer.status, 400, `${redirect}: ${answer.status} ${answer.text}`);
      assert.equal(answer.headers.get('location'), null);
    }
    // The flow itself still works afterwards.
    const allowed = await forge.request('POST', consentUrl, {
      body: 'decision=allow',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    const callback = allowed.headers.get('location')!;
    assert.equal(postedMessage((await forge.request('GET', callback)).text).message.status, 'authorized');
  });

  test('a Host header that is no host name never ends up in a redirect', async () => {
    const { token } = await forge.newUser();
    for (const host of ['bad host', 'evil.example/path?x', '[::1', 'x:99999']) {
      // A fresh link each time: an authorize link works once.
      const url = new URL((await startOAuth(token)).body.url);
      const answer = await rawRequest(forge.url, 'GET', `${url.pathname}${url.search}`, { headers: { Host: host } });
      assert.equal(answer.status, 302, `${host}: ${answer.text}`);
      assert.ok(
        String(answer.headers.location).startsWith(`${forge.url}/local-oauth/`),
        String(answer.headers.location),
      );
    }
  });

  test('a flow starts only from a page on an allowed origin, with a user token', async () => {
    const { token } = await forge.newUser();
    assertProblem(await startOAuth(token, FOREIGN_ORIGIN), 400, { detail: /FORGE_ALLOWED_ORIGINS/ });
    assertProblem(
      await forge.request('POST', `/credentials/${oauthIntegration.name}/oauth`, { credential: token }),
      400,
      { detail: /allowed origin/ },
    );
  });

  test('an integration without OAuth has no OAuth flow', async () => {
    const { token } = await forge.newUser();
    assertProblem(await startOAuth(token, APP_ORIGIN, parametersIntegration.name), 400, {
      detail: new RegExp(`/credentials/${parametersIntegration.name}`),
    });
  });

  test('an unknown or expired state shows the expired page', async () => {
    const answer = await forge.request('GET', '/oauth/authorize?state=not-a-state');
    assert.equal(answer.status, 400);
    assert.match(answer.headers.get('content-type')!, /^text\/html/);
    assert.match(answer.text, /choose Connect again/);
  });
});
