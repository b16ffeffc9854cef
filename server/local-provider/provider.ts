import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

/**
 * The local OAuth 2.0 authorization server's state and rules (RFC 6749, with PKCE per RFC 7636,
 * revocation per RFC 7009 and introspection in RFC 7662's answer format), for the demo and
 * offline use. One registered client (the service), one consent per app. What it keeps:
 * - codes: one use, 60 seconds, bound to the client, the redirect URI and the S256 challenge;
 *   a code used twice revokes the grant it gave (RFC 6749 §4.1.2);
 * - grants: each has one current refresh token. A refresh rotates it; presenting a refresh
 *   token the grant already rotated away (a replay, so maybe a stolen copy) revokes the grant;
 * - access tokens: their grant and expiry.
 * Tokens are kept as SHA-256 hashes only. docs/design-notes.md says why this is hand-written.
 */

export const LOCAL_CLIENT_ID_ENV = 'FORGE_LOCAL_OAUTH_CLIENT_ID';
export const LOCAL_CLIENT_SECRET_ENV = 'FORGE_LOCAL_OAUTH_CLIENT_SECRET';
/** The default access-token lifetime (FORGE_LOCAL_OAUTH_TOKEN_TTL sets another, in seconds). */
export const DEFAULT_ACCESS_TOKEN_TTL_SECONDS = 3600;
const CODE_TTL_MS = 60_000;

export interface LocalClient {
  clientId: string;
  clientSecret: string;
}

/**
 * The service's client at the local provider: derived from the service's secret key (the key
 * file made on first start, or FORGE_SECRET_KEY), so it is made once, survives restarts, and
 * every instance that shares the key agrees on it without another file.
 */
export function localClient(derive: (label: string) => Buffer): LocalClient {
  return {
    clientId: `forge-local-${derive('local-oauth client id').toString('hex').slice(0, 16)}`,
    clientSecret: derive('local-oauth client secret').toString('base64url'),
  };
}

/** An OAuth error answer: `status`, and the body's `error` and `error_description`. */
export class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
  }
}

interface Code {
  app: string;
  clientId: string;
  redirectUri: string;
  challenge: string;
  scope: string;
  expiresAt: number;
  /** Set when the code was exchanged: a second use revokes this grant. */
  grantId?: string;
}

interface Grant {
  app: string;
  clientId: string;
  scope: string;
  refreshHash: string;
  revoked: boolean;
}

interface AccessToken {
  grantId: string;
  expiresAt: number;
}

interface SavedState {
  grants: Record<string, Grant>;
  /** Every refresh token a grant was ever given (hash → grant id): a rotated-away one is a replay. */
  refreshTokens: Record<string, string>;
  accessTokens: Record<string, AccessToken>;
}

export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope?: string;
}

/** What introspection tells (RFC 7662): an inactive token says nothing more. */
export type Introspection =
  | { active: false }
  | { active: true; app: string; scope: string; client_id: string; exp: number };

const hash = (token: string) => createHash('sha256').update(token).digest('base64url');
const newToken = () => randomBytes(32).toString('base64url');

function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

export interface LocalProviderOptions {
  client: LocalClient;
  /** The one redirect URI registered for the client: the service's callback. */
  redirectUri: () => string;
  accessTokenTtlSeconds?: number;
  /** A file that keeps the grants across restarts (beside a SQLite database); none: memory only. */
  stateFile?: string;
}

export class LocalProvider {
  private readonly codes = new Map<string, Code>();
  private readonly state: SavedState;
  readonly accessTokenTtlSeconds: number;

  constructor(private readonly options: LocalProviderOptions) {
    this.accessTokenTtlSeconds = options.accessTokenTtlSeconds ?? DEFAULT_ACCESS_TOKEN_TTL_SECONDS;
    this.state =
      options.stateFile && existsSync(options.stateFile)
        ? (JSON.parse(readFileSync(options.stateFile, 'utf8')) as SavedState)
        : { grants: {}, refreshTokens: {}, accessTokens: {} };
  }

