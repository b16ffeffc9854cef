import * as oauth from 'oauth4webapi';
import { fillUrl, type OAuth2Auth } from '../catalog/auth.js';
import type { StoredCredential } from '../engine/placement.js';

/**
 * The service's side of OAuth 2.0 (authorization code, RFC 6749 with PKCE, RFC 7636), on
 * oauth4webapi: the authorize redirect, the code exchange, refresh and revocation. What differs
 * between providers is data (the integration's `auth`, often from a preset), not code here.
 */

type OAuthCredential = Extract<StoredCredential, { kind: 'oauth2' }>;

/** The integration's client is not configured: the environment variable to set. */
export class ClientNotConfigured extends Error {
  constructor(
    readonly integration: string,
    readonly variable: string,
  ) {
    super(`${variable} is not set`);
  }
}

/**
 * The provider refused or failed. `denied`: the user said no. `broken`: the grant is gone
 * (invalid_grant, invalid_client), so only connecting again helps. Otherwise it may pass: a
 * network error, a timeout or a 5xx.
 */
export class ProviderFailure extends Error {
  constructor(
    message: string,
    readonly reason: 'denied' | 'broken' | 'failed',
    /** What the provider answered, for the service's log: never a secret. */
    readonly providerAnswer: string,
  ) {
    super(message);
  }
}

/** One integration's OAuth client. */
export interface OAuthApp {
  integration: string;
  auth: OAuth2Auth;
  /** The service's own origin: `auth` URLs that are paths (the local provider's) are on it. */
  serviceUrl: string;
}

const TOKEN_TIMEOUT_MS = 10_000;

const isLoopback = (url: URL) => ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);

/** The client's id and secret, from the environment variables the catalog names. */
export function clientCredentials(
  { integration, auth }: OAuthApp,
  env: NodeJS.ProcessEnv,
): { clientId: string; clientSecret: string } {
  const clientId = env[auth.clientIdEnv];
  if (!clientId) throw new ClientNotConfigured(integration, auth.clientIdEnv);
  const clientSecret = env[auth.clientSecretEnv];
  if (!clientSecret) throw new ClientNotConfigured(integration, auth.clientSecretEnv);
  return { clientId, clientSecret };
}

function server({ auth, serviceUrl }: OAuthApp, connection: Record<string, string>): oauth.AuthorizationServer {
  const fill = (template: string | undefined) => {
    if (template === undefined) return undefined;
    const url = fillUrl(template, connection);
    if (!url) throw new ProviderFailure('A value this app needs before connecting is missing.', 'failed', '');
    return new URL(url, serviceUrl).toString();
  };
  const authorization = fill(auth.authorizationUrl)!;
  return {
    issuer: new URL(authorization).origin,
    authorization_endpoint: authorization,
    token_endpoint: fill(auth.tokenUrl),
    revocation_endpoint: fill(auth.revocationUrl),
  };
}

function options(url: string | undefined) {
  // Plain http only to this machine (the local provider, tests on loopback).
  const insecure = url !== undefined && new URL(url).protocol === 'http:' && isLoopback(new URL(url));
  return { [oauth.allowInsecureRequests]: insecure, signal: () => AbortSignal.timeout(TOKEN_TIMEOUT_MS) };
}

function clientAuth(auth: OAuth2Auth, secret: string): oauth.ClientAuth {
  return auth.clientAuth === 'basic' ? oauth.ClientSecretBasic(secret) : oauth.ClientSecretPost(secret);
}

/** A new flow's secrets: its PKCE verifier (kept server-side with the state). */
export const newCodeVerifier = () => oauth.generateRandomCodeVerifier();

/** Where the popup goes: the provider's consent page for this flow. */
export async function authorizeUrl(
  app: OAuthApp,
  env: NodeJS.ProcessEnv,
  flow: { state: string; codeVerifier: string; redirectUri: string; connection: Record<string, string> },
): Promise<string> {
  const { clientId } = clientCredentials(app, env);
  const as = server(app, flow.connection);
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', clientId);
  url.searchParams.set('redirect_uri', flow.redirectUri);
  if (app.auth.scopes.length) url.searchParams.set('scope', app.auth.scopes.join(app.auth.scopeSeparator));
  url.searchParams.set('state', flow.state);
  if (app.auth.pkce) {
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(flow.codeVerifier));
    url.searchParams.set('code_challenge_method', 'S256');
  }
  for (const [name, value] of Object.entries(app.auth.authorizationParams)) url.searchParams.set(name, value);
  return url.toString();
}

