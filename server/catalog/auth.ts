import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Static, Type } from '@sinclair/typebox';
import { Ajv, type ErrorObject } from 'ajv';
import { PACKAGE_ROOT } from '../paths.js';

/**
 * How an integration authenticates (`auth`) and where its API lives (`api`): the host's
 * configuration, documented in docs/integrations.md. Both are read from the catalog at start,
 * checked here (a problem names the integration and the field), filled in from a built-in
 * preset when `auth.preset` names one (server/catalog/presets.json), and kept apart from the
 * seed's Integration shape: what the elements read never carries any of it.
 *
 * Templates: `{{credential.X}}` (a value of the user's credential) may appear only in `auth`;
 * `{{connection.X}}` (a required parameter not marked secret, or a value the provider gave at
 * connection time) in `api.baseUrl`, the OAuth URLs and blocks' URLs.
 */

const Text = (description?: string) => Type.String({ minLength: 1, ...(description ? { description } : {}) });
const Placement = Type.Object({ name: Text(), value: Text() }, { additionalProperties: false });
const Verify = Type.Object(
  {
    method: Type.Optional(Type.Union([Type.Literal('GET'), Type.Literal('POST')])),
    path: Type.String({ pattern: '^/' }),
  },
  { additionalProperties: false },
);

const Identity = Type.Object(
  {
    url: Type.String({ pattern: '^https?://' }),
    /** The scheme of the Authorization header; default Bearer. */
    scheme: Type.Optional(Text()),
    account: Type.Optional(Text()),
    values: Type.Optional(Type.Record(Type.String(), Text())),
  },
  { additionalProperties: false },
);

const OAuth2Schema = Type.Object(
  {
    kind: Type.Literal('oauth2'),
    preset: Type.Optional(Text()),
    authorizationUrl: Type.Optional(Text()),
    tokenUrl: Type.Optional(Text()),
    revocationUrl: Type.Optional(Text()),
    scopes: Type.Optional(Type.Array(Text())),
    scopeSeparator: Type.Optional(Type.String({ minLength: 1, maxLength: 3 })),
    authorizationParams: Type.Optional(Type.Record(Type.String(), Type.String())),
    clientAuth: Type.Optional(Type.Union([Type.Literal('basic'), Type.Literal('post')])),
    pkce: Type.Optional(Type.Boolean()),
    clientIdEnv: Type.String({ pattern: '^[A-Z_][A-Z0-9_]*$' }),
    clientSecretEnv: Type.String({ pattern: '^[A-Z_][A-Z0-9_]*$' }),
    /** A header other than `Authorization: Bearer` (Shopify's `X-Shopify-Access-Token`). */
    header: Type.Optional(Placement),
    /** Token types besides `bearer` the token endpoint answers (Slack's `bot`). */
    tokenTypes: Type.Optional(Type.Array(Text())),
    /** A dotted path in the token answer to the account's display label. */
    account: Type.Optional(Text()),
    /** Connection values the token answer carries: value name → dotted path. */
    tokenValues: Type.Optional(Type.Record(Type.String(), Text())),
  },
  { additionalProperties: false },
);

const ApiKeySchema = Type.Object(
  {
    kind: Type.Literal('apiKey'),
    header: Type.Optional(Placement),
    query: Type.Optional(Placement),
    verify: Type.Optional(Verify),
  },
  { additionalProperties: false },
);

const BasicSchema = Type.Object(
  { kind: Type.Literal('basic'), username: Type.String(), password: Type.String(), verify: Type.Optional(Verify) },
  { additionalProperties: false },
);

const ApiSchema = Type.Object({ baseUrl: Text() }, { additionalProperties: false });

