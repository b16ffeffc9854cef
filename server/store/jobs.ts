import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Handle } from './connection.js';
import type { Store, StoreTransaction } from './store.js';

/**
 * What a run job asks for: one due minute of a scheduled child, or one accepted webhook call
 * (its execution id was answered to the sender before the run, so the run must store under it).
 */
export type JobData =
  | { kind: 'schedule'; workflowId: string; minute: number }
  | {
      kind: 'webhook';
      workflowId: string;
      executionId: string;
      body: Record<string, unknown>;
      /** The accepting request's trace context, which the run's span continues (tracing on). */
      trace?: Record<string, string>;
    };

/** A job this instance took: leased to it until it completes, fails, releases it or dies. */
export interface Job {
  id: string;
  data: JobData;
  /** Which attempt this is: 1 the first time it is taken (a release does not count). */
  attempt: number;
}

/**
 * The durable queue that runs stand on (issue 27): a job added in a transaction exists only if
 * the transaction commits; a taken job is leased by the database's clock and goes back to the
 * queue when its instance stops renewing the lease; a job is marked done in the transaction that
 * stores what it did, so its result is stored once however often it was taken. On PostgreSQL it
 * is pg-boss (server/store/pg-boss-queue.ts); on SQLite a table in the same file (below). The
 * engine has one code path over either.
 */
export interface JobQueue {
  /** Adds jobs; a job whose id is already there (done or not) is not added again. Answers the ids added. */
  add(jobs: Array<{ id: string; data: JobData }>, tx?: StoreTransaction): Promise<string[]>;
  /** Takes up to `limit` due jobs, each leased to this instance. */
  take(limit: number): Promise<Job[]>;
  /**
   * Adds a job already taken by this instance, in one statement on `db`: a transaction, which the
   * caller commits before it runs the job, or the store, where the statement commits alone. The
   * instance that accepted a webhook and has room runs it without a second transaction (and
   * commit) to take it. Leased as a taken job is, so that if this instance dies after the commit
   * another takes it over. `commitWithoutFlushWait`: on PostgreSQL the commit that adds it does
   * not wait for its WAL flush (a waiting caller's acceptance: server/engine/engine.ts says when
   * that is safe); nothing changes on SQLite.
   */
  addTaken(job: { id: string; data: JobData }, db: Store, options?: { commitWithoutFlushWait?: boolean }): Promise<Job>;
  /** Keeps the leases of jobs this instance is still running. */
  renew(jobs: Job[]): Promise<void>;
  /**
   * Marks a job done within `tx`. False when this instance no longer holds it (its lease ran out
   * and another instance took it): then `tx` must roll back, so the job's result is stored once.
   */
  complete(job: Job, tx: StoreTransaction): Promise<boolean>;
  /**
   * On PostgreSQL, `complete(job, tx)` of the jobs `ids` as one data-modifying statement that
   * returns the `id` (a uuid) of each job it marked done (this instance still held it), for a
   * store that writes the jobs' runs in the same statement (`LogRepository.insertExecutionAfter`,
   * `insertExecutionsAfter`). Absent on SQLite, where a statement is no round trip.
   */
  completion?(ids: string[]): { sql: string; parameters: unknown[] };
  /** An attempt that broke (the database went away): the job is taken again after `delayMs`. */
  fail(job: Job, reason: string, delayMs: number): Promise<void>;
  /** Whether the job `id` is done (by any instance). */
  isDone(id: string): Promise<boolean>;
  /**
   * Gives jobs back at once, for another instance (a graceful stop). SQLite does not count it as
   * an attempt; pg-boss counts the next take as a retry.
   */
  release(jobs: Job[]): Promise<void>;
  close(): Promise<void>;
}

/** How long a SQLite lease lasts unless renewed: the instance renews it every LEASE_RENEW_MS. */
export const LEASE_MS = 30_000;
/** How often an instance renews the leases of the jobs it runs. */
export const LEASE_RENEW_MS = 5_000;