/** The provider's answer to the callback, exchanged for tokens server-side. */
export async function finishAuthorization(
  app: OAuthApp,
  env: NodeJS.ProcessEnv,
  callback: URLSearchParams,
  flow: { state: string; codeVerifier: string; redirectUri: string; connection: Record<string, string> },
): Promise<OAuthCredential> {
  const { clientId, clientSecret } = clientCredentials(app, env);
  const as = server(app, flow.connection);
  const client: oauth.Client = { client_id: clientId };
  let params: URLSearchParams;
  try {
    // The issuer is not checked: one redirect URI serves every integration, and the state
    // already binds the answer to this flow's integration.
    params = oauth.validateAuthResponse(as, client, withoutIssuer(callback), flow.state);
  } catch (error) {
    if (error instanceof oauth.AuthorizationResponseError) {
      const code = error.error;
      throw new ProviderFailure(
        code === 'access_denied' ? 'Access was denied.' : `The app refused the sign-in (${code}).`,
        code === 'access_denied' ? 'denied' : 'failed',
        `${code}${error.error_description ? `: ${error.error_description}` : ''}`,
      );
    }
    throw new ProviderFailure('The app answered the sign-in with something unexpected.', 'failed', String(error));
  }
  const connection = { ...flow.connection };
  for (const [name, pattern] of Object.entries(app.auth.callbackValues)) {
    const value = callback.get(name);
    if (!value || !new RegExp(pattern, 'u').test(value))
      throw new ProviderFailure('The app did not say which account was connected.', 'failed', `callback ${name}`);
    connection[name] = value;
  }
  const answer = await tokenRequest(app, () =>
    oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuth(app.auth, clientSecret),
      params,
      flow.redirectUri,
      app.auth.pkce ? flow.codeVerifier : oauth.nopkce,
      options(as.token_endpoint),
    ),
  ).then((response) =>
    processToken(app, () =>
      oauth.processAuthorizationCodeResponse(as, client, response, { recognizedTokenTypes: tokenTypes(app.auth) }),
    ),
  );
  return credentialFrom(app.auth, answer, connection, undefined);
}

/** A new access token for a stored credential; the refresh token is kept unless the provider rotated it. */
export async function refreshCredential(
  app: OAuthApp,
  env: NodeJS.ProcessEnv,
  credential: OAuthCredential,
): Promise<OAuthCredential> {
  if (!credential.refreshToken) {
    throw new ProviderFailure('The app gave no refresh token; connect again.', 'broken', 'no refresh token');
  }
  const { clientId, clientSecret } = clientCredentials(app, env);
  const as = server(app, credential.connection ?? {});
  const client: oauth.Client = { client_id: clientId };
  const response = await tokenRequest(app, () =>
    oauth.refreshTokenGrantRequest(
      as,
      client,
      clientAuth(app.auth, clientSecret),
      credential.refreshToken!,
      options(as.token_endpoint),
    ),
  );
  const answer = await processToken(app, () =>
    oauth.processRefreshTokenResponse(as, client, response, { recognizedTokenTypes: tokenTypes(app.auth) }),
  );
  return credentialFrom(app.auth, answer, credential.connection ?? {}, credential);
}

/** Revokes the grant at the provider when it has a revocation endpoint (the refresh token, else the access token). */
export async function revokeCredential(
  app: OAuthApp,
  env: NodeJS.ProcessEnv,
  credential: OAuthCredential,
): Promise<boolean> {
  if (!app.auth.revocationUrl) return false;
  const { clientId, clientSecret } = clientCredentials(app, env);
  const as = server(app, credential.connection ?? {});
  const token = credential.refreshToken ?? credential.accessToken;
  const response = await oauth.revocationRequest(
    as,
    { client_id: clientId },
    clientAuth(app.auth, clientSecret),
    token,
    {
      ...options(as.revocation_endpoint),
      additionalParameters: { token_type_hint: credential.refreshToken ? 'refresh_token' : 'access_token' },
    },
  );
  await oauth.processRevocationResponse(response);
  return true;
}

function tokenTypes(auth: OAuth2Auth): oauth.RecognizedTokenTypes {
  return Object.fromEntries(auth.tokenTypes.map((type) => [type.toLowerCase(), () => {}]));
}