export const PresetSchema = Type.Object(
  {
    displayName: Text(),
    docs: Type.String({ pattern: '^https://' }),
    authorizationUrl: Type.String({ pattern: '^https://' }),
    tokenUrl: Type.String({ pattern: '^https://' }),
    revocationUrl: Type.Optional(Type.String({ pattern: '^https://' })),
    clientAuth: Type.Union([Type.Literal('basic'), Type.Literal('post')]),
    pkce: Type.Boolean(),
    scopeSeparator: Type.String({ minLength: 1, maxLength: 3 }),
    authorizationParams: Type.Optional(Type.Record(Type.String(), Type.String())),
    tokenTypes: Type.Optional(Type.Array(Text())),
    account: Type.Optional(Text()),
    tokenValues: Type.Optional(Type.Record(Type.String(), Text())),
    /** Values the user gives before connecting (a Shopify shop): name → pattern. */
    connectionValues: Type.Optional(Type.Record(Type.String(), Text())),
    /** Values the provider adds to the callback (QuickBooks' realmId): name → pattern. */
    callbackValues: Type.Optional(Type.Record(Type.String(), Text())),
    credentialHeader: Type.Optional(Placement),
    /** A request made with the new access token for the account label and connection values (Mailchimp's data centre). */
    identity: Type.Optional(Identity),
    baseUrl: Text(),
  },
  { additionalProperties: false },
);
export type Preset = Static<typeof PresetSchema>;

const ajv = new Ajv({ allErrors: true, strict: false });
const checkAuth = ajv.compile(Type.Union([OAuth2Schema, ApiKeySchema, BasicSchema]));
const checkOAuth2 = ajv.compile(OAuth2Schema);
const checkApiKey = ajv.compile(ApiKeySchema);
const checkBasic = ajv.compile(BasicSchema);
const checkApi = ajv.compile(ApiSchema);
export const checkPreset = ajv.compile(PresetSchema);

type Placed = Static<typeof Placement>;
export interface OAuth2Auth {
  kind: 'oauth2';
  preset?: string;
  authorizationUrl: string;
  tokenUrl: string;
  revocationUrl?: string;
  scopes: string[];
  scopeSeparator: string;
  authorizationParams: Record<string, string>;
  clientAuth: 'basic' | 'post';
  pkce: boolean;
  clientIdEnv: string;
  clientSecretEnv: string;
  header?: Placed;
  tokenTypes: string[];
  account?: string;
  tokenValues: Record<string, string>;
  callbackValues: Record<string, string>;
  /** Values the user gives before the authorize redirect (a Shopify shop): name → pattern. */
  connectionValues: Record<string, string>;
  identity?: Static<typeof Identity>;
}
export type ApiKeyAuth = Static<typeof ApiKeySchema>;
export type BasicAuth = Static<typeof BasicSchema>;
export type AuthConfig = OAuth2Auth | ApiKeyAuth | BasicAuth;

/** A required parameter as the service uses it: the seed's fields plus `secret`, `pattern` and `patternMessage`. */
export interface ParameterRule {
  name: string;
  secret: boolean;
  pattern?: RegExp;
  /** What the user reads when a value does not fit `pattern` (plain words, not the expression). */
  patternMessage?: string;
}

/** Everything the service knows of how to reach one integration's app. */
export interface AppConfig {
  auth?: AuthConfig;
  baseUrl?: string;
  parameters: ParameterRule[];
}

let presetsCache: Record<string, Preset> | undefined;

/** The built-in presets (server/catalog/presets.json). */
export function presets(): Record<string, Preset> {
  presetsCache ??= JSON.parse(readFileSync(join(PACKAGE_ROOT, 'catalog', 'presets.json'), 'utf8')) as Record<
    string,
    Preset
  >;
  return presetsCache;
}

const TEMPLATE = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** The `{{…}}` references of a text, e.g. `connection.subdomain`. */
export function templateRefs(text: string): string[] {
  return [...text.matchAll(TEMPLATE)].map((m) => m[1]!);
}

/**
 * A template with its `{{credential.X}}` and `{{connection.X}}` filled in. Values are encoded
 * with `encode` (in URLs, encodeURIComponent: a value cannot add a path, a port or a host).
 * Answers undefined when a value is missing.
 */
