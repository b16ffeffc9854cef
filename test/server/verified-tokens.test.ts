/**
 * The service keeps the claims of user tokens it has verified, so that a repeat request skips
 * the signature check (issue 29). Whatever it keeps, a token is refused exactly when, and
 * exactly as, a token it has never seen would be: these tests warm the cache with a token first,
 * then move the service's clock (server/clock.ts) or change the key ring under it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeProtectedHeader, generateKeyPair, SignJWT } from 'jose';
import { AuthKeys, TOKEN_AUDIENCE, TOKEN_ISSUER } from '../../server/auth.js';
import type { Clock } from '../../server/clock.js';
import { type Answer, assertProblem, TestService } from './support.js';

const MINUTE = 60_000;

/** A clock the test moves; the service reads it for token lifetimes and key retirement. */
function testClock(start: number): Clock & { advance(ms: number): void } {
  let now = start;
  return { now: () => now, onJump: () => () => {}, advance: (ms) => void (now += ms) };
}

/** What a refusal says, to compare two of them: status, body and the WWW-Authenticate header. */
const refusal = (answer: Answer) => ({
  status: answer.status,
  body: answer.text,
  wwwAuthenticate: answer.headers.get('www-authenticate'),
});

describe('verified tokens kept: refusals with the cache warm', () => {
  const clock = testClock(Date.parse('2026-03-02T10:00:00Z'));
  let forge: TestService;
  before(async () => {
    forge = await TestService.start({ clock });
  });
  after(() => forge.close());

  const read = (token: string, userId: string) => forge.asUser(token, 'GET', `/user/${userId}`);
  const seconds = () => Math.floor(clock.now() / 1000);

  test('an expired token, used a moment before it expired, is refused as one never used', async () => {
    const { userId } = await forge.createUser();
    const used = await forge.token(userId, 60);
    const neverUsed = await forge.token(userId, 60);
    for (let i = 0; i < 3; i++) assert.equal((await read(used, userId)).status, 200);
    clock.advance(59_000);
    assert.equal((await read(used, userId)).status, 200, 'refused before its exp');
    clock.advance(1_000);
    const warm = await read(used, userId);
    assertProblem(warm, 401, { detail: /expired/ });
    assert.deepEqual(refusal(warm), refusal(await read(neverUsed, userId)));
  });

  test('a token whose claims no longer hold at the clock (issued "in the future" once it goes back) is refused', async () => {
    const { userId } = await forge.createUser();
    const token = await forge.token(userId);
    assert.equal((await read(token, userId)).status, 200);
    // The clock goes back two minutes: the token now says it was issued more than the minute of
    // skew allowed ahead of now, which the service refuses, kept or not.
    clock.advance(-2 * MINUTE);
    try {
      const never = await forge.signedByService({ sub: userId, iat: seconds() + 120, exp: seconds() + 1800 });
      const warm = await read(token, userId);
      assertProblem(warm, 401, { detail: /30 minutes/ });
      assert.deepEqual(refusal(warm), refusal(await read(never, userId)));
    } finally {
      clock.advance(2 * MINUTE);
    }
  });

  test('the same claims signed by a key the service does not have are refused, the genuine token kept or not', async () => {
    const { userId } = await forge.createUser();
    const now = seconds();
    const claims = { sub: userId, iat: now, exp: now + 600 };
    const genuine = await forge.signedByService(claims);
    assert.equal((await read(genuine, userId)).status, 200);
    assert.equal((await read(genuine, userId)).status, 200);
    // A stranger's key under the service's own kid, the header and claims byte for byte the
    // genuine token's: only the signature differs.
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT({})
      .setProtectedHeader(decodeProtectedHeader(genuine) as { alg: string })
      .setSubject(userId)
      .setIssuer(TOKEN_ISSUER)
      .setAudience(TOKEN_AUDIENCE)
      .setIssuedAt(claims.iat)
      .setExpirationTime(claims.exp)
      .sign(privateKey);
    assert.equal(forged.split('.').slice(0, 2).join('.'), genuine.split('.').slice(0, 2).join('.'));
    const answer = await read(forged, userId);
    assertProblem(answer, 401, { detail: /not valid/ });
    assert.deepEqual(refusal(answer), refusal(await read(await forge.signedByStranger(userId), userId)));
    // And under a kid the ring does not hold, signed with the service's own key.
    const unknownKid = await forge.signedByService({ ...claims, kid: 'a-key-of-no-ring' });
    assertProblem(await read(unknownKid, userId), 401, { detail: /kid/ });
    assert.equal((await read(genuine, userId)).status, 200, 'the genuine token is still taken');
  });

  test('a rotation: the retired key verifies its tokens until they expire, then they are refused', async () => {
    const { userId } = await forge.createUser();
    const old = await forge.token(userId);
    assert.equal((await read(old, userId)).status, 200);
    clock.advance(MINUTE);
    // Another instance (or `forge-service rotate-keys`) rotates; this one sees the ring change
    // when it next signs a token.
    const { kid, retired } = await AuthKeys.rotate(forge.store, forge.service.secrets, clock);
    assert.deepEqual(retired, [decodeProtectedHeader(old).kid]);
    const fresh = await forge.token(userId);
    assert.equal(decodeProtectedHeader(fresh).kid, kid);
    assert.equal((await read(old, userId)).status, 200, 'a token of the retired key is refused before it expires');
    assert.equal((await read(fresh, userId)).status, 200);
    clock.advance(29 * MINUTE);
    const expired = await read(old, userId);
    assertProblem(expired, 401, { detail: /expired/ });
    assert.equal((await read(fresh, userId)).status, 200);
  });

  test('the token of a user deleted since it was kept is refused', async () => {
    const { userId, token } = await forge.newUser();
    assert.equal((await read(token, userId)).status, 200);
    assert.equal((await forge.asHost('DELETE', `/user/${userId}`)).status, 200);
    assertProblem(await read(token, userId), 401, { detail: /no longer exists/ });
  });
});