async function tokenRequest(_app: OAuthApp, send: () => Promise<Response>): Promise<Response> {
  try {
    return await send();
  } catch (error) {
    const e = error as Error & { cause?: { code?: string } };
    throw new ProviderFailure(
      'The app could not be reached.',
      'failed',
      e.name === 'TimeoutError' ? 'no answer in time' : `${e.name}: ${e.cause?.code ?? e.message}`,
    );
  }
}

async function processToken(
  _app: OAuthApp,
  process: () => Promise<oauth.TokenEndpointResponse>,
): Promise<oauth.TokenEndpointResponse> {
  try {
    return await process();
  } catch (error) {
    // A token endpoint answers an OAuth error in its body, or (401) in a WWW-Authenticate challenge.
    const refusal =
      error instanceof oauth.ResponseBodyError
        ? { status: error.status, code: error.error, description: error.error_description }
        : error instanceof oauth.WWWAuthenticateChallengeError
          ? {
              status: error.status,
              code: error.cause[0]?.parameters.error ?? 'invalid_client',
              description: error.cause[0]?.parameters.error_description,
            }
          : undefined;
    if (refusal) {
      const broken = refusal.code === 'invalid_grant' || refusal.code === 'invalid_client';
      throw new ProviderFailure(
        refusal.code === 'invalid_client'
          ? 'The app refused the service’s OAuth client.'
          : refusal.code === 'invalid_grant'
            ? 'The app no longer accepts this grant.'
            : `The app refused to give a token (${refusal.code}).`,
        broken ? 'broken' : 'failed',
        `${refusal.status} ${refusal.code}${refusal.description ? `: ${refusal.description}` : ''}`,
      );
    }
    const e = error as Error & { cause?: unknown };
    const status = e.cause instanceof Response ? ` (HTTP ${e.cause.status})` : '';
    throw new ProviderFailure(
      'The app answered with something that is not a token.',
      'failed',
      `${e.message}${status}`,
    );
  }
}

const pathIn = (value: unknown, path: string): unknown =>
  path
    .split('.')
    .reduce<unknown>(
      (at, key) => (at && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined),
      value,
    );

function credentialFrom(
  auth: OAuth2Auth,
  answer: oauth.TokenEndpointResponse,
  connection: Record<string, string>,
  previous: OAuthCredential | undefined,
): OAuthCredential {
  const values = { ...connection };
  for (const [name, path] of Object.entries(auth.tokenValues)) {
    const value = pathIn(answer, path);
    if (typeof value === 'string' && value) values[name] = value;
  }
  const account = auth.account ? pathIn(answer, auth.account) : undefined;
  const refreshToken = answer.refresh_token ?? previous?.refreshToken;
  return {
    kind: 'oauth2',
    accessToken: answer.access_token,
    ...(refreshToken ? { refreshToken } : {}),
    ...(typeof answer.expires_in === 'number'
      ? { expiresAt: Date.now() + answer.expires_in * 1000, lifetimeMs: answer.expires_in * 1000 }
      : {}),
    ...(answer.scope ? { scope: answer.scope } : {}),
    ...(Object.keys(values).length ? { connection: values } : {}),
    ...(typeof account === 'string' && account ? { account } : previous?.account ? { account: previous.account } : {}),
  };
}

function withoutIssuer(callback: URLSearchParams): URLSearchParams {
  const copy = new URLSearchParams(callback);
  copy.delete('iss');
  return copy;
}

/**
 * The preset's identity request (Mailchimp's metadata: its data centre and account name), made
 * once with the new access token; without one, the credential as it is.
 */
export async function identify(app: OAuthApp, credential: OAuthCredential): Promise<OAuthCredential> {
  const identity = app.auth.identity;
  if (!identity) return credential;
  let body: unknown;
  try {
    const response = await fetch(identity.url, {
      headers: {
        Authorization: `${identity.scheme ?? 'Bearer'} ${credential.accessToken}`,
        Accept: 'application/json',
      },
      redirect: 'manual',
      signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
    });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    body = await response.json();
  } catch (error) {
    throw new ProviderFailure(
      'The app did not say which account was connected.',
      'failed',
      `identity: ${(error as Error).message}`,
    );
  }
  const connection = { ...credential.connection };
  for (const [name, path] of Object.entries(identity.values ?? {})) {
    const value = pathIn(body, path);
    if (typeof value === 'string' && value) connection[name] = value;
  }
  const account = identity.account ? pathIn(body, identity.account) : undefined;
  return {
    ...credential,
    ...(Object.keys(connection).length ? { connection } : {}),
    ...(typeof account === 'string' && account ? { account } : {}),
  };
}
