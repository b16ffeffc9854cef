import { createHash, randomBytes, timingSafeEqual, type webcrypto } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type JWK, errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { unauthorized } from './http.js';
import type { SecretBox } from './secrets.js';
import type { Store } from './store/store.js';

type CryptoKey = webcrypto.CryptoKey;

/** Host API keys carry this prefix, so a key and a user token (a JWT) are told apart by shape. */
export const API_KEY_PREFIX = 'forge_sk_';

/** The service interface: a user token lasts at most 30 minutes. */
export const MAX_TOKEN_TTL_SECONDS = 30 * 60;

export const TOKEN_ISSUER = 'urn:forge:local-service';
export const TOKEN_AUDIENCE = 'forge-embed';

export type Principal = { kind: 'apiKey' } | { kind: 'user'; userId: string };

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(24).toString('base64url');
}

/** What may follow the prefix: at least 32 characters of a random-looking alphabet, as generateApiKey makes. */
const API_KEY_BODY = /^[A-Za-z0-9_-]{32,}$/;

/** Tokens issued this far in the future (clock skew between instances) are still taken. */
const CLOCK_SKEW_SECONDS = 60;

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * The keys that decide who is calling: the host's API key (kept as a digest) and the service's
 * token signing key (ES256; the public half is published as a JWKS so anyone can verify a token
 * without a shared secret). Not to be confused with the users' integration credentials, which
 * the store keeps sealed.
 */
export class AuthKeys {
  private constructor(
    private readonly apiKeyDigest: Buffer,
    private readonly privateKey: CryptoKey,
    private readonly publicJwk: JWK,
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
    const legacyKey = await store.getSetting('apiKey');
    if (legacyKey !== undefined) {
      await store.transaction(async (tx) => {
        await tx.setSetting('apiKeyHash', digest(legacyKey).toString('hex'));
        await tx.deleteSetting('apiKey');
      });
    }
    let apiKey = configuredKey ?? legacyKey;
    let storedHash = await store.getSetting('apiKeyHash');
    const generated = apiKey === undefined && storedHash === undefined;
    if (generated) {
      apiKey = generateApiKey();
      storedHash = digest(apiKey).toString('hex');
      await store.setSetting('apiKeyHash', storedHash);
    }
    const apiKeyDigest = configuredKey !== undefined ? digest(configuredKey) : Buffer.from(storedHash!, 'hex');
    const privateJwk = await loadSigningKey(store, secrets);
    const privateKey = (await importJWK(privateJwk, 'ES256')) as CryptoKey;
    const { d: _private, ...publicJwk } = privateJwk;
    return {
      authKeys: new AuthKeys(apiKeyDigest, privateKey, { ...publicJwk, alg: 'ES256', use: 'sig' }),
      apiKey,
      generated,
    };
  }

  get jwks(): { keys: JWK[] } {
    return { keys: [this.publicJwk] };
  }

  isApiKey(candidate: string): boolean {
    return timingSafeEqual(digest(candidate), this.apiKeyDigest);
  }

  async signUserToken(userId: string, ttlSeconds = MAX_TOKEN_TTL_SECONDS): Promise<string> {
    return new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: this.publicJwk.kid!, typ: 'JWT' })
      .setSubject(userId)
      .setIssuer(TOKEN_ISSUER)
      .setAudience(TOKEN_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${Math.min(ttlSeconds, MAX_TOKEN_TTL_SECONDS)}s`)
      .setJti(randomBytes(12).toString('base64url'))
      .sign(this.privateKey);
  }

  /** The principal behind an `Authorization` header; every failure is a 401 that says why. */
  async authenticate(header: string | undefined): Promise<Principal> {
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
    try {
      const { payload, protectedHeader } = await jwtVerify(credential, await this.publicKey(), {
        issuer: TOKEN_ISSUER,
        audience: TOKEN_AUDIENCE,
        algorithms: ['ES256'],
        requiredClaims: ['sub', 'iat', 'exp'],
      });
      // The lifetime counts from now, not from iat: a token "issued" in the future is no longer-lived token.
      const now = Math.floor(Date.now() / 1000);
      if (
        payload.exp! - payload.iat! > MAX_TOKEN_TTL_SECONDS ||
        payload.exp! - now > MAX_TOKEN_TTL_SECONDS + CLOCK_SKEW_SECONDS ||
        payload.iat! > now + CLOCK_SKEW_SECONDS
      ) {
        throw unauthorized(
          'The user token lives longer than 30 minutes, which the service never issues. Fetch a new one.',
        );
      }
      if (protectedHeader.kid !== this.publicJwk.kid) {
        throw unauthorized('The user token was not signed with the service key (kid). Fetch a new one.');
      }
      return { kind: 'user', userId: payload.sub! };
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

  private publicKeyCache?: Promise<CryptoKey>;
  private publicKey(): Promise<CryptoKey> {
    this.publicKeyCache ??= importJWK(this.publicJwk, 'ES256') as Promise<CryptoKey>;
    return this.publicKeyCache;
  }
}

/**
 * The token-signing private key (an ES256 JWK), sealed with the SecretBox so the database alone
 * cannot mint tokens; made on first start. One stored in clear by an older version is sealed.
 */
async function loadSigningKey(store: Store, secrets: SecretBox): Promise<JWK> {
  const stored = await store.getSetting('signingKey');
  if (stored !== undefined && !stored.startsWith('{')) return secrets.open<JWK>(stored);
  let jwk: JWK;
  if (stored !== undefined) jwk = JSON.parse(stored) as JWK;
  else {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    jwk = { ...(await exportJWK(privateKey)), kid: randomBytes(8).toString('hex') };
  }
  await store.setSetting('signingKey', secrets.seal(jwk));
  return jwk;
}
