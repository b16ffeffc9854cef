import type { ErrorLogEntry } from 'forge-embed/client';
import { type ExpressionBuilder, type RawBuilder, sql, type UpdateObject } from 'kysely';
import type { Connection, Dialect, Handle } from './connection.js';
import { ERROR_COLUMNS, toErrorEntry } from './logs.js';
import type { Tables } from './schema.js';

export interface PendingDelivery {
  channel: string;
  /** Failed attempts so far. */
  attempts: number;
  entry: ErrorLogEntry;
}

/** A delivery whose last allowed attempt failed: it waits for the host to send it again. */
export interface DeadLetter {
  channel: 'webhook' | 'eventBus';
  attempts: number;
  /** Why its last attempt failed. */
  lastError: string | null;
  /** When it was given up on (ISO 8601). */
  deadAt: string;
  entry: ErrorLogEntry;
}

/**
 * The outbox of error deliveries, shared out among instances through the database: each
 * delivery is leased to one instance at a time (docs/design-notes.md). Due times and leases are
 * read and written by the database's clock, the one clock every instance shares; `shiftMs`
 * moves it by how far the service's clock is from the system's (0 in production, a test clock's
 * distance in tests: server/clock.ts `shiftOf`).
 */
export class DeliveryRepository {
  constructor(private readonly connection: Connection) {}

  private now(shiftMs: number): RawBuilder<number> {
    return databaseNow(this.connection.dialect, shiftMs);
  }

  /** Puts an error log entry in the outbox of a delivery channel (once per entry and channel), due now. */
  async enqueue(errorId: string, channel: string, shiftMs: number): Promise<void> {
    await this.connection.db
      .insertInto('deliveries')
      .values({ error_id: errorId, channel, due_at: this.now(shiftMs) })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  /**
   * Takes the oldest delivery that is due whose lease is free (none, or run out), leasing it to
   * `holder` for `leaseMs`; answers it with its entry, or undefined when none is free. The
   * lease is a conditional update, so of instances racing for a delivery exactly one gets it.
   */
  async leaseNext(holder: string, leaseMs: number, shiftMs: number): Promise<PendingDelivery | undefined> {
    const now = this.now(shiftMs);
    const free = (eb: ExpressionBuilder<Tables, 'deliveries'>) =>
      eb.and([
        eb('dead_at', 'is', null),
        eb('due_at', '<=', now),
        eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]),
      ]);
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
        .set({ leased_by: holder, lease_until: sql<number>`${now} + ${leaseMs}` })
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

  /** Deliveries due at `now` (ms since the epoch), oldest first, each with the entry to send (leased or not); no dead letters. */
  async due(now: number, limit: number): Promise<PendingDelivery[]> {
    return pendingDeliveries(this.connection.db, (q) =>
      q.where('d.due_at', '<=', now).where('d.dead_at', 'is', null).limit(limit),
    );
  }

  /**
   * How long until the next delivery may be attempted (ms; 0 or less: now): its due time, or
   * the end of the lease another instance holds on it. Undefined when nothing waits.
   */
  async msUntilNext(shiftMs: number): Promise<number | undefined> {
    const row = await this.connection.db
      .selectFrom('deliveries')
      .select(
        sql<
          number | null
        >`min(CASE WHEN lease_until IS NOT NULL AND lease_until > due_at THEN lease_until ELSE due_at END) - ${this.now(shiftMs)}`.as(
          'wait',
        ),
      )
      .where('dead_at', 'is', null)
      .executeTakeFirst();
    return row?.wait ?? undefined;
  }

  /**
   * Removes a delivered entry from the outbox, only while `holder` holds its lease: an instance
   * whose lease ran out and was taken by another changes nothing. Answers whether it did.
   */
  async finish(errorId: string, channel: string, holder: string): Promise<boolean> {
    const done = await this.connection.db
      .deleteFrom('deliveries')
      .where('error_id', '=', errorId)
      .where('channel', '=', channel)
      .where('leased_by', '=', holder)
      .executeTakeFirst();
    return done.numDeletedRows === 1n;
  }

  /** After a failed attempt by `holder` (still its lease holder): the next one in `retryInMs`. Answers whether it held it. */
  postpone(
    errorId: string,
    channel: string,
    holder: string,
    failed: { attempts: number; retryInMs: number; lastError: string; shiftMs: number },
  ): Promise<boolean> {
    return this.updateHeld(errorId, channel, holder, {
      attempts: failed.attempts,
      due_at: sql<number>`${this.now(failed.shiftMs)} + ${failed.retryInMs}`,
      last_error: failed.lastError,
    });
  }

  /** After the last allowed attempt failed: a dead letter, which no worker takes. Answers whether `holder` held it. */
  deadLetter(
    errorId: string,
    channel: string,
    holder: string,
    failed: { attempts: number; lastError: string; shiftMs: number },
  ): Promise<boolean> {
    return this.updateHeld(errorId, channel, holder, {
      attempts: failed.attempts,
      last_error: failed.lastError,
      dead_at: this.now(failed.shiftMs),
    });
  }

  /** Gives up `holder`'s lease on a delivery without attempting it. */
  async release(errorId: string, channel: string, holder: string): Promise<void> {
    await this.updateHeld(errorId, channel, holder, {});
  }

