import { hash, randomBytes, timingSafeEqual, type webcrypto } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type JWK, errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { type Clock, systemClock } from './clock.js';
import { unauthorized } from './http.js';
import type { SecretBox } from './secrets.js';
import type { Store } from './store/store.js';
import { UseOrderedMap } from './use-order.js';

type CryptoKey = webcrypto.CryptoKey;

/** Host API keys carry this prefix, so a key and a user token (a JWT) are told apart by shape. */
export const API_KEY_PREFIX = 'forge_sk_';

/** The service interface: a user token lasts at most 30 minutes. */
export const MAX_TOKEN_TTL_SECONDS = 30 * 60;

export const TOKEN_ISSUER = 'urn:forge:local-service';
export const TOKEN_AUDIENCE = 'forge-embed';

export type ApiKeyPrincipal = { kind: 'apiKey' };
export type Principal = ApiKeyPrincipal | { kind: 'user'; userId: string };

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(24).toString('base64url');
}

/** What may follow the prefix: at least 32 characters of a random-looking alphabet, as generateApiKey makes. */
const API_KEY_BODY = /^[A-Za-z0-9_-]{32,}$/;

/** Tokens issued this far in the future (clock skew between instances) are still taken. */
const CLOCK_SKEW_SECONDS = 60;

/**
 * How many verified user tokens an instance keeps the claims of, so that the next request with
 * the same token skips the signature check (a tenth of a user-token read's CPU, issue 29). A
 * token is a few hundred bytes; the oldest used goes first.
 */
const VERIFIED_TOKENS_KEPT = 10_000;

/** What a verified token's claims say that a later request with it needs. */
interface VerifiedClaims {
  sub: string;
  iat: number;
  exp: number;
}

/** The SHA-256 of a text as hex, the form the database keeps the API key's hash in. */
const digest = (text: string) => hash('sha256', text, 'hex');

/**
 * Where each request's candidate key's hex digest is written to be compared: one call and no
 * Buffer made per request (a Buffer from `hash` is made and copied in C++, 0.9 µs against 0.4
 * for the hex text written here; issue 29). Requests are checked one at a time, synchronously.
 */
const candidateDigest = Buffer.alloc(64);

/**
 * The keys that decide who is calling: the host's API key (kept as a digest) and the service's
 * token signing keys (ES256; the public halves are published as a JWKS so anyone can verify a
 * token without a shared secret). Not to be confused with the users' integration credentials,
 * which the store keeps sealed.
 *
 * The signing keys are a ring in the database, shared by every instance: the newest current key
 * signs (each token names it in its `kid`), keys that `forge-service rotate-keys` retired still
 * verify until every token they signed has expired, then they are dropped.
 */
export class AuthKeys {
  /** Public keys by kid: a key once seen verifies for the life of the process (its tokens expire on their own). */
  private readonly verifying = new Map<string, Promise<CryptoKey>>();
  private readonly signing = new Map<string, Promise<CryptoKey>>();
  /**
   * Tokens whose signature and claims were verified, keyed by the whole token (so a token whose
   * signature differs in one byte is not one of them), least recently used first. Never trusted
   * past what the claims allow at the clock's now; emptied whenever this instance sees the key
   * ring change.
   */
  private readonly verified = new UseOrderedMap<string, VerifiedClaims>();
  /** The ring as this instance last read it (kids and retirements), to see a rotation. */
  private ringSeen: string | undefined;

  private constructor(
    /** The API key's SHA-256 as the bytes of its lowercase hex, the form a candidate's is compared in. */
    private readonly apiKeyDigest: Buffer,
    private readonly store: Store,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
  ) {}

