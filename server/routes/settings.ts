import type { ServiceDeps } from '../app.js';
import type { Delivery } from '../engine/delivery.js';
import { loadEventBridge } from '../engine/event-bus.js';
import {
  applyHostSettingsUpdate,
  hostSettingsView,
  loadHostSettings,
  saveHostSettings,
} from '../engine/host-settings.js';
import { HttpProblem } from '../http.js';
import type { Router } from '../router.js';

/** The host's settings for failed executions: the error webhook URL and the event bus (API key only). */
export function registerSettings(
  router: Router,
  { store, secrets, allowPrivateWebhooks }: ServiceDeps,
  delivery: Delivery,
): void {
  router.add('GET', '/settings', 'apiKey', () => ({
    body: hostSettingsView(loadHostSettings(store), store, secrets),
  }));

  router.add('PUT', '/settings', 'apiKey', async ({ body }) => {
    const current = loadHostSettings(store);
    const { next, switchedOff, retarget } = applyHostSettingsUpdate(current, await body(), secrets, {
      allowPrivateTargets: allowPrivateWebhooks,
    });
    if (next.eventBus.enabled && !current.eventBus.enabled) {
      try {
        await loadEventBridge();
      } catch (error) {
        throw new HttpProblem(503, 'connector-unavailable', 'Connector unavailable', (error as Error).message);
      }
    }
    store.transaction(() => {
      saveHostSettings(store, next);
      // A channel switched off takes nothing more, including what was waiting for it.
      for (const channel of switchedOff) store.dropDeliveries(channel);
      for (const channel of retarget) store.retryDeliveriesNow(channel);
    });
    delivery.kick();
    return { body: hostSettingsView(next, store, secrets) };
  });
}