  /**
   * Checks an authorization request (before the consent page is shown and again when it is
   * answered). Problems with the client or the redirect URI are told to the user (never
   * redirected: the URI is not trusted yet); the others go back to the client as `error`.
   */
  checkAuthorization(query: Record<string, string | undefined>): {
    redirectTo?: string;
    problem?: OAuthError;
  } {
    if (query.client_id !== this.options.client.clientId)
      return {
        problem: new OAuthError(400, 'invalid_client', 'This app does not know the client that sent you here.'),
      };
    if (query.redirect_uri !== this.options.redirectUri())
      return { problem: new OAuthError(400, 'invalid_request', 'The address to return to is not the one registered.') };
    const redirectTo = query.redirect_uri;
    if (query.response_type !== 'code')
      return { redirectTo, problem: new OAuthError(400, 'unsupported_response_type', 'Only response_type=code.') };
    if (query.code_challenge_method !== 'S256' || !/^[\w-]{43}$/.test(query.code_challenge ?? ''))
      return {
        redirectTo,
        problem: new OAuthError(400, 'invalid_request', 'PKCE is required: code_challenge with method S256.'),
      };
    return { redirectTo };
  }

  /** The user allowed: a one-time code for a request `checkAuthorization` accepted. */
  issueCode(app: string, query: Record<string, string | undefined>): string {
    const code = newToken();
    this.codes.set(hash(code), {
      app,
      clientId: query.client_id!,
      redirectUri: query.redirect_uri!,
      challenge: query.code_challenge!,
      scope: query.scope ?? '',
      expiresAt: Date.now() + CODE_TTL_MS,
    });
    this.pruneCodes();
    return code;
  }