  /**
   * The API key is `configuredKey` when given (FORGE_API_KEY), else the one whose hash the
   * database keeps, else a new one whose hash is stored. `apiKey` is the key when this start
   * knows it (configured, generated now, or found in clear from an older version); `generated`
   * says whether it is new.
   */
  static async load(
    store: Store,
    secrets: SecretBox,
    configuredKey?: string,
    clock: Clock = systemClock,
  ): Promise<{ authKeys: AuthKeys; apiKey: string | undefined; generated: boolean }> {
    if (configuredKey !== undefined) {
      if (!configuredKey.startsWith(API_KEY_PREFIX)) {
        throw new Error(`FORGE_API_KEY must start with "${API_KEY_PREFIX}" so keys and user tokens are told apart.`);
      }
      if (!API_KEY_BODY.test(configuredKey.slice(API_KEY_PREFIX.length))) {
        throw new Error(
          `FORGE_API_KEY needs at least 32 random letters, digits, "-" or "_" after "${API_KEY_PREFIX}"; leave it unset and the service generates one.`,
        );
      }
    }
    // Only a hash of the key is stored: the database alone lets nobody call the service.
    // Older versions stored the key itself; it is replaced by its hash (and shown once more).
    const legacyKey = await store.settings.get('apiKey');
    if (legacyKey !== undefined) {
      await store.transaction(async (tx) => {
        await tx.settings.set('apiKeyHash', digest(legacyKey));
        await tx.settings.delete('apiKey');
      });
    }
    let apiKey = configuredKey ?? legacyKey;
    let storedHash = await store.settings.get('apiKeyHash');
    let generated = apiKey === undefined && storedHash === undefined;
    if (generated) {
      const candidate = generateApiKey();
      // Of instances starting together on an empty database, the first key stored wins; the others say nothing of a key.
      storedHash = await store.settings.add('apiKeyHash', digest(candidate));
      generated = storedHash === digest(candidate);
      apiKey = generated ? candidate : undefined;
    }
    // The stored hash read as bytes and written again as hex: the bytes compared are those it
    // names, whatever the case of its letters.
    const apiKeyDigest = Buffer.from(
      configuredKey !== undefined ? digest(configuredKey) : Buffer.from(storedHash!, 'hex').toString('hex'),
      'latin1',
    );
    await ensureSigningKey(store, secrets, clock);
    return { authKeys: new AuthKeys(apiKeyDigest, store, secrets, clock), apiKey, generated };
  }

  /**
   * Adds a new current signing key to the ring and retires the one that was current; drops
   * retired keys whose tokens have all expired. What `forge-service rotate-keys` runs.
   */
  static async rotate(
    store: Store,
    secrets: SecretBox,
    clock: Clock = systemClock,
  ): Promise<{ kid: string; retired: string[]; dropped: string[] }> {
    // A database an older version wrote keeps its one key in a setting: it joins the ring first,
    // so that it is what this rotation retires (and a later start does not make it current again).
    await ensureSigningKey(store, secrets, clock);
    const dropped = await dropExpiredKeys(store, clock);
    const retired = (await store.signingKeys.list()).filter((k) => k.retiredAt === null).map((k) => k.kid);
    const kid = await addNewKey(store, secrets, clock);
    return { kid, retired, dropped };
  }

  /**
   * The public keys of the ring: the current one and the retired ones that still verify. A read
   * only: a public GET never writes (retired keys are dropped by the next rotation).
   */
  async jwks(): Promise<{ keys: JWK[] }> {
    const keptSince = this.clock.now() - RETIRED_KEY_KEPT_SECONDS * 1000;
    const keys = this.noteRing(await this.store.signingKeys.list()).filter(
      (k) => k.retiredAt === null || k.retiredAt >= keptSince,
    );
    return {
      keys: keys.map((k) => {
        const { d: _private, ...publicJwk } = this.secrets.open<JWK>(k.sealedKey);
        return { ...publicJwk, kid: k.kid, alg: 'ES256', use: 'sig' };
      }),
    };
  }

  /** Whether `candidate` is the API key, compared in constant time (as digests of equal length). */
  isApiKey(candidate: string): boolean {
    candidateDigest.write(digest(candidate), 'latin1');
    return timingSafeEqual(candidateDigest, this.apiKeyDigest);
  }

