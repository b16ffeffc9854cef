import { ForgeApiError, ForgeClient } from '../api/client.js';

/** Whatever a server adapter passes beside the request, e.g. `{req, res}` from `toNodeHandler`. */
export type TokenHandler<Context = unknown> = (request: Request, context?: Context) => Promise<Response>;

export interface TokenHandlerOptions<Context = unknown> {
  /** The host account's API key (`forge_sk_…`). It stays on the server: no response or log repeats it. */
  apiKey: string;
  /** Origin of the Forge service, e.g. `http://localhost:4010`; a trailing `/forge/2021-12` is accepted. */
  serviceUrl: string;
  /**
   * The Forge user id of whoever is signed in to your app for this request (read your session
   * here), or null/undefined when nobody is: the handler then answers 401. `context` is what the
   * adapter passed, e.g. `{req, res}` from `toNodeHandler` for an Express session.
   */
  getUserId: (request: Request, context: Context) => string | null | undefined | Promise<string | null | undefined>;
  /** Token lifetime in seconds, at most 1800 (the service's limit). Default: the service's 30 minutes. */
  expiresIn?: number;
  /**
   * Told why a token could not be issued, for your server log; the default writes to
   * `console.error`. The message never contains the API key.
   */
  onError?: (message: string) => void;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
}

const PROBLEM_BASE = 'https://forge-embed.dev/problems/';

function problem(status: number, slug: string, title: string, detail: string, headers: HeadersInit = {}): Response {
  return new Response(JSON.stringify({ type: PROBLEM_BASE + slug, title, status, detail }), {
    status,
    headers: { 'Content-Type': 'application/problem+json', 'Cache-Control': 'no-store', ...headers },
  });
}

/**
 * Why the service would not issue a token, for the host's log only. The browser gets
 * BROWSER_FAILURE instead: the service's own words, the user id and the setup mistakes they
 * reveal are for the host's developers, not for whoever holds the page.
 */
function serviceFailure(error: unknown, userId: string): string {
  if (!(error instanceof ForgeApiError)) {
    return 'The Forge service answered something other than {"token": "…"}. Check that serviceUrl points at a Forge service.';
  }
  switch (error.status) {
    case 0:
      return 'Could not reach the Forge service. Check that it is running and that serviceUrl points at it.';
    case 401:
    case 403:
      return `The Forge service did not accept the API key (${error.status}). Pass the host account's API key (forge_sk_…) as apiKey.`;
    case 404:
      return `The Forge service has no user ${userId}. Create the user with POST /user and return the userId it answers from getUserId.`;
    default:
      return `The Forge service answered ${error.status}: ${error.detail}`;
  }
}

const BROWSER_FAILURE =
  "No integration token could be issued right now. Try again in a moment; if it keeps failing, the app's server log says why.";

/**
 * The host backend's token endpoint as a Fetch-style handler (`Request` in, `Response` out):
 * it asks the Forge service for a user token of the signed-in user and answers `{"token": …}`,
 * the shape the elements' `token-url` expects. No CORS headers are sent, so only your own pages
 * can read the token. Errors are RFC 9457 problem documents: 401 when nobody is signed in, 502
 * when the service fails (a generic message; the reason goes to `onError`), 405 for anything
 * but GET. An exception thrown by `getUserId` is not
 * caught, so your framework reports it as it reports any other.
 */
export function createTokenHandler<Context = unknown>(options: TokenHandlerOptions<Context>): TokenHandler<Context> {
  const {
    apiKey,
    serviceUrl,
    getUserId,
    expiresIn,
    onError = (m) => console.error(`forge-embed/host: ${m}`),
  } = options;
  if (typeof apiKey !== 'string' || !apiKey) {
    throw new TypeError('createTokenHandler needs apiKey: the host account API key, e.g. from process.env.');
  }
  if (typeof serviceUrl !== 'string' || !/^https?:\/\/[^/]/.test(serviceUrl)) {
    throw new TypeError('createTokenHandler needs serviceUrl: the Forge service origin, e.g. http://localhost:4010.');
  }
  if (typeof getUserId !== 'function') {
    throw new TypeError("createTokenHandler needs getUserId: a function answering the signed-in user's Forge id.");
  }
  if (expiresIn !== undefined && !(Number.isInteger(expiresIn) && expiresIn >= 1 && expiresIn <= 1800)) {
    throw new RangeError('createTokenHandler: expiresIn is in seconds, a whole number from 1 to 1800.');
  }
  const client = new ForgeClient({ baseUrl: serviceUrl, credential: apiKey, fetch: options.fetch });

  return async (request, context) => {
    if (request.method !== 'GET') {
      return problem(405, 'method-not-allowed', 'Method not allowed', 'The token endpoint answers GET only.', {
        Allow: 'GET',
      });
    }
    const userId = await getUserId(request, context as Context);
    if (userId === null || userId === undefined || userId === '') {
      return problem(
        401,
        'unauthorized',
        'Not signed in',
        'Nobody is signed in to this app, so no integration token can be issued. Sign in and try again.',
      );
    }
    let token: unknown;
    try {
      // A body that is not JSON parses to undefined, hence the `?.`.
      token = (await client.getUserToken(String(userId), expiresIn ? { expiresIn } : {}))?.token;
    } catch (error) {
      if (error instanceof ForgeApiError) {
        onError(`${serviceFailure(error, String(userId))} (serviceUrl: ${client.baseUrl})`);
        return problem(502, 'bad-gateway', 'Token service failed', BROWSER_FAILURE);
      }
      throw error;
    }
    if (typeof token !== 'string') {
      onError(`${serviceFailure(undefined, String(userId))} (serviceUrl: ${client.baseUrl})`);
      return problem(502, 'bad-gateway', 'Token service failed', BROWSER_FAILURE);
    }
    return new Response(JSON.stringify({ token }), {
      status: 200,
      headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
    });
  };
}
