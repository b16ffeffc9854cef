import { decodeJwt } from 'jose';

/** Answers a fresh user token; the elements call it before each open and when one expires. */
export type TokenProvider = (signal?: AbortSignal) => Promise<string>;

export type TokenErrorCode = 'token-fetch-failed' | 'token-malformed' | 'token-expired';

/** Why no usable token could be had, in words an end user or a host developer can act on. */
export class TokenError extends Error {
  override readonly name = 'TokenError';
  constructor(
    readonly code: TokenErrorCode,
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface UserToken {
  token: string;
  /** The token's `sub`. */
  userId: string;
  /** `exp`, in milliseconds since the epoch. */
  expiresAt: number;
}

/** Refresh this long before expiry, so no request goes out with a token about to lapse. */
export const REFRESH_MARGIN_MS = 60_000;

/**
 * Reads what the elements need from a user token. The browser never verifies it (it holds no
 * key; the service verifies every call): it only checks the shape and the clock.
 */
export function decodeUserToken(token: unknown, now = Date.now()): UserToken {
  if (typeof token !== 'string' || token.split('.').length !== 3) {
    throw new TokenError(
      'token-malformed',
      'The token endpoint did not answer a user token (a JWT). Check its response: {"token": "<JWT>"}.',
    );
  }
  let claims: ReturnType<typeof decodeJwt>;
  try {
    claims = decodeJwt(token);
  } catch {
    throw new TokenError(
      'token-malformed',
      "The user token could not be read. Check that the token endpoint passes on the service's token unchanged.",
    );
  }
  if (typeof claims.sub !== 'string' || !claims.sub || typeof claims.exp !== 'number') {
    throw new TokenError(
      'token-malformed',
      'The user token has no user (sub) or no expiry (exp). Use a token from GET /user/:userId/token.',
    );
  }
  const expiresAt = claims.exp * 1000;
  if (expiresAt <= now) {
    throw new TokenError(
      'token-expired',
      'The user token had already expired when it arrived. Check the clock of the server that issues it.',
    );
  }
  return { token, userId: claims.sub, expiresAt };
}

/**
 * A token provider that GETs the host's token endpoint (same-origin cookies included) and
 * reads `{token}` from the answer, the shape the service's own token endpoint has.
 */
export function tokenUrlProvider(url: string): TokenProvider {
  return async (signal) => {
    let response: Response;
    try {
      response = await fetch(url, {
        credentials: 'same-origin',
        cache: 'no-store',
        headers: { Accept: 'application/json' },
        signal,
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new TokenError(
        'token-fetch-failed',
        `Could not reach the token endpoint ${url}. Check your connection and try again.`,
      );
    }
    if (!response.ok) {
      throw new TokenError(
        'token-fetch-failed',
        response.status === 401 || response.status === 403
          ? 'You are not signed in to the app, so no integration token could be issued. Sign in again and retry.'
          : `The token endpoint ${url} answered ${response.status}. Try again in a moment.`,
        response.status,
      );
    }
    const body = (await response.json().catch(() => undefined)) as { token?: unknown } | undefined;
    if (!body || typeof body.token !== 'string') {
      throw new TokenError(
        'token-malformed',
        `The token endpoint ${url} did not answer JSON of the form {"token": "<JWT>"}.`,
      );
    }
    return body.token;
  };
}

/**
 * Holds one user token in memory (never in storage, cookies or URLs): concurrent callers share
 * one fetch, and while `keepFresh` is on, a timer fetches the next token a minute before this
 * one expires.
 */
export class TokenSource {
  private token?: UserToken;
  /** When the held token is due for replacement. */
  private refreshAt = 0;
  private inFlight?: Promise<UserToken>;
  private timer?: ReturnType<typeof setTimeout>;
  private users = 0;

  constructor(private readonly provider: TokenProvider) {}

  /** A token fetched now; calls made while one fetch is under way share it. */
  fresh(): Promise<UserToken> {
    this.inFlight ??= (async () => {
      try {
        const token = decodeUserToken(await this.provider());
        // A minute before expiry; a token shorter-lived than two minutes at half its life,
        // so a short token never turns into a stream of refetches.
        const lifetime = token.expiresAt - Date.now();
        this.refreshAt = Date.now() + Math.max(lifetime - REFRESH_MARGIN_MS, lifetime / 2);
        this.token = token;
        this.schedule();
        return token;
      } finally {
        this.inFlight = undefined;
      }
    })();
    return this.inFlight;
  }

  /** The held token until it is due for refresh, else a fresh one. */
  current(): Promise<UserToken> {
    if (this.token && Date.now() < this.refreshAt) return Promise.resolve(this.token);
    return this.fresh();
  }

  /** Counts the elements in use; the refresh timer runs only while there is one. */
  keepFresh(inUse: boolean): void {
    this.users = Math.max(0, this.users + (inUse ? 1 : -1));
    if (this.users === 0) clearTimeout(this.timer);
    else this.schedule();
  }

  /** Drops the token, e.g. when the configuration changes. */
  clear(): void {
    clearTimeout(this.timer);
    this.token = undefined;
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (!this.token || this.users === 0) return;
    const delay = Math.max(0, this.refreshAt - Date.now());
    this.timer = setTimeout(() => {
      // A failed background refresh is not shown here: the next call fetches again and reports.
      this.fresh().catch(() => undefined);
    }, delay);
  }
}
