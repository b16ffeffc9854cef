import { TokenError } from '../errors.js';

/** Answers a fresh user token; the elements call it before each open and when one expires. */
export type TokenProvider = (signal?: AbortSignal) => Promise<string>;

export interface UserToken {
  token: string;
  /** The token's `sub`. */
  userId: string;
  /** `exp`, in milliseconds since the epoch. */
  expiresAt: number;
}

/**
 * The payload of a JWT, unverified. The browser never verifies a user token (it holds no key;
 * the service verifies every call), so reading `sub` and `exp` is all it needs: a base64url
 * decode and a JSON parse, for which a JOSE library would add 442 B gzip to every page.
 */
function jwtPayload(token: unknown): Record<string, unknown> {
  const payload = typeof token === 'string' ? token.split('.') : [];
  if (payload.length !== 3) throw new TypeError('not a JWT');
  // atob takes base64 with or without padding; base64url differs from it only in two letters.
  const binary = atob(payload[1]!.replace(/-/g, '+').replace(/_/g, '/'));
  const claims: unknown = JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0))));
  if (!claims || typeof claims !== 'object') throw new TypeError('not a JWT');
  return claims as Record<string, unknown>;
}

/**
 * Reads what the elements need from a user token. The browser never verifies it (it holds no
 * key; the service verifies every call): it only checks the shape and the clock.
 */
export function decodeUserToken(token: unknown, now = Date.now()): UserToken {
  let claims: Record<string, unknown>;
  try {
    claims = jwtPayload(token);
  } catch {
    throw new TokenError(
      'token-malformed',
      `The token endpoint did not answer a user token (a JWT). Check that it passes on the service's token unchanged: {"token": "<JWT>"}.`,
    );
  }
  const { sub, exp } = claims;
  if (!sub || typeof sub !== 'string' || typeof exp !== 'number') {
    throw new TokenError(
      'token-malformed',
      'The user token has no user (sub) or no expiry (exp). Use a token from GET /user/:userId/token.',
    );
  }
  if (exp * 1000 <= now) {
    throw new TokenError(
      'token-expired',
      'The user token had already expired when it arrived. Check the clock of the server that issues it.',
    );
  }
  return { token: token as string, userId: sub, expiresAt: exp * 1000 };
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
        0,
      );
    }
    const { status } = response;
    if (!response.ok) {
      throw new TokenError(
        'token-fetch-failed',
        status === 401 || status === 403
          ? 'You are not signed in to the app, so no integration token could be issued. Sign in again and retry.'
          : `The token endpoint ${url} answered ${status}. Try again in a moment.`,
        status,
      );
    }
    const body = await response.json().catch(() => undefined);
    if (typeof body?.token !== 'string') {
      throw new TokenError(
        'token-malformed',
        `The token endpoint ${url} did not answer JSON of the form {"token": "<JWT>"}.`,
      );
    }
    return body.token;
  };
}

/**
 * When a token that arrived at `now` is due for replacement: a minute before it expires; a token
 * shorter-lived than two minutes at half its life, so a short token never turns into a stream of
 * refetches.
 */
export function refreshTime(now: number, expiresAt: number): number {
  const lifetime = expiresAt - now;
  return now + Math.max(lifetime - 60_000, lifetime / 2);
}

/** Where a TokenSource reads the time and sets its timers; tests pass their own. */
export interface Clock {
  now(): number;
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(timer: unknown): void;
}

const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (run, ms) => setTimeout(run, ms),
  clearTimeout: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
};

/**
 * Holds one user token in memory (never in storage, cookies or URLs): concurrent callers share
 * one fetch, and while anyone keeps it fresh, a timer fetches the next token before this one
 * expires.
 */
export class TokenSource {
  readonly #provider: TokenProvider;
  readonly #clock: Clock;
  #token?: UserToken;
  /** When the held token is due for replacement. */
  #refreshAt = 0;
  #inFlight?: Promise<UserToken> | undefined;
  #timer?: unknown;
  /** Whoever asked to keep the token fresh and has not yet let go (an element's connection). */
  #keepers = new Set<object>();

  /**
   * How long a token may take to arrive. A token endpoint that never answers would otherwise
   * hold every open, since later opens share the fetch under way.
   */
  static timeoutMs = 15_000;

  constructor(provider: TokenProvider, clock: Clock = systemClock) {
    this.#provider = provider;
    this.#clock = clock;
  }

  /** A token fetched now; calls made while one fetch is under way share it. */
  fresh(): Promise<UserToken> {
    this.#inFlight ??= (async () => {
      const clock = this.#clock;
      let timer: unknown;
      try {
        const timeout = new Promise<never>((_, reject) => {
          timer = clock.setTimeout(
            () =>
              reject(
                new TokenError(
                  'token-fetch-failed',
                  `No user token arrived within ${TokenSource.timeoutMs / 1000} seconds. Check that the token endpoint answers, then try again.`,
                ),
              ),
            TokenSource.timeoutMs,
          );
        });
        const token = decodeUserToken(await Promise.race([this.#provider(), timeout]), clock.now());
        this.#refreshAt = refreshTime(clock.now(), token.expiresAt);
        this.#token = token;
        this.#schedule();
        return token;
      } finally {
        clock.clearTimeout(timer);
        this.#inFlight = undefined;
      }
    })();
    return this.#inFlight;
  }

  /** The held token until it is due for refresh; nothing is fetched. */
  get inHand(): UserToken | undefined {
    return this.#clock.now() < this.#refreshAt ? this.#token : undefined;
  }

  /** The held token until it is due for refresh, else a fresh one. */
  current(): Promise<UserToken> {
    const token = this.inHand;
    return token ? Promise.resolve(token) : this.fresh();
  }

  /** `keeper` wants the token kept fresh (or no longer); the timer runs while anyone does. */
  keepFresh(keeper: object, on: boolean): void {
    this.#keepers[on ? 'add' : 'delete'](keeper);
    this.#schedule();
  }

  #schedule(): void {
    const clock = this.#clock;
    clock.clearTimeout(this.#timer);
    if (!this.#token || !this.#keepers.size) return;
    // A failed background refresh is not shown here: the next call fetches again and reports.
    this.#timer = clock.setTimeout(() => this.fresh().catch(() => undefined), this.#refreshAt - clock.now());
  }
}

/**
 * Elements configured with the same token endpoint (or the same provider function) share one
 * TokenSource, so a list and the modal it opens fetch one token, not two.
 */
const sourcesByUrl = new Map<string, TokenSource>();
const sourcesByProvider = new WeakMap<TokenProvider, TokenSource>();

/** The shared TokenSource of a provider function, else of a token endpoint URL. */
export function sharedTokenSource(provider: TokenProvider | undefined, url: string): TokenSource | undefined {
  if (provider) {
    let source = sourcesByProvider.get(provider);
    if (!source) sourcesByProvider.set(provider, (source = new TokenSource(provider)));
    return source;
  }
  if (!url) return undefined;
  let source = sourcesByUrl.get(url);
  if (!source) sourcesByUrl.set(url, (source = new TokenSource(tokenUrlProvider(url))));
  return source;
}
