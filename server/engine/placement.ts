import type { AppConfig } from '../catalog/auth.js';
import { fillTemplate, fillUrl } from '../catalog/auth.js';

/**
 * Where a user's credential goes on a request (docs/integrations.md, "Placement"): as the
 * integration's `auth` says — Bearer for OAuth or a preset's header, a named header, a query
 * parameter, Basic — and only to the origin of its `api.baseUrl` after templating. A block of the
 * integration that calls another origin sends no credential at all.
 */

/** A user's stored credential for one integration, once opened (sealed at rest: server/secrets.ts). */
export type StoredCredential =
  | {
      kind: 'oauth2';
      accessToken: string;
      refreshToken?: string;
      /** Epoch milliseconds; absent when the provider gave no expiry. */
      expiresAt?: number;
      /** How long the provider said the token lives (expires_in), in milliseconds. */
      lifetimeMs?: number;
      scope?: string;
      /** Non-secret values the provider gave at connection time (Salesforce's instance_url). */
      connection?: Record<string, string>;
      account?: string;
    }
  | { kind: 'parameters'; values: Record<string, string> };

/** What one block's requests to its integration's app carry. */
export interface AppAccess {
  /** The API base URL with the connection's values filled in; relative block URLs are appended to it. */
  baseUrl?: string;
  /** The credential, as headers and query parameters. */
  headers: Record<string, string>;
  query: Record<string, string>;
  /**
   * An integration the catalog gives no `api.baseUrl` keeps the behaviour of catalogs written
   * before `auth` existed: its credential goes wherever its blocks call.
   */
  anyOrigin: boolean;
  /** The connection's non-secret values, for `{{connection.X}}` in block URLs. */
  connection: Record<string, string>;
}

/** The non-secret values of a connection: required parameters not marked secret, and what the provider gave. */
export function connectionValues(config: AppConfig, credential: StoredCredential): Record<string, string> {
  if (credential.kind === 'oauth2') return { ...credential.connection };
  const open = new Set(config.parameters.filter((p) => !p.secret).map((p) => p.name));
  return Object.fromEntries(Object.entries(credential.values).filter(([name]) => open.has(name)));
}

/**
 * The access a credential gives to its integration's API. Undefined when a value the templates
 * need is missing (the credential was stored before the catalog asked for it).
 */
export function placeCredential(config: AppConfig, credential: StoredCredential): AppAccess | undefined {
  if (credential.kind !== 'oauth2' && !credential.values)
    return { headers: {}, query: {}, anyOrigin: false, connection: {} };
  const connection = connectionValues(config, credential);
  const baseUrl = config.baseUrl === undefined ? undefined : fillUrl(config.baseUrl, connection);
  if (config.baseUrl !== undefined && baseUrl === undefined) return undefined;
  const access: AppAccess = { baseUrl, headers: {}, query: {}, anyOrigin: baseUrl === undefined, connection };
  const auth = config.auth;
  const secretValues =
    credential.kind === 'oauth2' ? { accessToken: credential.accessToken } : { ...credential.values };
  const fill = (template: string) => fillTemplate(template, { credential: secretValues, connection });
  if (credential.kind === 'oauth2') {
    const header = auth?.kind === 'oauth2' ? auth.header : undefined;
    const value = header ? fill(header.value) : `Bearer ${credential.accessToken}`;
    if (value === undefined) return undefined;
    access.headers[header?.name ?? 'Authorization'] = value;
    return access;
  }
  if (auth?.kind === 'basic') {
    const username = fill(auth.username);
    const password = fill(auth.password);
    if (username === undefined || password === undefined) return undefined;
    access.headers.Authorization = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  } else if (auth?.kind === 'apiKey') {
    const placed = (auth.header ?? auth.query)!;
    const value = fill(placed.value);
    if (value === undefined) return undefined;
    (auth.header ? access.headers : access.query)[placed.name] = value;
  } else {
    // Catalogs written before `auth`: the first required parameter as a Bearer token.
    const first = config.parameters[0]?.name;
    const value = first ? credential.values[first] : undefined;
    if (!value) return undefined;
    access.headers.Authorization = `Bearer ${value}`;
  }
  return access;
}

/** Whether a request to `url` may carry the credential of `access`. */
export function mayCarryCredential(access: AppAccess, url: URL): boolean {
  if (access.anyOrigin) return true;
  return access.baseUrl !== undefined && new URL(access.baseUrl).origin === url.origin;
}

/** A block's URL as written: relative ones ("/chat.postMessage") are appended to the API's base URL. */
export function absoluteUrl(urlText: string, baseUrl: string | undefined): string | undefined {
  if (!urlText.startsWith('/')) return urlText;
  return baseUrl === undefined ? undefined : baseUrl.replace(/\/+$/, '') + urlText;
}