export function fillTemplate(
  text: string,
  values: { credential?: Record<string, string>; connection?: Record<string, string> },
  encode: (value: string) => string = (v) => v,
): string | undefined {
  let missing = false;
  const filled = text.replace(TEMPLATE, (_all, ref: string) => {
    const [source, name = ''] = ref.split('.', 2) as [string, string?];
    const found = source === 'credential' || source === 'connection' ? values[source]?.[name] : undefined;
    if (found === undefined || found === '') {
      missing = true;
      return '';
    }
    return encode(found);
  });
  return missing ? undefined : filled;
}

/** Fills a URL template: connection values are encoded, except a provider-given origin at its very start. */
export function fillUrl(template: string, connection: Record<string, string>): string | undefined {
  const leading = /^\{\{\s*connection\.([\w-]+)\s*\}\}/.exec(template);
  if (leading) {
    const origin = connection[leading[1]!];
    if (!origin || !/^https?:\/\/[^/?#@\\]+$/.test(origin.replace(/\/$/, ''))) return undefined;
    const rest = fillTemplate(template.slice(leading[0].length), { connection }, encodeURIComponent);
    return rest === undefined ? undefined : origin.replace(/\/$/, '') + rest;
  }
  return fillTemplate(template, { connection }, encodeURIComponent);
}

/**
 * The `auth` of an app at the service's own local OAuth provider (server/local-provider/): paths
 * on the service, its client made on first start (the service sets the two variables itself
 * unless they are set). The demo catalog spells the same out.
 */
export function localProviderAuth(app: string) {
  const at = `/local-oauth/${encodeURIComponent(app)}`;
  return {
    kind: 'oauth2',
    authorizationUrl: `${at}/authorize`,
    tokenUrl: `${at}/token`,
    revocationUrl: `${at}/revoke`,
    clientAuth: 'basic',
    clientIdEnv: 'FORGE_LOCAL_OAUTH_CLIENT_ID',
    clientSecretEnv: 'FORGE_LOCAL_OAUTH_CLIENT_SECRET',
  };
}

/**
 * Reads and checks one catalog entry's `auth`, `api` and the `secret`/`pattern` of its required
 * parameters. Problems are pushed as `<at> (<name>).<field>: <what is wrong>`.
 */
export function parseAppConfig(item: Record<string, unknown>, at: string, problems: string[]): AppConfig {
  const where = `${at} (${typeof item.name === 'string' ? item.name : 'unnamed'})`;
  const parameters: ParameterRule[] = [];
  if (Array.isArray(item.requiredParameters)) {
    for (const [k, p] of item.requiredParameters.entries()) {
      if (typeof p !== 'object' || p === null) continue;
      const { name, secret, pattern, patternMessage } = p as Record<string, unknown>;
      if (secret !== undefined && typeof secret !== 'boolean')
        problems.push(`${where}.requiredParameters[${k}].secret: must be true or false`);
      if (patternMessage !== undefined && (typeof patternMessage !== 'string' || !patternMessage.trim()))
        problems.push(`${where}.requiredParameters[${k}].patternMessage: must be a text`);
      let compiled: RegExp | undefined;
      if (pattern !== undefined) {
        try {
          if (typeof pattern !== 'string') throw new Error('not a string');
          compiled = new RegExp(pattern, 'u');
        } catch {
          problems.push(`${where}.requiredParameters[${k}].pattern: must be a regular expression, as a string`);
        }
      }
      parameters.push({
        name: String(name),
        secret: secret === true,
        ...(compiled ? { pattern: compiled } : {}),
        ...(typeof patternMessage === 'string' && patternMessage.trim() ? { patternMessage } : {}),
      });
    }
  }
  const config: AppConfig = { parameters };
  if (item.api !== undefined) {
    if (!checkApi(item.api)) problems.push(...ajvProblems(`${where}.api`, checkApi.errors));
    else config.baseUrl = (item.api as { baseUrl: string }).baseUrl;
  }
  // An OAuth integration that does not say how it authenticates goes to the local provider
  // (catalogs written before `auth` existed keep connecting, through the same flow).
  const given = item.auth === undefined && item.type === 'oauth2' ? localProviderAuth(String(item.name)) : item.auth;
  if (given === undefined) return config;
  const auth = parseAuth(given, `${where}.auth`, problems);
  if (!auth) return config;
  config.auth = auth;
  if (auth.kind === 'oauth2' && item.type !== 'oauth2')
    problems.push(`${where}.type: must be "oauth2" when auth.kind is "oauth2"`);
  if (auth.kind !== 'oauth2' && item.type === 'oauth2')
    problems.push(`${where}.type: is "oauth2" but auth.kind is "${auth.kind}"`);
  if (auth.kind === 'oauth2' && !config.baseUrl) {
    const preset = auth.preset ? presets()[auth.preset] : undefined;
    if (preset) config.baseUrl = preset.baseUrl;
  }
  checkTemplates(config, where, problems);
  return config;
}

function parseAuth(value: unknown, at: string, problems: string[]): AuthConfig | undefined {
  const kind = (value as { kind?: unknown } | null)?.kind;
  const check =
    kind === 'oauth2' ? checkOAuth2 : kind === 'apiKey' ? checkApiKey : kind === 'basic' ? checkBasic : undefined;
  if (!check) {
    if (!checkAuth(value)) problems.push(`${at}.kind: must be "oauth2", "apiKey" or "basic"`);
    return undefined;
  }
  if (!check(value)) {
    problems.push(...ajvProblems(at, check.errors));
    return undefined;
  }
  if (kind === 'apiKey') {
    const auth = value as ApiKeyAuth;
    if (!auth.header === !auth.query) problems.push(`${at}: an apiKey auth needs one of "header" or "query"`);
    return auth;
  }
  if (kind === 'basic') return value as BasicAuth;
  const given = value as Static<typeof OAuth2Schema>;
  let preset: Preset | undefined;
  if (given.preset !== undefined) {
    preset = presets()[given.preset];
    if (!preset) {
      problems.push(
        `${at}.preset: no built-in preset "${given.preset}"; the presets are ${Object.keys(presets()).join(', ')}`,
      );
      return undefined;
    }
  }
  const authorizationUrl = given.authorizationUrl ?? preset?.authorizationUrl;
  const tokenUrl = given.tokenUrl ?? preset?.tokenUrl;
  for (const [field, url] of Object.entries({ authorizationUrl, tokenUrl })) {
    if (!url) problems.push(`${at}.${field}: required (or name a preset that has it)`);
  }
  for (const [field, url] of Object.entries({ authorizationUrl, tokenUrl, revocationUrl: given.revocationUrl })) {
    if (url && !/^(https?:\/\/|\/[^/])/.test(url))
      problems.push(`${at}.${field}: must be an http(s) URL, or a path on the service (the local provider's)`);
  }
  if (!authorizationUrl || !tokenUrl) return undefined;
  return {
    kind: 'oauth2',
    ...(given.preset ? { preset: given.preset } : {}),
    authorizationUrl,
    tokenUrl,
    ...((given.revocationUrl ?? preset?.revocationUrl)
      ? { revocationUrl: given.revocationUrl ?? preset?.revocationUrl }
      : {}),
    scopes: given.scopes ?? [],
    scopeSeparator: given.scopeSeparator ?? preset?.scopeSeparator ?? ' ',
    authorizationParams: { ...preset?.authorizationParams, ...given.authorizationParams },
    clientAuth: given.clientAuth ?? preset?.clientAuth ?? 'basic',
    pkce: given.pkce ?? preset?.pkce ?? true,
    clientIdEnv: given.clientIdEnv,
    clientSecretEnv: given.clientSecretEnv,
    ...((given.header ?? preset?.credentialHeader) ? { header: given.header ?? preset?.credentialHeader } : {}),
    tokenTypes: given.tokenTypes ?? preset?.tokenTypes ?? [],
    ...((given.account ?? preset?.account) ? { account: given.account ?? preset?.account } : {}),
    tokenValues: { ...preset?.tokenValues, ...given.tokenValues },
    callbackValues: { ...preset?.callbackValues },
    connectionValues: { ...preset?.connectionValues },
    ...(preset?.identity ? { identity: preset.identity } : {}),
  };
}

/** `{{credential.X}}` only in auth, `{{connection.X}}` only of values that are not secret. */
function checkTemplates(config: AppConfig, where: string, problems: string[]): void {
  const auth = config.auth!;
  const connectionNames = new Set(config.parameters.filter((p) => !p.secret).map((p) => p.name));
  const credentialNames = new Set(config.parameters.map((p) => p.name));
  if (auth.kind === 'oauth2') {
    for (const name of [
      ...Object.keys(auth.tokenValues),
      ...Object.keys(auth.callbackValues),
      ...Object.keys(auth.connectionValues),
      ...Object.keys(auth.identity?.values ?? {}),
    ])
      connectionNames.add(name);
    credentialNames.add('accessToken');
  }
  const check = (text: string, field: string, allowCredential: boolean) => {
    for (const ref of templateRefs(text)) {
      const [source, name = ''] = ref.split('.', 2) as [string, string?];
      if (source === 'credential' && allowCredential && credentialNames.has(name)) continue;
      if (source === 'connection' && connectionNames.has(name)) continue;
      problems.push(
        source === 'credential' && !allowCredential
          ? `${where}.${field}: {{${ref}}} may appear only in auth`
          : source === 'connection' && credentialNames.has(name)
            ? `${where}.${field}: {{${ref}}} is a secret parameter; secrets go only into auth, as {{credential.${name}}}`
            : `${where}.${field}: {{${ref}}} names no ${source === 'credential' ? 'required parameter' : 'connection value'} of this integration`,
      );
    }
  };
  if (config.baseUrl) {
    check(config.baseUrl, 'api.baseUrl', false);
    const leading = /^\{\{\s*connection\.([\w-]+)\s*\}\}/.exec(config.baseUrl);
    // A user's value could name any host: only a value the provider gives may stand for the origin.
    if (leading && !(auth.kind === 'oauth2' && leading[1]! in auth.tokenValues))
      problems.push(`${where}.api.baseUrl: must start with https:// and a fixed host suffix, not a user's value`);
    else if (!leading && !/^https?:\/\/[^/]*[^/}]\//.test(`${config.baseUrl}/`))
      problems.push(`${where}.api.baseUrl: must be an http(s) URL whose host ends in a fixed suffix`);
  }
  if (auth.kind === 'oauth2') {
    for (const field of ['authorizationUrl', 'tokenUrl', 'revocationUrl'] as const)
      if (auth[field]) check(auth[field], `auth.${field}`, false);
    if (auth.header) check(auth.header.value, 'auth.header.value', true);
  } else if (auth.kind === 'apiKey') {
    const placed = auth.header ?? auth.query;
    if (placed) check(placed.value, `auth.${auth.header ? 'header' : 'query'}.value`, true);
  } else {
    check(auth.username, 'auth.username', true);
    check(auth.password, 'auth.password', true);
  }
  if (auth.kind !== 'oauth2' && auth.verify && !config.baseUrl)
    problems.push(`${where}.auth.verify: needs api.baseUrl, which its path is appended to`);
}

function ajvProblems(at: string, errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => {
    const field = e.instancePath.replace(/^\//, '').replaceAll('/', '.');
    const path = field ? `${at}.${field}` : at;
    if (e.keyword === 'additionalProperties')
      return `${path}: unknown field "${(e.params as { additionalProperty: string }).additionalProperty}"`;
    if (e.keyword === 'required')
      return `${path}.${(e.params as { missingProperty: string }).missingProperty}: required`;
    return `${path}: ${e.message}`;
  });
}