/** A job's id from what it is (a child and a minute): one minute of one child is one job, on every instance. */
export function jobId(what: string): string {
  const hex = createHash('sha256').update(what).digest('hex');
  // Shaped as a UUID (version 8, "custom"), the id type pg-boss keeps.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Done jobs are kept this long (their ids keep a minute from being added again), then deleted. */
const DONE_KEPT_MS = 2 * 24 * 3_600_000;
/** The database's clock, in epoch milliseconds: every instance's lease is measured by it. */
const NOW = sql<number>`CAST(unixepoch('subsec') * 1000 AS INTEGER)`;

/** The queue on SQLite: one table in the service's database file (migration 0010). */
export class SqliteJobQueue implements JobQueue {
  private lastPrune = 0;

  constructor(
    private readonly store: Store,
    private readonly holder: string,
  ) {}

  async add(jobs: Array<{ id: string; data: JobData }>, tx: Store = this.store): Promise<string[]> {
    if (jobs.length === 0) return [];
    const added = await tx.db
      .insertInto('jobs')
      .values(jobs.map((job) => ({ id: job.id, data: JSON.stringify(job.data), state: 'ready', run_after: 0 })))
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id')
      .execute();
    return added.map((row) => row.id);
  }

  async addTaken(job: { id: string; data: JobData }, db: Store): Promise<Job> {
    await db.db
      .insertInto('jobs')
      .values({
        id: job.id,
        data: JSON.stringify(job.data),
        state: 'active',
        run_after: 0,
        leased_by: this.holder,
        lease_until: sql<number>`${NOW} + ${LEASE_MS}`,
        attempts: 1,
      })
      .execute();
    return { id: job.id, data: job.data, attempt: 1 };
  }

  async take(limit: number): Promise<Job[]> {
    await this.prune();
    // Shares its commit with the webhook calls and runs being stored at the same time: taking a
    // job is a write, and under load one is taken for nearly every run (issue 27, item 9). Each
    // half of the union searches the index by state; one OR over both scanned the whole table,
    // done jobs of the last two days included, at every take.
    const { rows } = await this.store.sharedTransaction((tx) =>
      sql<{ id: string; data: string; attempts: number }>`
        UPDATE jobs SET state = 'active', leased_by = ${this.holder}, lease_until = ${NOW} + ${LEASE_MS},
          attempts = attempts + 1
        WHERE id IN (
          SELECT id FROM (
            SELECT id, run_after FROM jobs WHERE state = 'ready' AND run_after <= ${NOW}
            UNION ALL
            SELECT id, run_after FROM jobs WHERE state = 'active' AND lease_until < ${NOW}
          )
          ORDER BY run_after, id LIMIT ${limit}
        )
        RETURNING id, data, attempts`.execute(tx.db),
    );
    return rows.map((row) => ({ id: row.id, data: JSON.parse(row.data) as JobData, attempt: Number(row.attempts) }));
  }

  async renew(jobs: Job[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.held(
      this.store.db,
      jobs.map((job) => job.id),
    )
      .set({ lease_until: sql`${NOW} + ${LEASE_MS}` })
      .execute();
  }

  async complete(job: Job, tx: StoreTransaction): Promise<boolean> {
    const done = await this.held(tx.db, [job.id])
      // The webhook's body is not kept past its run; the id alone keeps the job from coming back.
      .set({ state: 'done', data: '{}', leased_by: null, lease_until: null, done_at: NOW })
      .executeTakeFirst();
    return done.numUpdatedRows === 1n;
  }

  async fail(job: Job, _reason: string, delayMs: number): Promise<void> {
    await this.held(this.store.db, [job.id])
      .set({ state: 'ready', leased_by: null, lease_until: null, run_after: sql`${NOW} + ${delayMs}` })
      .execute();
  }

  async isDone(id: string): Promise<boolean> {
    const row = await this.store.db.selectFrom('jobs').select('state').where('id', '=', id).executeTakeFirst();
    return row?.state === 'done';
  }

  async release(jobs: Job[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.held(
      this.store.db,
      jobs.map((job) => job.id),
    )
      .set((eb) => ({ state: 'ready', leased_by: null, lease_until: null, attempts: eb('attempts', '-', 1) }))
      .execute();
  }

  /**
   * An update of those of `ids` this instance still holds: a job whose lease ran out and passed
   * to another instance, or that is done, is not touched.
   */
  private held(db: Handle, ids: string[]) {
    return db
      .updateTable('jobs')
      .where('id', 'in', ids)
      .where('leased_by', '=', this.holder)
      .where('state', '=', 'active');
  }

  async close(): Promise<void> {}

  /** Deletes done jobs older than DONE_KEPT_MS, at most every ten minutes. */
  private async prune(): Promise<void> {
    if (Date.now() - this.lastPrune < 600_000) return;
    this.lastPrune = Date.now();
    await this.store.db
      .deleteFrom('jobs')
      .where('state', '=', 'done')
      .where('done_at', '<', sql<number>`${NOW} - ${DONE_KEPT_MS}`)
      .execute();
  }
}
