import type { ErrorLogEntry } from 'forge-embed/client';
import { type ExpressionBuilder, type Kysely, sql } from 'kysely';
import type { StoreClass } from './base.js';
import { ERROR_COLUMNS, toErrorEntry } from './logs.js';
import type { Tables } from './schema.js';

export interface PendingDelivery {
  channel: string;
  /** Failed attempts so far. */
  attempts: number;
  entry: ErrorLogEntry;
}

/**
 * What instances share out through the database: the outbox of error deliveries, each leased
 * to one instance at a time, and the claims on scheduled minutes (docs/design-notes.md).
 */
export function withDeliveries<Base extends StoreClass>(base: Base) {
  return class DeliveryQueries extends base {
    /** Puts an error log entry in the outbox of a delivery channel (once per entry and channel). */
    async enqueueDelivery(errorId: string, channel: string, dueAt: number): Promise<void> {
      await this.db
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
    async leaseNextDelivery(now: number, holder: string, leaseUntil: number): Promise<PendingDelivery | undefined> {
      const free = (eb: ExpressionBuilder<Tables, 'deliveries'>) =>
        eb.and([eb('due_at', '<=', now), eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)])]);
      // A few candidates, so that losing a race for the oldest moves on to the next.
      const candidates = await this.db
        .selectFrom('deliveries')
        .select(['error_id', 'channel'])
        .where(free)
        .orderBy('due_at')
        .limit(5)
        .execute();
      for (const { error_id, channel } of candidates) {
        const leased = await this.db
          .updateTable('deliveries')
          .set({ leased_by: holder, lease_until: leaseUntil })
          .where('error_id', '=', error_id)
          .where('channel', '=', channel)
          .where(free)
          .executeTakeFirst();
        if (leased.numUpdatedRows !== 1n) continue;
        const [taken] = await pendingDeliveries(this.db, (q) =>
          q.where('d.error_id', '=', error_id).where('d.channel', '=', channel),
        );
        return taken;
      }
      return undefined;
    }

    /** Deliveries due at `now`, oldest first, each with the entry to send (leased or not). */
    async dueDeliveries(now: number, limit: number): Promise<PendingDelivery[]> {
      return pendingDeliveries(this.db, (q) => q.where('d.due_at', '<=', now).limit(limit));
    }

    /**
     * When the next delivery may be attempted (ms since the epoch): its due time, or the end of the
     * lease another instance holds on it. Undefined when the outbox is empty.
     */
    async nextDeliveryDueAt(): Promise<number | undefined> {
      const row = await this.db
        .selectFrom('deliveries')
        .select(
          sql<
            number | null
          >`min(CASE WHEN lease_until IS NOT NULL AND lease_until > due_at THEN lease_until ELSE due_at END)`.as(
            'next',
          ),
        )
        .executeTakeFirst();
      return row?.next ?? undefined;
    }

    async finishDelivery(errorId: string, channel: string): Promise<void> {
      await this.db.deleteFrom('deliveries').where('error_id', '=', errorId).where('channel', '=', channel).execute();
    }

    async postponeDelivery(
      errorId: string,
      channel: string,
      attempts: number,
      dueAt: number,
      lastError: string,
    ): Promise<void> {
      await this.db
        .updateTable('deliveries')
        .set({ attempts, due_at: dueAt, last_error: lastError, leased_by: null, lease_until: null })
        .where('error_id', '=', errorId)
        .where('channel', '=', channel)
        .execute();
    }

    /** Gives up the lease on a delivery without attempting it. */
    async releaseDelivery(errorId: string, channel: string): Promise<void> {
      await this.db
        .updateTable('deliveries')
        .set({ leased_by: null, lease_until: null })
        .where('error_id', '=', errorId)
        .where('channel', '=', channel)
        .execute();
    }

    /** Makes waiting deliveries (of one channel, or all) due now: their target changed, or the service restarted. */
    async retryDeliveriesNow(channel?: string): Promise<void> {
      const now = Date.now();
      let query = this.db.updateTable('deliveries').set({ due_at: now }).where('due_at', '>', now);
      if (channel !== undefined) query = query.where('channel', '=', channel);
      await query.execute();
    }

    /** Empties a channel's outbox: the host switched the channel off. */
    async dropDeliveries(channel: string): Promise<void> {
      await this.db.deleteFrom('deliveries').where('channel', '=', channel).execute();
    }

    /** How many deliveries of a channel wait, and the most recent reason one failed. */
    async deliveryBacklog(channel: string): Promise<{ pending: number; lastError: string | null }> {
      const row = await this.db
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

    /**
     * Claims one scheduled minute of a child for `holder`: true for the one instance whose insert
     * made the row, false for every other that tried the same (child, minute).
     */
    async claimScheduledRun(workflowId: string, minute: number, holder: string): Promise<boolean> {
      // An insert that met an existing claim returns no row.
      const made = await this.db
        .insertInto('schedule_claims')
        .values({ workflow_id: workflowId, minute, claimed_by: holder })
        .onConflict((oc) => oc.doNothing())
        .returning('minute')
        .executeTakeFirst();
      return made !== undefined;
    }

    /** Forgets claims of minutes before `minute`: no instance ticks them any more. */
    async dropScheduleClaimsBefore(minute: number): Promise<void> {
      await this.db.deleteFrom('schedule_claims').where('minute', '<', minute).execute();
    }
  };
}

type DeliveriesQuery = ReturnType<typeof deliveriesWithEntries>;

/** Deliveries with the entry each sends, oldest first, narrowed by `filter`. */
async function pendingDeliveries(
  db: Kysely<Tables>,
  filter: (query: DeliveriesQuery) => DeliveriesQuery,
): Promise<PendingDelivery[]> {
  const rows = await filter(deliveriesWithEntries(db)).execute();
  return rows.map((row) => ({ channel: row.channel, attempts: row.attempts, entry: toErrorEntry(row) }));
}

function deliveriesWithEntries(db: Kysely<Tables>) {
  return db
    .selectFrom('deliveries as d')
    .innerJoin('error_logs as e', 'e.id', 'd.error_id')
    .select(['d.channel', 'd.attempts', ...ERROR_COLUMNS.map((column) => `e.${column}` as const)])
    .orderBy('d.due_at')
    .orderBy('e.created_at')
    .orderBy('e.id');
}
