import { Type } from '@sinclair/typebox';
import { shiftOf } from '../clock.js';
import { loadEventBridge } from '../engine/event-bus.js';
import {
  applyHostSettingsUpdate,
  loadHostSettings,
  rotateErrorWebhookSecret,
  saveHostSettings,
} from '../engine/host-settings.js';
import { HttpProblem, notFound } from '../http.js';
import {
  DeadLetterSchema,
  DeadLettersQuery,
  HostSettingsSchema,
  HostSettingsUpdateSchema,
  ResendBody,
} from '../schemas.js';
import { hostSettingsView } from '../views.js';
import type { RoutePlugin } from './context.js';

/** The host's settings for failed executions: the error webhook URL and the event bus (API key only). */
const settings: RoutePlugin = async (
  api,
  { store, secrets, allowPrivateWebhooks, delivery, clock, webhookSecretGraceMs },
) => {
  api.get(
    '/settings',
    {
      config: { access: 'apiKey' },
      schema: { summary: 'Read the host settings', tags: ['settings'], response: { 200: HostSettingsSchema } },
    },
    async () => hostSettingsView(await loadHostSettings(store), store, secrets),
  );

  api.put(
    '/settings',
    {
      config: { access: 'apiKey' },
      schema: {
        summary: 'Change the host settings',
        tags: ['settings'],
        body: HostSettingsUpdateSchema,
        response: { 200: HostSettingsSchema },
      },
    },
    async (request) => {
      const current = await loadHostSettings(store);
      const { next, switchedOff, retarget } = applyHostSettingsUpdate(current, request.body, secrets, {
        allowPrivateTargets: allowPrivateWebhooks,
      });
      if (next.eventBus.enabled && !current.eventBus.enabled) {
        try {
          await loadEventBridge();
        } catch (error) {
          throw new HttpProblem(503, 'connector-unavailable', 'Connector unavailable', (error as Error).message);
        }
      }
      await store.transaction(async (tx) => {
        await saveHostSettings(tx, next);
        // A channel switched off takes nothing more, including what was waiting for it.
        for (const channel of switchedOff) await tx.deliveries.drop(channel);
        for (const channel of retarget) await tx.deliveries.retryNow(shiftOf(clock), channel);
      });
      delivery.kick();
      return hostSettingsView(next, store, secrets);
    },
  );

  api.post(
    '/settings/rotateErrorWebhookSecret',
    {
      config: { access: 'apiKey' },
      schema: {
        summary: 'Rotate the secret that signs error deliveries',
        description:
          'Makes a new errorWebhookSecret and answers it. During the grace period (24 hours unless the service is configured otherwise) each delivery carries two signatures in one header, `Forge-Signature: t=<unix seconds>,v1=<hex, new secret>,v1=<hex, previous secret>`; a receiver accepts a delivery when any v1 matches the secret it knows, so it can switch to the new secret at any time within the period. After it, only the new secret signs.',
        tags: ['settings'],
        response: {
          200: Type.Object({
            errorWebhookSecret: Type.String({ description: 'The new secret; it signs every delivery from now on.' }),
            previousSecretValidUntil: Type.String({
              format: 'date-time',
              description: 'Until when the previous secret signs deliveries beside the new one.',
            }),
          }),
        },
      },
    },
    async () => rotateErrorWebhookSecret(store, secrets, clock.now(), webhookSecretGraceMs),
  );

  api.get(
    '/deadLetters',
    {
      config: { access: 'apiKey' },
      schema: {
        summary: 'List the error deliveries given up on',
        description:
          'An error delivery whose last allowed attempt failed (20 by default, over about 1 h 47 min) is a dead letter: no instance attempts it again until it is resent. Oldest first.',
        tags: ['settings'],
        querystring: DeadLettersQuery,
        response: { 200: Type.Object({ data: Type.Array(DeadLetterSchema) }) },
      },
    },
    async (request) => {
      const { channel, page, limit } = request.query;
      // A page past any row there could be is empty; SQLite's OFFSET refuses what is no 64-bit integer.
      const offset = (page - 1) * limit;
      if (!Number.isSafeInteger(offset)) return { data: [] };
      return { data: await store.deliveries.deadLetters({ channel, limit, offset }) };
    },
  );

  api.post(
    '/deadLetters/resend',
    {
      config: { access: 'apiKey' },
      schema: {
        summary: 'Send dead letters again',
        description:
          'Makes dead letters due again with a new count of attempts: those of `errorIds` (each must be a dead letter, of `channel` when given; otherwise nothing is resent and the answer is a 404 naming the others), or every one (of `channel`) when `errorIds` is left out.',
        tags: ['settings'],
        body: ResendBody,
        response: { 200: Type.Object({ resent: Type.Integer({ description: 'Dead letters made due again.' }) }) },
      },
    },
    async (request) => {
      const { errorIds, channel } = request.body ?? {};
      const outcome = await store.transaction((tx) =>
        tx.deliveries.resend({ errorIds, channel, shiftMs: shiftOf(clock) }),
      );
      if ('notDead' in outcome) {
        throw notFound(
          `No dead letter${channel ? ` for the ${channel}` : ''} has the errorIds ${outcome.notDead.join(', ')}; nothing was resent. GET /deadLetters lists them.`,
        );
      }
      delivery.kick();
      return outcome;
    },
  );
};

export default settings;
