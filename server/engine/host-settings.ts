import { randomBytes } from 'node:crypto';
import { InvalidInputError } from '../errors.js';
import type { SecretBox } from '../secrets.js';
import type { Store } from '../store/store.js';
import { bodyObject, FieldChecker, isPlainObject } from '../validate.js';
import { privateTargetReason } from './public-address.js';

/**
 * Where the host wants failed executions delivered: an error webhook URL and an event bus
 * (EventBridge). Stored as one settings row; the bus's access keys are sealed with the
 * service's SecretBox and never leave it except to sign requests to the bus.
 */

/** The delivery channels, as the outbox names them. */
export const CHANNELS = ['webhook', 'eventBus'] as const;
export type Channel = (typeof CHANNELS)[number];

export interface EventBusConfig {
  enabled: boolean;
  busName: string | null;
  region: string | null;
  endpoint: string | null;
  /** `{accessKeyId, secretAccessKey}`, sealed. */
  sealedKeys: string | null;
}

export interface StoredHostSettings {
  errorWebhookUrl: string | null;
  eventBus: EventBusConfig;
}

export interface AccessKeys {
  accessKeyId: string;
  secretAccessKey: string;
}

const SETTINGS_KEY = 'hostSettings';

const DEFAULTS: StoredHostSettings = {
  errorWebhookUrl: null,
  eventBus: { enabled: false, busName: null, region: null, endpoint: null, sealedKeys: null },
};

export async function loadHostSettings(store: Store): Promise<StoredHostSettings> {
  const raw = await store.settings.get(SETTINGS_KEY);
  if (!raw) return structuredClone(DEFAULTS);
  const parsed = JSON.parse(raw) as StoredHostSettings;
  return { ...DEFAULTS, ...parsed, eventBus: { ...DEFAULTS.eventBus, ...parsed.eventBus } };
}

/** The channels that take a new error log entry now. */
export function activeChannels(settings: StoredHostSettings): Channel[] {
  const channels: Channel[] = [];
  if (settings.errorWebhookUrl) channels.push('webhook');
  if (settings.eventBus.enabled) channels.push('eventBus');
  return channels;
}

/**
 * The secret that signs error deliveries (`Forge-Signature`), made on first use and kept sealed.
 * The host reads it with the API key (GET /settings) to verify that a delivery is the service's.
 */
export async function errorWebhookSecret(store: Store, secrets: SecretBox): Promise<string> {
  const sealed =
    (await store.settings.get('errorWebhookSecret')) ??
    (await store.settings.add('errorWebhookSecret', secrets.seal(newWebhookSecret())));
  return secrets.open<string>(sealed);
}

const newWebhookSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;

/** How long the secret before a rotation still signs deliveries beside the new one, by default. */
export const DEFAULT_WEBHOOK_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;

/** The previous secret and until when (ms since the epoch) it still signs, sealed together. */
interface RetiredSecret {
  secret: string;
  until: number;
}

/**
 * The secrets that sign a delivery at `now`: the current one first, then the one before the
 * last rotation while its grace period lasts, so a receiver that still checks with the old
 * secret keeps accepting deliveries until it has switched.
 */
export async function errorWebhookSigningSecrets(store: Store, secrets: SecretBox, now: number): Promise<string[]> {
  const current = await errorWebhookSecret(store, secrets);
  const sealed = await store.settings.get('previousErrorWebhookSecret');
  const previous = sealed ? secrets.open<RetiredSecret>(sealed) : undefined;
  return previous && previous.until > now ? [current, previous.secret] : [current];
}

/**
 * Makes a new signing secret; the one it replaces keeps signing beside it for `graceMs` (a
 * rotation inside the grace period of another ends that one: only two secrets sign at a time).
 */
export async function rotateErrorWebhookSecret(
  store: Store,
  secrets: SecretBox,
  now: number,
  graceMs: number,
): Promise<{ errorWebhookSecret: string; previousSecretValidUntil: string }> {
  const secret = newWebhookSecret();
  const until = now + graceMs;
  await store.transaction(async (tx) => {
    const current = await errorWebhookSecret(tx, secrets);
    await tx.settings.set(
      'previousErrorWebhookSecret',
      secrets.seal({ secret: current, until } satisfies RetiredSecret),
    );
    await tx.settings.set('errorWebhookSecret', secrets.seal(secret));
  });
  return { errorWebhookSecret: secret, previousSecretValidUntil: new Date(until).toISOString() };
}

const EXAMPLE =
  '{"errorWebhookUrl": "https://example.com/forge-errors", "eventBus": {"enabled": true, "busName": "default", "region": "eu-west-1", "accessKeyId": "…", "secretAccessKey": "…"}}';
const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;
const BUS_NAME = /^([\w.\-/]{1,256}|arn:[\w.\-:/]{1,1600})$/;

/**
 * Applies a `PUT /settings` body: fields left out keep their value, `null` clears one. Answers
 * the new settings, the channels switched off (whose waiting deliveries go) and the channels
 * whose target changed (whose waiting deliveries are tried again at once).
 */