  async signUserToken(userId: string, ttlSeconds = MAX_TOKEN_TTL_SECONDS): Promise<string> {
    // Read at every signing, so a rotation on any instance takes effect everywhere at once.
    const current = this.noteRing(await this.store.signingKeys.list()).find((k) => k.retiredAt === null);
    if (!current) throw new Error('The signing key ring has no current key; run "forge-service rotate-keys".');
    let privateKey = this.signing.get(current.kid);
    if (!privateKey) {
      privateKey = importJWK(this.secrets.open<JWK>(current.sealedKey), 'ES256') as Promise<CryptoKey>;
      this.signing.set(current.kid, privateKey);
    }
    const now = Math.floor(this.clock.now() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: current.kid, typ: 'JWT' })
      .setSubject(userId)
      .setIssuer(TOKEN_ISSUER)
      .setAudience(TOKEN_AUDIENCE)
      .setIssuedAt(now)
      .setExpirationTime(now + Math.min(ttlSeconds, MAX_TOKEN_TTL_SECONDS))
      .setJti(randomBytes(12).toString('base64url'))
      .sign(await privateKey);
  }

  /**
   * The principal behind an `Authorization` header; every failure is a 401 that says why. The API
   * key's principal (and every refusal that needs no signature check: no or a malformed header,
   * a wrong key, a credential of neither shape) comes at once, thrown or returned, and only a
   * user token's comes as a promise: a request with the API key is then identified without a
   * promise made and awaited for it (issue 29).
   */
  identify(header: string | undefined): ApiKeyPrincipal | Promise<Principal> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!match) {
      throw unauthorized(
        header
          ? 'The Authorization header must be "Bearer <API key or user token>".'
          : 'Send "Authorization: Bearer <API key>" from your backend, or "Bearer <user token>" from the embedded elements.',
      );
    }
    const credential = match[1]!;
    if (credential.startsWith(API_KEY_PREFIX)) {
      if (this.isApiKey(credential)) return { kind: 'apiKey' };
      throw unauthorized('The API key is not valid. Use the key the service printed on start, or set FORGE_API_KEY.');
    }
    if (credential.split('.').length !== 3) {
      throw unauthorized(
        `The credential is neither an API key (starting with "${API_KEY_PREFIX}") nor a user token (a JWT).`,
      );
    }
    return this.verifiedToken(credential);
  }

  /** The principal of a user token (a JWT by its shape): its kept claims, else the signature and claims checked. */
  private async verifiedToken(credential: string): Promise<Principal> {
    // Used again: last to be dropped.
    const known = this.verified.get(credential);
    if (known) {
      if (this.stillValid(known)) return { kind: 'user', userId: known.sub };
      // Expired, or outside the lifetime rules at this clock's now: the full check below refuses
      // it with the same answer as a token never seen.
      this.verified.delete(credential);
    }
    try {
      const { payload } = await jwtVerify(credential, (header) => this.verifyingKey(header.kid), {
        issuer: TOKEN_ISSUER,
        audience: TOKEN_AUDIENCE,
        algorithms: ['ES256'],
        requiredClaims: ['sub', 'iat', 'exp'],
        currentDate: new Date(this.clock.now()),
      });
      const claims = { sub: payload.sub!, iat: payload.iat!, exp: payload.exp! };
      if (!this.withinLifetime(claims)) {
        throw unauthorized(
          'The user token lives longer than 30 minutes, which the service never issues. Fetch a new one.',
        );
      }
      // A token with a "not before" time is checked in full each time (the service issues none).
      if (payload.nbf === undefined) this.remember(credential, claims);
      return { kind: 'user', userId: claims.sub };
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) {
        throw unauthorized(
          'The user token has expired. Fetch a new one from GET /user/:userId/token (through your token endpoint).',
        );
      }
      if (error instanceof joseErrors.JOSEError) {
        throw unauthorized(
          'The user token is not valid (bad signature or claims). Fetch a new one from GET /user/:userId/token.',
        );
      }
      throw error;
    }
  }

  /**
   * The lifetime rules on top of jose's checks. The lifetime counts from now, not from iat: a
   * token "issued" in the future is no longer-lived token.
   */
  private withinLifetime({ iat, exp }: VerifiedClaims): boolean {
    const now = Math.floor(this.clock.now() / 1000);
    return (
      exp - iat <= MAX_TOKEN_TTL_SECONDS &&
      exp - now <= MAX_TOKEN_TTL_SECONDS + CLOCK_SKEW_SECONDS &&
      iat <= now + CLOCK_SKEW_SECONDS
    );
  }

  /** Whether a verified token's claims still hold at the clock's now: jose's expiry check (`exp` after now) and the lifetime rules. */
  private stillValid(claims: VerifiedClaims): boolean {
    return claims.exp > Math.floor(this.clock.now() / 1000) && this.withinLifetime(claims);
  }

  private remember(token: string, claims: VerifiedClaims): void {
    this.verified.setWithin(token, claims, VERIFIED_TOKENS_KEPT);
  }

  /**
   * Notes the ring as just read; when it differs from the last read (a key added, retired or
   * dropped, on any instance or by `rotate-keys`), the verified tokens are forgotten, so that
   * every token is checked again against the ring as it is now.
   */
  private noteRing<Row extends { kid: string; retiredAt: number | null }>(ring: Row[]): Row[] {
    const seen = ring.map((k) => `${k.kid}:${k.retiredAt}`).join(',');
    if (this.ringSeen !== undefined && seen !== this.ringSeen) this.verified.clear();
    this.ringSeen = seen;
    return ring;
  }

  /** The public key a token names; an unknown kid is looked up in the ring (another instance may have just added it). */
  private async verifyingKey(kid: string | undefined): Promise<CryptoKey> {
    const known = kid === undefined ? undefined : this.verifying.get(kid);
    if (known) return known;
    const row = this.noteRing(await this.store.signingKeys.list()).find((k) => k.kid === kid);
    if (!row) {
      throw unauthorized('The user token was not signed with a key of this service (kid). Fetch a new one.');
    }
    const { d: _private, ...publicJwk } = this.secrets.open<JWK>(row.sealedKey);
    const key = importJWK(publicJwk, 'ES256') as Promise<CryptoKey>;
    this.verifying.set(row.kid, key);
    return key;
  }
}

