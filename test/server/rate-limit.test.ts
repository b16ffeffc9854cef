/**
 * Rate limits where abuse is cheap: minting tokens, writing credentials, starting OAuth flows,
 * sending webhooks. Each is counted per user (per workflow for webhooks) and answers a 429
 * problem document with Retry-After once spent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseRateLimits } from '../../server/rate-limit.js';
import { type Answer, APP_ORIGIN, assertProblem, demoCatalog, TestService } from './support.js';

const oauth = demoCatalog.integrations.find((i) => i.type === 'oauth2')!;
const parameters = demoCatalog.integrations.find((i) => i.requiredParameters?.length)!;
const values = Object.fromEntries(parameters.requiredParameters!.map((p) => [p.name, 'value']));
const webhookParent = demoCatalog.workflows.find((w) => w.blocks.some((b) => b.type === 'webhook'))!;

function assertLimited(answer: Answer, what: RegExp): void {
  assertProblem(answer, 429, { detail: what });
  const retryAfter = Number(answer.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
}

describe('with small limits', () => {
  let forge: TestService;
  before(async () => {
    forge = await TestService.start({
      rateLimits: {
        token: { limit: 2, windowSeconds: 60 },
        credentials: { limit: 2, windowSeconds: 60 },
        oauth: { limit: 1, windowSeconds: 60 },
        webhook: { limit: 2, windowSeconds: 60 },
      },
    });
  });
  after(() => forge.close());

  test('token minting is limited per user', async () => {
    const { userId } = await forge.createUser();
    for (let i = 0; i < 2; i++) assert.equal((await forge.asHost('GET', `/user/${userId}/token`)).status, 200);
    assertLimited(await forge.asHost('GET', `/user/${userId}/token`), /tokens/);
    // Another user is counted on its own.
    const other = await forge.createUser();
    assert.equal((await forge.asHost('GET', `/user/${other.userId}/token`)).status, 200);
  });

  test('credential writes are limited per user, and nothing is written past the limit', async () => {
    const { token } = await forge.newUser();
    const path = `/credentials/${parameters.name}`;
    for (let i = 0; i < 2; i++) assert.equal((await forge.asUser(token, 'POST', path, values)).status, 200);
    const refused = await forge.request('POST', path, {
      credential: token,
      json: values,
      headers: { Origin: APP_ORIGIN },
    });
    assertLimited(refused, /credential/);
    // The element can read the 429 across origins.
    assert.equal(refused.headers.get('access-control-allow-origin'), APP_ORIGIN);
  });

  test('OAuth starts are limited per user', async () => {
    const { token } = await forge.newUser();
    const start = () =>
      forge.request('POST', `/credentials/${oauth.name}/oauth`, { credential: token, headers: { Origin: APP_ORIGIN } });
    assert.equal((await start()).status, 200);
    assertLimited(await start(), /sign-in/);
  });

  test('webhooks are limited per workflow, and a refused one runs nothing', async () => {
    const user = await forge.newUser();
    const childId = await forge.install(user.userId, user.token, webhookParent);
    const hook = (await forge.asHost('GET', `/workflow/${childId}`)).body.webhookUrl as string;
    for (let i = 0; i < 2; i++) {
      const sent = await forge.request('POST', hook, { json: {}, headers: { Prefer: 'wait=30' } });
      assert.equal(sent.status, 200);
    }
    assertLimited(await forge.request('POST', hook, { json: {} }), /webhook/);
    const logs = await forge.asUser(user.token, 'GET', `/workflow/${childId}/logs`);
    assert.equal(logs.body.data.length, 2);
  });
});

describe('by default', () => {
  test('limits are generous: a burst a real host makes is answered', async () => {
    const forge = await TestService.start();
    try {
      const { userId } = await forge.createUser();
      for (let i = 0; i < 30; i++) assert.equal((await forge.asHost('GET', `/user/${userId}/token`)).status, 200);
    } finally {
      await forge.close();
    }
  });
});

describe('FORGE_RATE_LIMITS / --rate-limits', () => {
  test('"action=limit/seconds" pairs, and off', () => {
    assert.deepEqual(parseRateLimits('token=10/60, webhook=off'), {
      token: { limit: 10, windowSeconds: 60 },
      webhook: false,
    });
  });

  test('anything else says what is wrong', () => {
    for (const text of ['token', 'token=10', 'tokens=10/60', 'token=0/60', 'token=10/0', 'token=1.5/60']) {
      assert.throws(() => parseRateLimits(text), /action=limit\/seconds/, text);
    }
  });
});
