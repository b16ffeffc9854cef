import type { ErrorLogEntry } from 'forge-embed/client';
import { type ExpressionBuilder, sql } from 'kysely';
import type { Connection, Handle } from './connection.js';
import { ERROR_COLUMNS, toErrorEntry } from './logs.js';
import type { Tables } from './schema.js';

export interface PendingDelivery {
  channel: string;
  /** Failed attempts so far. */
  attempts: number;
  entry: ErrorLogEntry;
}

/**
 * The outbox of error deliveries, shared out among instances through the database: each
 * delivery is leased to one instance at a time (docs/design-notes.md).
 */
export class DeliveryRepository {
  constructor(private readonly connection: Connection) {}

  /** Puts an error log entry in the outbox of a delivery channel (once per entry and channel). */
  async enqueue(errorId: string, channel: string, dueAt: number): Promise<void> {
    await this.connection.db
      .insertInto('deliveries')
      .values({ error_id: errorId, channel, due_at: dueAt })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  /**
   * Takes the oldest delivery due at `now` whose lease is free (none, or run out), leasing it to
   * `holder` until `leaseUntil`; answers it with its entry, or undefined when none is free. The
   * lease is a conditional update, so of instances racing for a delivery exactly one gets it.
   */
  async leaseNext(now: number, holder: string, leaseUntil: number): Promise<PendingDelivery | undefined> {
    const free = (eb: ExpressionBuilder<Tables, 'deliveries'>) =>
      eb.and([eb('due_at', '<=', now), eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)])]);
    // A few candidates, so that losing a race for the oldest moves on to the next.
    const candidates = await this.connection.db
      .selectFrom('deliveries')
      .select(['error_id', 'channel'])
      .where(free)
      .orderBy('due_at')
      .limit(5)
      .execute();
    for (const { error_id, channel } of candidates) {
      const leased = await this.connection.db
        .updateTable('deliveries')
        .set({ leased_by: holder, lease_until: leaseUntil })
        .where('error_id', '=', error_id)
        .where('channel', '=', channel)
        .where(free)
        .executeTakeFirst();
      if (leased.numUpdatedRows !== 1n) continue;
      const [taken] = await pendingDeliveries(this.connection.db, (q) =>
        q.where('d.error_id', '=', error_id).where('d.channel', '=', channel),
      );
      return taken;
    }
    return undefined;
  }

  /** Deliveries due at `now`, oldest first, each with the entry to send (leased or not). */
  async due(now: number, limit: number): Promise<PendingDelivery[]> {
    return pendingDeliveries(this.connection.db, (q) => q.where('d.due_at', '<=', now).limit(limit));
  }

  /**
   * When the next delivery may be attempted (ms since the epoch): its due time, or the end of the
   * lease another instance holds on it. Undefined when the outbox is empty.
   */
  async nextDueAt(): Promise<number | undefined> {
    const row = await this.connection.db
      .selectFrom('deliveries')
      .select(
        sql<
          number | null
        >`min(CASE WHEN lease_until IS NOT NULL AND lease_until > due_at THEN lease_until ELSE due_at END)`.as('next'),
      )
      .executeTakeFirst();
    return row?.next ?? undefined;
  }

  async finish(errorId: string, channel: string): Promise<void> {
    await this.connection.db
      .deleteFrom('deliveries')
      .where('error_id', '=', errorId)
      .where('channel', '=', channel)
      .execute();
  }

  async postpone(errorId: string, channel: string, attempts: number, dueAt: number, lastError: string): Promise<void> {
    await this.connection.db
      .updateTable('deliveries')
      .set({ attempts, due_at: dueAt, last_error: lastError, leased_by: null, lease_until: null })
      .where('error_id', '=', errorId)
      .where('channel', '=', channel)
      .execute();
  }

  /** Gives up the lease on a delivery without attempting it. */
  async release(errorId: string, channel: string): Promise<void> {
    await this.connection.db
      .updateTable('deliveries')
      .set({ leased_by: null, lease_until: null })
      .where('error_id', '=', errorId)
      .where('channel', '=', channel)
      .execute();
  }

  /** Makes waiting deliveries (of one channel, or all) due now: their target changed, or the service restarted. */
  async retryNow(channel?: string): Promise<void> {
    const now = Date.now();
    let query = this.connection.db.updateTable('deliveries').set({ due_at: now }).where('due_at', '>', now);
    if (channel !== undefined) query = query.where('channel', '=', channel);
    await query.execute();
  }

  /** Empties a channel's outbox: the host switched the channel off. */
  async drop(channel: string): Promise<void> {
    await this.connection.db.deleteFrom('deliveries').where('channel', '=', channel).execute();
  }

  /**
   * The outbox as a job queue, per channel that has any: how many deliveries wait (due, backing
   * off or leased), and when the error entry of the oldest was recorded (ISO 8601).
   */
  async queue(): Promise<Array<{ channel: string; pending: number; oldestAt: string | null }>> {
    const rows = await this.connection.db
      .selectFrom('deliveries as d')
      .leftJoin('error_logs as e', 'e.id', 'd.error_id')
      .select((eb) => ['d.channel', eb.fn.countAll<number>().as('pending'), eb.fn.min('e.created_at').as('oldestAt')])
      .groupBy('d.channel')
      .execute();
    return rows.map((row) => ({ channel: row.channel, pending: Number(row.pending), oldestAt: row.oldestAt ?? null }));
  }

  /** How many deliveries of a channel wait, and the most recent reason one failed. */
  async backlog(channel: string): Promise<{ pending: number; lastError: string | null }> {
    const row = await this.connection.db
      .selectFrom('deliveries')
      .select((eb) => [
        eb.fn.countAll<number>().as('pending'),
        eb
          .selectFrom('deliveries')
          .select('last_error')
          .where('channel', '=', channel)
          .where('last_error', 'is not', null)
          .orderBy('due_at', 'desc')
          .limit(1)
          .as('lastError'),
      ])
      .where('channel', '=', channel)
      .executeTakeFirstOrThrow();
    return { pending: Number(row.pending), lastError: row.lastError ?? null };
  }
}

type DeliveriesQuery = ReturnType<typeof deliveriesWithEntries>;

/** Deliveries with the entry each sends, oldest first, narrowed by `filter`. */
async function pendingDeliveries(
  db: Handle,
  filter: (query: DeliveriesQuery) => DeliveriesQuery,
): Promise<PendingDelivery[]> {
  const rows = await filter(deliveriesWithEntries(db)).execute();
  return rows.map((row) => ({ channel: row.channel, attempts: row.attempts, entry: toErrorEntry(row) }));
}

function deliveriesWithEntries(db: Handle) {
  return db
    .selectFrom('deliveries as d')
    .innerJoin('error_logs as e', 'e.id', 'd.error_id')
    .select(['d.channel', 'd.attempts', ...ERROR_COLUMNS.map((column) => `e.${column}` as const)])
    .orderBy('d.due_at')
    .orderBy('e.created_at')
    .orderBy('e.id');
}