/**
 * How long a retired key stays in the ring: the longest a token it signed can still be valid
 * (its lifetime, plus the skew allowed between instances' clocks).
 */
export const RETIRED_KEY_KEPT_SECONDS = MAX_TOKEN_TTL_SECONDS + CLOCK_SKEW_SECONDS;

const dropExpiredKeys = (store: Store, clock: Clock) =>
  store.signingKeys.dropRetiredBefore(clock.now() - RETIRED_KEY_KEPT_SECONDS * 1000);

async function addNewKey(store: Store, secrets: SecretBox, clock: Clock, jwk?: JWK): Promise<string> {
  let key = jwk;
  if (!key) {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    key = { ...(await exportJWK(privateKey)), kid: randomBytes(8).toString('hex') };
  }
  await store.signingKeys.add(key.kid!, secrets.seal(key), clock.now());
  return key.kid!;
}

/**
 * A ring with a current key: made on first start. The single key of an older version (a sealed,
 * or even clear, setting) joins the ring as its current key, with its kid, so its tokens still
 * verify; the setting goes.
 */
async function ensureSigningKey(store: Store, secrets: SecretBox, clock: Clock): Promise<void> {
  const ring = await store.signingKeys.list();
  const stored = await store.settings.get('signingKey');
  if (stored !== undefined) {
    const legacy = stored.startsWith('{') ? (JSON.parse(stored) as JWK) : secrets.open<JWK>(stored);
    if (!ring.some((k) => k.kid === legacy.kid)) await addNewKey(store, secrets, clock, legacy);
    await store.settings.delete('signingKey');
  } else if (ring.length === 0) {
    await addNewKey(store, secrets, clock);
  }
}
