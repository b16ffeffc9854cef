import { createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { ErrorLogEntry } from 'forge-embed/client';
import { type Clock, shiftOf, systemClock } from '../clock.js';
import { type Logger, silentLogger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { SecretBox } from '../secrets.js';
import type { PendingDelivery, Store, StoreTransaction } from '../store/store.js';
import { type Tracing, traced } from '../trace.js';
import { sendToEventBus } from './event-bus.js';
import { type AccessKeys, activeChannels, errorWebhookSigningSecrets, loadHostSettings } from './host-settings.js';
import { privateTargetReason, publicOnlyLookup } from './public-address.js';

/**
 * Delivers error log entries to the host: a POST of the entry to the error webhook URL, and an
 * event on the event bus. Each entry waits in the outbox table (one row per channel) until its
 * channel accepted it, so a receiver that is down gets everything once it is back, also after a
 * restart of the service. Failed attempts are retried with exponential backoff. An instance
 * leases a delivery in the database before attempting it, so of several instances one attempts
 * it at a time; an instance that dies mid-attempt leaves it to another once the lease runs out.
 * A receiver that answered 2xx is not sent that entry again (a lost answer, or an instance killed
 * between the receiver's 2xx and the outbox update, does mean a resend: dedupe on `_id`).
 */

export interface DeliveryOptions {
  store: Store;
  secrets: SecretBox;
  /** Milliseconds before retry number `attempt` (1 after the first failure). */
  backoff?: (attempt: number) => number;
  /** How long one attempt may take. Default 10 s. */
  timeoutMs?: number;
  /** Attempts per delivery before it becomes a dead letter. Default DEFAULT_DELIVERY_ATTEMPTS. */
  maxAttempts?: number;
  /** Deliver to loopback and private addresses too (`allowPrivateWebhooks`). */
  allowPrivateTargets?: boolean;
  /** This process among the instances that share the database; leases name it. */
  instanceId: string;
  /**
   * What "now" is for the signing secrets; due times and leases follow the database's clock,
   * moved by how far this one is from the system's (server/clock.ts `shiftOf`). Default: the system clock.
   */
  clock?: Clock;
  /** The service log (server/log.ts); default none. */
  logger?: Logger;
  /** Counts attempts by outcome (server/metrics.ts); default none. */
  metrics?: Metrics;
  /** A span for each attempt, and `traceparent` on the webhook's POST (server/trace.ts); default none. */
  tracing?: Tracing;
}

/** 1 s, 2 s, 4 s, … up to 10 minutes between attempts. */
export const defaultBackoff = (attempt: number) => Math.min(1000 * 2 ** (attempt - 1), 10 * 60 * 1000);

/** With the default backoff, 20 attempts span about 1 hour 47 minutes before a delivery is a dead letter. */
export const DEFAULT_DELIVERY_ATTEMPTS = 20;

/** How long deliveries wait before looking again when the database did not answer. */
const STORE_RETRY_MS = 5_000;
/**
 * How much longer than an attempt's timeout a lease lasts: the margin covers the database
 * writes around the attempt, so a live instance's lease never runs out under it.
 */
const LEASE_MARGIN_MS = 20_000;

export class Delivery {
  private readonly store: Store;
  private readonly secrets: SecretBox;
  private readonly backoff: (attempt: number) => number;
  private readonly timeoutMs: number;
  private readonly maxAttempts: number;
  private readonly allowPrivateTargets: boolean;
  private readonly logger: Logger;
  private readonly metrics: Metrics | undefined;
  private readonly tracing: Tracing | undefined;
  private readonly instanceId: string;
  private readonly clock: Clock;
  private stopWatchingClock: () => void = () => {};
  private readonly shutdown = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> | undefined;
  private passAgain = false;

  constructor(options: DeliveryOptions) {
    this.store = options.store;
    this.secrets = options.secrets;
    this.backoff = options.backoff ?? defaultBackoff;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.maxAttempts = options.maxAttempts ?? DEFAULT_DELIVERY_ATTEMPTS;
    this.allowPrivateTargets = options.allowPrivateTargets ?? false;
    this.logger = options.logger ?? silentLogger;
    this.metrics = options.metrics;
    this.tracing = options.tracing;
    this.instanceId = options.instanceId;
    this.clock = options.clock ?? systemClock;
  }

  /**
   * Puts an entry in the outbox of every channel that is on. Call it inside the transaction
   * that stores the entry, so the two are saved together or not at all; then `kick()`.
   */
  async enqueue(entry: ErrorLogEntry, tx: StoreTransaction): Promise<void> {
    for (const channel of activeChannels(await loadHostSettings(tx))) {
      await tx.deliveries.enqueue(entry._id, channel, shiftOf(this.clock));
    }
  }

  /** Starts delivering, beginning with whatever waited from before a restart, without waiting out its backoff. */
  async start(): Promise<void> {
    await this.store.deliveries.retryNow(shiftOf(this.clock));
    this.stopWatchingClock = this.clock.onJump(() => this.kick());
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
    let storeFailed = false;
    const paused = (error: unknown) => {
      storeFailed = true;
      this.logger.warn(
        { err: error },
        `deliveries paused: the database did not answer; trying again in ${STORE_RETRY_MS} ms`,
      );
    };
    this.pass = this.deliverDue()
      .catch(paused)
      .finally(() => {
        this.pass = undefined;
        // Nothing is lost while the database is away: the outbox is in it, so wait and look again.
        if (storeFailed) return this.wakeIn(STORE_RETRY_MS);
        this.scheduleNext().catch((error) => {
          paused(error);
          this.wakeIn(STORE_RETRY_MS);
        });
      });
  }

  /** Stops the timer and cuts short an attempt in flight; its entry stays in the outbox. */
  async stop(): Promise<void> {
    this.shutdown.abort();
    this.stopWatchingClock();
    clearTimeout(this.timer);
    await this.pass;
  }

  private async scheduleNext(): Promise<void> {
    if (this.shutdown.signal.aborted) return;
    const wait = await this.store.deliveries.msUntilNext(shiftOf(this.clock));
    if (wait !== undefined) this.wakeIn(wait);
  }

  private wakeIn(ms: number): void {
    if (this.shutdown.signal.aborted) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.kick(), Math.max(0, ms));
    this.timer.unref();
  }

  /**
   * Attempts what is due, one delivery at a time, each leased just before its attempt, so that
   * no entry waits under this instance's lease while others are attempted.
   */
  private async deliverDue(): Promise<void> {
    do {
      this.passAgain = false;
      while (!this.shutdown.signal.aborted) {
        const next = await this.store.deliveries.leaseNext(
          this.instanceId,
          this.timeoutMs + LEASE_MARGIN_MS,
          shiftOf(this.clock),
        );
        if (!next) break;
        await this.attempt(next);
      }
    } while (this.passAgain && !this.shutdown.signal.aborted);
  }

  private async attempt({ channel, attempts, entry }: PendingDelivery): Promise<void> {
    const settings = await loadHostSettings(this.store);
    const signal = AbortSignal.any([this.shutdown.signal, AbortSignal.timeout(this.timeoutMs)]);
    try {
      const attributes = {
        'forge.channel': channel,
        'forge.error_id': entry._id,
        'forge.execution_id': entry.executionId,
      };
      await traced(this.tracing, `deliver to ${channel}`, { kind: 'client', attributes }, async () => {
        if (channel === 'webhook' && settings.errorWebhookUrl) {
          const traceHeaders: Record<string, string> = {};
          this.tracing?.inject({ set: (name, value) => (traceHeaders[name] = value) });
          await postEntry(settings.errorWebhookUrl, entry, {
            signingSecrets: await errorWebhookSigningSecrets(this.store, this.secrets, this.clock.now()),
            allowPrivateTargets: this.allowPrivateTargets,
            signal,
            traceHeaders,
          });
        } else if (channel === 'eventBus' && settings.eventBus.enabled && settings.eventBus.sealedKeys) {
          const keys = this.secrets.open<AccessKeys>(settings.eventBus.sealedKeys);
          await sendToEventBus(settings.eventBus, keys, entry, signal, {
            allowPrivateTargets: this.allowPrivateTargets,
          });
        }
      });
      // Delivered, or its channel was switched off since: either way it leaves the outbox.
      if (!(await this.store.deliveries.finish(entry._id, channel, this.instanceId)))
        return this.leaseLost(entry, channel);
      this.metrics?.deliveries.inc({ channel, outcome: 'delivered' });
    } catch (error) {
      // Stopping: the entry stays in the outbox, free for any instance at once.
      if (this.shutdown.signal.aborted) return this.store.deliveries.release(entry._id, channel, this.instanceId);
      const reason = describe(error, this.timeoutMs, signal);
      const failed = { attempts: attempts + 1, lastError: reason, shiftMs: shiftOf(this.clock) };
      const ids = { errorId: entry._id, executionId: entry.executionId, channel, reason };
      if (failed.attempts >= this.maxAttempts) {
        if (!(await this.store.deliveries.deadLetter(entry._id, channel, this.instanceId, failed)))
          return this.leaseLost(entry, channel);
        this.metrics?.deliveries.inc({ channel, outcome: 'dead-lettered' });
        this.logger.error(
          { ...ids, attempts: failed.attempts },
          `delivery of an error entry to the ${channel} failed (${reason}) at its last allowed attempt (${failed.attempts}): it is a dead letter now; list it with GET /deadLetters and send it again with POST /deadLetters/resend`,
        );
        return;
      }
      const retryInMs = this.backoff(failed.attempts);
      if (!(await this.store.deliveries.postpone(entry._id, channel, this.instanceId, { ...failed, retryInMs })))
        return this.leaseLost(entry, channel);
      this.metrics?.deliveries.inc({ channel, outcome: 'failed' });
      this.logger.warn(
        { ...ids, retryInMs },
        `delivery of an error entry to the ${channel} failed (${reason}); retry in ${retryInMs} ms`,
      );
    }
  }

  /**
   * This instance no longer holds the delivery: its attempt outlived the lease and another
   * instance took it (whose outcome counts; the receiver may get the entry twice: dedupe on
   * `_id`), or the entry left the outbox meanwhile (its channel switched off, its user deleted).
   */
  private leaseLost(entry: ErrorLogEntry, channel: string): void {
    this.metrics?.deliveries.inc({ channel, outcome: 'lease-lost' });
    this.logger.warn(
      { errorId: entry._id, executionId: entry.executionId, channel },
      `a delivery to the ${channel} is no longer this instance's (its lease ran out and another instance took it, or the entry was dropped); this attempt's outcome is not recorded`,
    );
  }
}

/**
 * POSTs an entry, signed: `Forge-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`,
 * with one `v1` per signing secret (two during a rotation's grace period, the new one first).
 * Redirects are not followed (a 307 would re-POST anywhere) and nothing of the answer but its
 * status is kept, so the error webhook cannot be turned into a way to read other services.
 */
async function postEntry(
  target: string,
  entry: ErrorLogEntry,
  {
    signingSecrets,
    allowPrivateTargets,
    signal,
    traceHeaders,
  }: {
    signingSecrets: string[];
    allowPrivateTargets: boolean;
    signal: AbortSignal;
    traceHeaders: Record<string, string>;
  },
): Promise<void> {
  const url = new URL(target);
  const refused = allowPrivateTargets ? undefined : privateTargetReason(url);
  if (refused) throw new Error(`refused to deliver to ${url.host}: ${refused}`);
  const body = JSON.stringify(entry);
  const timestamp = Math.floor(Date.now() / 1000);
  const signatures = signingSecrets.map(
    (secret) => `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`,
  );
  const status = await new Promise<number>((resolve, reject) => {
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      url,
      {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
          'User-Agent': 'forge-local-service',
          'Forge-Signature': [`t=${timestamp}`, ...signatures].join(','),
          ...traceHeaders,
        },
        signal,
        ...(allowPrivateTargets ? {} : { lookup: publicOnlyLookup }),
      },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
  if (status < 200 || status > 299)
    throw new Error(`the error webhook ${url.origin}${url.pathname} answered ${status}`);
}

function describe(error: unknown, timeoutMs: number, signal: AbortSignal): string {
  const e = error as NodeJS.ErrnoException;
  if ((signal.reason as Error | undefined)?.name === 'TimeoutError') return `no answer within ${timeoutMs / 1000} s`;
  if (e.code === 'EPRIVATE')
    return `refused: ${e.message}; start the service with --allow-private-webhooks to allow it`;
  if (e.code) return `could not connect (${e.code})`;
  return e.message;
}