  /** The client named by `client_secret_basic` or `client_secret_post`, checked; else invalid_client. */
  authenticate(authorization: string | undefined, body: Record<string, string | undefined>): void {
    let id = body.client_id;
    let secret = body.client_secret;
    const basic = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(authorization ?? '');
    if (basic) {
      const [user = '', ...rest] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':');
      const decode = (text: string) => decodeURIComponent(text.replace(/\+/g, ' '));
      try {
        id = decode(user);
        secret = decode(rest.join(':'));
      } catch {
        id = undefined;
      }
    }
    const { client } = this.options;
    if (id !== client.clientId || secret === undefined || !sameSecret(secret, client.clientSecret))
      throw new OAuthError(401, 'invalid_client', 'Client authentication failed.');
  }

  /** The token endpoint, after `authenticate`: the authorization_code and refresh_token grants. */
  token(app: string, body: Record<string, string | undefined>): TokenAnswer {
    if (body.grant_type === 'authorization_code') return this.exchangeCode(app, body);
    if (body.grant_type === 'refresh_token') return this.refresh(app, body.refresh_token ?? '');
    throw new OAuthError(400, 'unsupported_grant_type', 'Only authorization_code and refresh_token.');
  }

  private exchangeCode(app: string, body: Record<string, string | undefined>): TokenAnswer {
    const key = hash(body.code ?? '');
    const code = this.codes.get(key);
    if (!code || code.expiresAt < Date.now() || code.app !== app)
      throw new OAuthError(400, 'invalid_grant', 'The code is unknown or has expired.');
    if (code.grantId) {
      // A code used twice: whoever holds it may not be the client, so what it gave is taken back.
      this.revokeGrant(code.grantId);
      throw new OAuthError(400, 'invalid_grant', 'The code was already used; its grant is revoked.');
    }
    if (body.redirect_uri !== code.redirectUri)
      throw new OAuthError(400, 'invalid_grant', 'redirect_uri is not the one of the authorization request.');
    const verifier = body.code_verifier ?? '';
    if (!/^[\w.~-]{43,128}$/.test(verifier) || hash(verifier) !== code.challenge)
      throw new OAuthError(400, 'invalid_grant', 'The PKCE code_verifier does not match the code_challenge.');
    const grantId = newToken();
    code.grantId = grantId;
    const refreshToken = newToken();
    this.state.grants[grantId] = {
      app,
      clientId: code.clientId,
      scope: code.scope,
      refreshHash: hash(refreshToken),
      revoked: false,
    };
    this.state.refreshTokens[hash(refreshToken)] = grantId;
    return this.answer(grantId, refreshToken);
  }

  private refresh(app: string, refreshToken: string): TokenAnswer {
    const presented = hash(refreshToken);
    const grantId = this.state.refreshTokens[presented];
    const grant = grantId ? this.state.grants[grantId] : undefined;
    if (!grantId || !grant || grant.app !== app || grant.revoked)
      throw new OAuthError(400, 'invalid_grant', 'The refresh token is unknown or revoked.');
    if (grant.refreshHash !== presented) {
      // Reuse detection: this token was already exchanged for a newer one.
      this.revokeGrant(grantId);
      throw new OAuthError(400, 'invalid_grant', 'The refresh token was already used; the grant is revoked.');
    }
    const next = newToken();
    grant.refreshHash = hash(next);
    this.state.refreshTokens[grant.refreshHash] = grantId;
    return this.answer(grantId, next);
  }

  private answer(grantId: string, refreshToken: string): TokenAnswer {
    const accessToken = newToken();
    const now = Date.now();
    for (const [key, token] of Object.entries(this.state.accessTokens))
      if (token.expiresAt < now) delete this.state.accessTokens[key];
    this.state.accessTokens[hash(accessToken)] = { grantId, expiresAt: now + this.accessTokenTtlSeconds * 1000 };
    this.save();
    const { scope } = this.state.grants[grantId]!;
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: this.accessTokenTtlSeconds,
      refresh_token: refreshToken,
      ...(scope ? { scope } : {}),
    };
  }

  /** RFC 7009: the grant a token belongs to ends (its refresh and access tokens with it); unknown tokens are fine. */
  revoke(app: string, token: string): void {
    const grantId = this.grantOf(token);
    if (grantId && this.state.grants[grantId]?.app === app) this.revokeGrant(grantId);
  }

  /** RFC 7662's answer for a token: active while issued by this provider, unexpired and its grant not revoked. */
  introspect(token: string): Introspection {
    const access = this.state.accessTokens[hash(token)];
    const grant = access ? this.state.grants[access.grantId] : undefined;
    if (!access || !grant || grant.revoked || access.expiresAt <= Date.now()) return { active: false };
    return {
      active: true,
      app: grant.app,
      scope: grant.scope,
      client_id: grant.clientId,
      exp: Math.floor(access.expiresAt / 1000),
    };
  }

  /** The user takes back the access they gave (the app's own "remove this integration"): by an access token of the grant. */
  revokeByAccessToken(token: string): boolean {
    const access = this.state.accessTokens[hash(token)];
    if (!access) return false;
    this.revokeGrant(access.grantId);
    return true;
  }

  private grantOf(token: string): string | undefined {
    const key = hash(token);
    return this.state.refreshTokens[key] ?? this.state.accessTokens[key]?.grantId;
  }

  private revokeGrant(grantId: string): void {
    const grant = this.state.grants[grantId];
    if (!grant) return;
    grant.revoked = true;
    for (const [key, token] of Object.entries(this.state.accessTokens))
      if (token.grantId === grantId) delete this.state.accessTokens[key];
    this.save();
  }

  private pruneCodes(): void {
    const now = Date.now();
    for (const [key, code] of this.codes) if (code.expiresAt + CODE_TTL_MS < now) this.codes.delete(key);
  }

  private save(): void {
    const file = this.options.stateFile;
    if (!file) return;
    // Written whole and renamed into place: a crash mid-write leaves the previous state.
    writeFileSync(`${file}.tmp`, JSON.stringify(this.state), { mode: 0o600 });
    chmodSync(`${file}.tmp`, 0o600);
    renameSync(`${file}.tmp`, file);
  }
}
