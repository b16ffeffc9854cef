/**
 * The failures the elements name: each carries the `code` its `forge-error` event reports, and a
 * `message` that says what happened and what to do. The service's own answers are
 * `ForgeApiError`s (`api/embed-client.ts`).
 */

export type TokenErrorCode = 'token-fetch-failed' | 'token-malformed' | 'token-expired';

export type ForgeErrorCode =
  | 'config'
  | TokenErrorCode
  | 'load-failed'
  | 'connect-failed'
  | 'oauth-blocked'
  | 'oauth-closed'
  | 'oauth-timeout'
  | 'oauth-denied'
  | 'save-failed'
  | 'toggle-failed'
  | 'disconnect-failed';

/** A failure that knows its `forge-error` code (token, configuration and OAuth failures). */
export class ForgeError extends Error {
  constructor(
    readonly code: ForgeErrorCode,
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** Thrown when the element is not configured well enough to talk to the service. */
export class ConfigError extends ForgeError {
  override readonly name = 'ConfigError';
  constructor(message: string) {
    super('config', message);
  }
}

/** Why no usable token could be had, in words an end user or a host developer can act on. */
export class TokenError extends ForgeError {
  override readonly name = 'TokenError';
  declare readonly code: TokenErrorCode;
}

/** What a `forge-error` event carries. */
export interface ErrorDetail {
  code: ForgeErrorCode;
  message: string;
  /** The HTTP status, when there is one (the service's, or the token endpoint's). */
  status?: number;
}

/** The `forge-error` detail for any failure: a ForgeError's own code, else `code`. */
export function errorDetail(error: unknown, code: ForgeErrorCode): ErrorDetail {
  const { message, status } = error as { message: string; status?: number };
  return { code: error instanceof ForgeError ? error.code : code, message, ...(status ? { status } : {}) };
}

/** An abort (a close, a removal, a newer run): never shown, never reported. */
export const isAbort = (error: unknown) => (error as Error | undefined)?.name === 'AbortError';