  /**
   * Sets `values` on a delivery and frees its lease, only while `holder` holds it (a conditional
   * update on `leased_by`): answers whether it did.
   */
  private async updateHeld(
    errorId: string,
    channel: string,
    holder: string,
    values: UpdateObject<Tables, 'deliveries'>,
  ): Promise<boolean> {
    const done = await this.connection.db
      .updateTable('deliveries')
      .set({ ...values, leased_by: null, lease_until: null })
      .where('error_id', '=', errorId)
      .where('channel', '=', channel)
      .where('leased_by', '=', holder)
      .executeTakeFirst();
    return done.numUpdatedRows === 1n;
  }

  /** Makes waiting deliveries (of one channel, or all) due now: their target changed, or the service restarted. */
  async retryNow(shiftMs: number, channel?: string): Promise<void> {
    const now = this.now(shiftMs);
    let query = this.connection.db
      .updateTable('deliveries')
      .set({ due_at: now })
      .where('due_at', '>', now)
      .where('dead_at', 'is', null);
    if (channel !== undefined) query = query.where('channel', '=', channel);
    await query.execute();
  }

  /** Empties a channel's outbox, dead letters included: the host switched the channel off. */
  async drop(channel: string): Promise<void> {
    await this.connection.db.deleteFrom('deliveries').where('channel', '=', channel).execute();
  }

  /** Dead letters, those given up on first first (of one channel, or all), a page at a time. */
  async deadLetters({
    channel,
    limit,
    offset,
  }: {
    channel?: string;
    limit: number;
    offset: number;
  }): Promise<DeadLetter[]> {
    let query = this.connection.db
      .selectFrom('deliveries as d')
      .innerJoin('error_logs as e', 'e.id', 'd.error_id')
      .select(['d.channel', 'd.attempts', 'd.last_error', 'd.dead_at', ...ERROR_COLUMNS.map((c) => `e.${c}` as const)])
      .where('d.dead_at', 'is not', null)
      .orderBy('d.dead_at')
      .orderBy('e.id')
      .orderBy('d.channel')
      .limit(limit)
      .offset(offset);
    if (channel !== undefined) query = query.where('d.channel', '=', channel);
    const rows = await query.execute();
    return rows.map((row) => ({
      channel: row.channel as DeadLetter['channel'],
      attempts: row.attempts,
      lastError: row.last_error,
      deadAt: new Date(Number(row.dead_at)).toISOString(),
      entry: toErrorEntry(row),
    }));
  }

  /**
   * Sends dead letters again: those of `errorIds` (every one of them must be a dead letter, of
   * `channel` when given), or all (of `channel`). Each is due now with a new count of attempts.
   * Answers how many, or the ids that are no dead letter (then nothing changed).
   */
  async resend({
    errorIds,
    channel,
    shiftMs,
  }: {
    errorIds?: string[];
    channel?: string;
    shiftMs: number;
  }): Promise<{ resent: number } | { notDead: string[] }> {
    const db = this.connection.db;
    const narrowed = (eb: ExpressionBuilder<Tables, 'deliveries'>) =>
      eb.and([
        eb('dead_at', 'is not', null),
        ...(channel === undefined ? [] : [eb('channel', '=', channel)]),
        ...(errorIds === undefined ? [] : [eb('error_id', 'in', errorIds)]),
      ]);
    if (errorIds !== undefined) {
      const found = await db.selectFrom('deliveries').select('error_id').where(narrowed).execute();
      const dead = new Set(found.map((row) => row.error_id));
      const notDead = errorIds.filter((id) => !dead.has(id));
      if (notDead.length > 0) return { notDead };
    }
    const done = await db
      .updateTable('deliveries')
      .set({ dead_at: null, attempts: 0, due_at: this.now(shiftMs), leased_by: null, lease_until: null })
      .where(narrowed)
      .executeTakeFirst();
    return { resent: Number(done.numUpdatedRows) };
  }

  /**
   * The outbox as a job queue, per channel that has any: how many deliveries wait (due, backing
   * off or leased; not the dead letters), and when the error entry of the oldest was recorded (ISO 8601).
   */
  async queue(): Promise<Array<{ channel: string; pending: number; oldestAt: string | null }>> {
    const rows = await this.connection.db
      .selectFrom('deliveries as d')
      .leftJoin('error_logs as e', 'e.id', 'd.error_id')
      .select((eb) => ['d.channel', eb.fn.countAll<number>().as('pending'), eb.fn.min('e.created_at').as('oldestAt')])
      .where('d.dead_at', 'is', null)
      .groupBy('d.channel')
      .execute();
    return rows.map((row) => ({ channel: row.channel, pending: Number(row.pending), oldestAt: row.oldestAt ?? null }));
  }

  /** How many deliveries of a channel wait, how many are dead letters, and the most recent reason one failed. */
  async backlog(channel: string): Promise<{ pending: number; deadLetters: number; lastError: string | null }> {
    const row = await this.connection.db
      .selectFrom('deliveries')
      .select((eb) => [
        eb.fn.count<number>(sql`CASE WHEN dead_at IS NULL THEN 1 END`).as('pending'),
        eb.fn.count<number>('dead_at').as('deadLetters'),
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
    return { pending: Number(row.pending), deadLetters: Number(row.deadLetters), lastError: row.lastError ?? null };
  }
}

/**
 * "Now" by the database's clock, in ms since the epoch, moved by `shiftMs`: PostgreSQL's `now()`,
 * SQLite's `julianday('now')` (both with milliseconds).
 */
function databaseNow(dialect: Dialect, shiftMs: number): RawBuilder<number> {
  return dialect === 'postgres'
    ? sql<number>`(floor(extract(epoch from now()) * 1000)::bigint + ${Math.round(shiftMs)})`
    : sql<number>`(CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + ${Math.round(shiftMs)})`;
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
