import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { ErrorLogEntry } from 'forge-embed/client';
import type { AccessKeys, EventBusConfig } from './host-settings.js';
import { privateTargetReason, publicOnlyLookup } from './public-address.js';

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
  { allowPrivateTargets = false }: { allowPrivateTargets?: boolean } = {},
): Promise<void> {
  // The same rule as the error webhook's: a bus endpoint set before the rule held, or a name
  // that resolves to this machine's network, is refused rather than probed.
  const refused = bus.endpoint && !allowPrivateTargets ? privateTargetReason(new URL(bus.endpoint)) : undefined;
  if (refused) throw new Error(`refused to deliver to ${new URL(bus.endpoint!).host}: ${refused}`);
  const { EventBridgeClient, PutEventsCommand } = await loadEventBridge();
  const lookup = allowPrivateTargets ? {} : { lookup: publicOnlyLookup };
  const client = new EventBridgeClient({
    region: bus.region ?? DEFAULT_REGION,
    ...(bus.endpoint ? { endpoint: bus.endpoint } : {}),
    credentials: keys,
    // The outbox retries with its own backoff, and across restarts; the SDK's retries would
    // only hold up the other deliveries.
    maxAttempts: 1,
    requestHandler: { httpAgent: new HttpAgent(lookup), httpsAgent: new HttpsAgent(lookup) },
  });
  let failedEntries: number | undefined;
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
    failedEntries = output.FailedEntryCount;
  } catch (error) {
    // What the bus answered stays out of the message (shown in GET /settings as lastError): an
    // endpoint's answer is not the service's to pass on. Its status, or the connection's error
    // code, says enough to act on.
    const { $metadata, code } = error as { $metadata?: { httpStatusCode?: number }; code?: string };
    if ($metadata?.httpStatusCode !== undefined) throw new Error(`the event bus answered ${$metadata.httpStatusCode}`);
    if (code || signal.aborted) throw error;
    throw new Error('the event bus gave no answer the EventBridge client could read');
  } finally {
    client.destroy();
  }
  if (failedEntries) throw new Error('the event bus refused the event');
}
