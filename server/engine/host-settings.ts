import { randomBytes } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import type { FieldError } from 'forge-embed/client';
import { InvalidInputError } from '../errors.js';
import type { HostSettingsUpdateSchema } from '../schemas.js';
import type { SecretBox } from '../secrets.js';
import type { Store } from '../store/store.js';
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

/** A `PUT /settings` body, whose shape the route's schema has already checked. */
export type HostSettingsUpdate = Static<typeof HostSettingsUpdateSchema>;

/**
 * Applies a `PUT /settings` body: fields left out keep their value, `null` clears one. Answers
 * the new settings, the channels switched off (whose waiting deliveries go) and the channels
 * whose target changed (whose waiting deliveries are tried again at once). Only the rules the
 * schema cannot say are checked here: the address rule, keys given together, and what
 * switching the bus on needs.
 */
export function applyHostSettingsUpdate(
  current: StoredHostSettings,
  request: HostSettingsUpdate,
  secrets: SecretBox,
  { allowPrivateTargets = false }: { allowPrivateTargets?: boolean } = {},
): { next: StoredHostSettings; switchedOff: Channel[]; retarget: Channel[] } {
  const errors: FieldError[] = [];
  const next: StoredHostSettings = structuredClone(current);
  // Both channels send to where the host says, so both follow the same address rule.
  const target = (value: string | null, path: string, kept: string | null): string | null => {
    if (!value) return null;
    const field = path.slice(path.lastIndexOf('.') + 1);
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      errors.push({ path, message: `${field} must be an http:// or https:// URL, or null (or "") to remove it.` });
      return kept;
    }
    const refused = !allowPrivateTargets && privateTargetReason(url);
    if (!refused) return url.toString();
    errors.push({
      path,
      message: `${field} must be a public address: ${refused}. To deliver inside your own network, start the service with --allow-private-webhooks.`,
    });
    return kept;
  };
  if (request.errorWebhookUrl !== undefined) {
    next.errorWebhookUrl = target(request.errorWebhookUrl, 'body.errorWebhookUrl', current.errorWebhookUrl);
  }
  const bus = request.eventBus;
  if (bus) {
    if (bus.enabled !== undefined) next.eventBus.enabled = bus.enabled;
    if (bus.busName !== undefined) next.eventBus.busName = bus.busName;
    if (bus.region !== undefined) next.eventBus.region = bus.region;
    if (bus.endpoint !== undefined) {
      next.eventBus.endpoint = target(bus.endpoint, 'body.eventBus.endpoint', next.eventBus.endpoint);
    }
    const { accessKeyId: id, secretAccessKey: secret } = bus;
    if (id === null && secret === null) {
      next.eventBus.sealedKeys = null;
    } else if (id?.trim() && secret?.trim()) {
      next.eventBus.sealedKeys = secrets.seal({
        accessKeyId: id.trim(),
        secretAccessKey: secret.trim(),
      } satisfies AccessKeys);
    } else if (id !== undefined || secret !== undefined) {
      errors.push({
        path: 'body.eventBus.accessKeyId',
        message:
          'Give accessKeyId and secretAccessKey together, as non-empty strings (or both null to remove the keys).',
      });
    }
  }
  if (errors.length > 0) throw new InvalidInputError(errors.map((e) => `${e.path}: ${e.message}`).join(' '), errors);
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
