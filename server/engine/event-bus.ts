import type { ErrorLogEntry } from 'forge-embed/client';
import type { AccessKeys, EventBusConfig } from './host-settings.js';

/**
 * The event-bus connector: each error log entry becomes one EventBridge event, sent with the
 * AWS SDK's EventBridge client. The SDK is an optional dependency (only this connector uses
 * it), loaded on first use.
 */

/** The event's `source` and `detail-type`; `detail` is the error log entry itself. */
export const EVENT_SOURCE = 'forge.workflows';
export const EVENT_DETAIL_TYPE = 'Workflow Execution Failed';
export const DEFAULT_REGION = 'us-east-1';

type EventBridgeModule = typeof import('@aws-sdk/client-eventbridge');
let loading: Promise<EventBridgeModule> | undefined;

export function loadEventBridge(): Promise<EventBridgeModule> {
  loading ??= import('@aws-sdk/client-eventbridge').catch((error: Error) => {
    loading = undefined;
    throw new Error(
      `The event-bus connector needs the @aws-sdk/client-eventbridge package, which did not load (${error.message}). Run "npm install @aws-sdk/client-eventbridge" and restart the service.`,
    );
  });
  return loading;
}

export async function sendToEventBus(
  bus: EventBusConfig,
  keys: AccessKeys,
  entry: ErrorLogEntry,
  signal: AbortSignal,
): Promise<void> {
  const { EventBridgeClient, PutEventsCommand } = await loadEventBridge();
  const client = new EventBridgeClient({
    region: bus.region ?? DEFAULT_REGION,
    ...(bus.endpoint ? { endpoint: bus.endpoint } : {}),
    credentials: keys,
    // The outbox retries with its own backoff, and across restarts; the SDK's retries would
    // only hold up the other deliveries.
    maxAttempts: 1,
  });
  try {
    const output = await client.send(
      new PutEventsCommand({
        Entries: [
          {
            Source: EVENT_SOURCE,
            DetailType: EVENT_DETAIL_TYPE,
            Detail: JSON.stringify(entry),
            EventBusName: bus.busName!,
            Time: new Date(entry.createdAt),
          },
        ],
      }),
      { abortSignal: signal },
    );
    if (output.FailedEntryCount) {
      const failed = output.Entries?.[0];
      throw new Error(`the bus refused the event (${failed?.ErrorCode ?? 'no code'}: ${failed?.ErrorMessage ?? ''})`);
    }
  } finally {
    client.destroy();
  }
}