export function applyHostSettingsUpdate(
  current: StoredHostSettings,
  body: unknown,
  secrets: SecretBox,
  { allowPrivateTargets = false }: { allowPrivateTargets?: boolean } = {},
): { next: StoredHostSettings; switchedOff: Channel[]; retarget: Channel[] } {
  const request = bodyObject(body, EXAMPLE);
  const fields = new FieldChecker(request);
  fields.onlyKnown(['errorWebhookUrl', 'eventBus']);
  const next: StoredHostSettings = structuredClone(current);
  // Both channels send to where the host says, so both follow the same address rule.
  const target = (value: unknown, path: string, kept: string | null): string | null => {
    const url = httpUrl(value, path, fields);
    const refused = url && !allowPrivateTargets && privateTargetReason(new URL(url));
    if (!refused) return url;
    fields.add(
      path,
      `Must be a public address: ${refused}. To deliver inside your own network, start the service with --allow-private-webhooks.`,
    );
    return kept;
  };
  if (request.errorWebhookUrl !== undefined) {
    next.errorWebhookUrl = target(request.errorWebhookUrl, 'body.errorWebhookUrl', current.errorWebhookUrl);
  }
  if (request.eventBus !== undefined) {
    if (!isPlainObject(request.eventBus)) fields.add('body.eventBus', 'Must be an object.');
    else applyEventBus(next.eventBus, request.eventBus, fields, secrets, target);
  }
  fields.done();
  if (next.eventBus.enabled) {
    const missing = [
      ...(next.eventBus.busName ? [] : ['busName']),
      ...(next.eventBus.sealedKeys ? [] : ['accessKeyId and secretAccessKey']),
    ];
    if (missing.length > 0) {
      throw new InvalidInputError(`To switch the event bus on, give its ${missing.join(' and ')} too.`, [
        { path: 'body.eventBus.enabled', message: `Needs ${missing.join(' and ')}.` },
      ]);
    }
  }
  const switchedOff: Channel[] = [];
  if (current.errorWebhookUrl && !next.errorWebhookUrl) switchedOff.push('webhook');
  if (current.eventBus.enabled && !next.eventBus.enabled) switchedOff.push('eventBus');
  const retarget: Channel[] = [];
  if (next.errorWebhookUrl && next.errorWebhookUrl !== current.errorWebhookUrl) retarget.push('webhook');
  if (next.eventBus.enabled && JSON.stringify(next.eventBus) !== JSON.stringify(current.eventBus)) {
    retarget.push('eventBus');
  }
  return { next, switchedOff, retarget };
}

export async function saveHostSettings(store: Store, settings: StoredHostSettings): Promise<void> {
  await store.settings.set(SETTINGS_KEY, JSON.stringify(settings));
}

function applyEventBus(
  bus: EventBusConfig,
  update: Record<string, unknown>,
  fields: FieldChecker,
  secrets: SecretBox,
  target: (value: unknown, path: string, kept: string | null) => string | null,
): void {
  const at = (key: string) => `body.eventBus.${key}`;
  const known = ['enabled', 'busName', 'region', 'endpoint', 'accessKeyId', 'secretAccessKey'];
  for (const key of Object.keys(update)) {
    if (!known.includes(key)) fields.add(at(key), `Unknown field; expected only ${known.join(', ')}.`);
  }
  if (update.enabled !== undefined) {
    if (typeof update.enabled !== 'boolean') fields.add(at('enabled'), 'Must be true or false.');
    else bus.enabled = update.enabled;
  }
  if (update.busName !== undefined) {
    if (update.busName !== null && (typeof update.busName !== 'string' || !BUS_NAME.test(update.busName))) {
      fields.add(at('busName'), 'Must be an event bus name (letters, digits, . - _ /) or ARN, or null.');
    } else bus.busName = update.busName;
  }
  if (update.region !== undefined) {
    if (update.region !== null && (typeof update.region !== 'string' || !REGION.test(update.region))) {
      fields.add(at('region'), 'Must be a region such as eu-west-1, or null for us-east-1.');
    } else bus.region = update.region;
  }
  if (update.endpoint !== undefined) bus.endpoint = target(update.endpoint, at('endpoint'), bus.endpoint);
  const { accessKeyId: id, secretAccessKey: secret } = update;
  if (id === undefined && secret === undefined) return;
  if (id === null && secret === null) {
    bus.sealedKeys = null;
  } else if (typeof id === 'string' && typeof secret === 'string' && id.trim() && secret.trim()) {
    if (id.length > 128 || secret.length > 256) fields.add(at('accessKeyId'), 'The access keys are too long.');
    else bus.sealedKeys = secrets.seal({ accessKeyId: id.trim(), secretAccessKey: secret.trim() } satisfies AccessKeys);
  } else {
    fields.add(
      at('accessKeyId'),
      'Give accessKeyId and secretAccessKey together, as non-empty strings (or both null to remove the keys).',
    );
  }
}

function httpUrl(value: unknown, path: string, fields: FieldChecker): string | null {
  if (value === null || value === '') return null;
  const problem = 'Must be an http:// or https:// URL, or null to remove it.';
  if (typeof value !== 'string' || value.length > 2000) {
    fields.add(path, problem);
    return null;
  }
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.toString();
  } catch {
    // Falls through to the field error.
  }
  fields.add(path, problem);
  return null;
}
