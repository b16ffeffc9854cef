import type { ErrorLogEntry } from 'forge-embed/client';
import type { SecretBox } from '../secrets.js';
import type { PendingDelivery, Store } from '../store/store.js';
import { sendToEventBus } from './event-bus.js';
import { type AccessKeys, activeChannels, loadHostSettings } from './host-settings.js';

/**
 * Delivers error log entries to the host: a POST of the entry to the error webhook URL, and an
 * event on the event bus. Each entry waits in the outbox table (one row per channel) until its
 * channel accepted it, so a receiver that is down gets everything once it is back, also after a
 * restart of the service. Failed attempts are retried with exponential backoff. Attempts run
 * one at a time, so an entry is never sent twice at once; a receiver that answered 2xx is not
 * sent that entry again (a lost answer does mean a resend: dedupe on `_id` if that matters).
 */

export interface DeliveryOptions {
  store: Store;
  secrets: SecretBox;
  /** Milliseconds before retry number `attempt` (1 after the first failure). */
  backoff?: (attempt: number) => number;
  /** How long one attempt may take. Default 10 s. */
  timeoutMs?: number;
  log?: (line: string) => void;
}

/** 1 s, 2 s, 4 s, … up to 10 minutes between attempts. */
export const defaultBackoff = (attempt: number) => Math.min(1000 * 2 ** (attempt - 1), 10 * 60 * 1000);

/** Rows read from the outbox per query. */
const BATCH = 50;

export class Delivery {
  private readonly store: Store;
  private readonly secrets: SecretBox;
  private readonly backoff: (attempt: number) => number;
  private readonly timeoutMs: number;
  private readonly log: (line: string) => void;
  private readonly shutdown = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> | undefined;
  private passAgain = false;

  constructor(options: DeliveryOptions) {
    this.store = options.store;
    this.secrets = options.secrets;
    this.backoff = options.backoff ?? defaultBackoff;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.log = options.log ?? (() => {});
  }

  /**
   * Puts an entry in the outbox of every channel that is on. Call it inside the transaction
   * that stores the entry, so the two are saved together or not at all; then `kick()`.
   */
  enqueue(entry: ErrorLogEntry): void {
    for (const channel of activeChannels(loadHostSettings(this.store))) {
      this.store.enqueueDelivery(entry._id, channel, Date.now());
    }
  }

  /** Starts delivering, beginning with whatever waited from before a restart, without waiting out its backoff. */
  start(): void {
    this.store.retryDeliveriesNow();
    this.kick();
  }

  /** Delivers what is due now. */
  kick(): void {
    if (this.shutdown.signal.aborted) return;
    if (this.pass) {
      this.passAgain = true;
      return;
    }
    clearTimeout(this.timer);
    this.pass = this.deliverDue().finally(() => {
      this.pass = undefined;
      this.scheduleNext();
    });
  }

  /** Stops the timer and cuts short an attempt in flight; its entry stays in the outbox. */
  async stop(): Promise<void> {
    this.shutdown.abort();
    clearTimeout(this.timer);
    await this.pass;
  }

  private scheduleNext(): void {
    if (this.shutdown.signal.aborted) return;
    const next = this.store.nextDeliveryDueAt();
    if (next === undefined) return;
    this.timer = setTimeout(() => this.kick(), Math.max(0, next - Date.now()));
    this.timer.unref();
  }

  private async deliverDue(): Promise<void> {
    do {
      this.passAgain = false;
      const due = this.store.dueDeliveries(Date.now(), BATCH);
      for (const delivery of due) {
        if (this.shutdown.signal.aborted) return;
        await this.attempt(delivery);
      }
      if (due.length === BATCH) this.passAgain = true;
    } while (this.passAgain && !this.shutdown.signal.aborted);
  }

  private async attempt({ channel, attempts, entry }: PendingDelivery): Promise<void> {
    const settings = loadHostSettings(this.store);
    const signal = AbortSignal.any([this.shutdown.signal, AbortSignal.timeout(this.timeoutMs)]);
    try {
      if (channel === 'webhook' && settings.errorWebhookUrl) {
        await postEntry(settings.errorWebhookUrl, entry, signal);
      } else if (channel === 'eventBus' && settings.eventBus.enabled && settings.eventBus.sealedKeys) {
        const keys = this.secrets.open<AccessKeys>(settings.eventBus.sealedKeys);
        await sendToEventBus(settings.eventBus, keys, entry, signal);
      }
      // Delivered, or its channel was switched off since: either way it leaves the outbox.
      this.store.finishDelivery(entry._id, channel);
    } catch (error) {
      if (this.shutdown.signal.aborted) return;
      const reason = describe(error, this.timeoutMs);
      const retryIn = this.backoff(attempts + 1);
      this.store.postponeDelivery(entry._id, channel, attempts + 1, Date.now() + retryIn, reason);
      this.log(`delivery of error ${entry._id} to the ${channel} failed (${reason}); retry in ${retryIn} ms`);
    }
  }
}

async function postEntry(url: string, entry: ErrorLogEntry, signal: AbortSignal): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'User-Agent': 'forge-local-service' },
    body: JSON.stringify(entry),
    signal,
  });
  await response.body?.cancel();
  if (!response.ok) throw new Error(`the error webhook ${url} answered ${response.status} ${response.statusText}`);
}

function describe(error: unknown, timeoutMs: number): string {
  const e = error as Error & { cause?: { code?: string } };
  if (e.name === 'TimeoutError') return `no answer within ${timeoutMs / 1000} s`;
  if (e.message === 'fetch failed') return `could not connect (${e.cause?.code ?? 'network error'})`;
  return e.message;
}
