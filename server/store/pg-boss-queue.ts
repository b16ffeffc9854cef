import type { Logger } from '../log.js';
import type { Job, JobData, JobQueue } from './jobs.js';
import { postgresPool } from './postgres.js';
import type { Store, StoreTransaction } from './store.js';
import { WriteBatch } from './write-batch.js';

/** The one pg-boss queue the runs go through. */
const QUEUE = 'forge-runs';
/**
 * A taken job whose instance stops beating for this long goes back to the queue (pg-boss's
 * monitor sees it within MONITOR_SECONDS more): another instance takes it up within a minute.
 * pg-boss's own floor is 10 s.
 */
const HEARTBEAT_SECONDS = 20;
const MONITOR_SECONDS = 10;
/** Connections pg-boss's own pool opens (taking, renewing and failing jobs; its monitor). */
const QUEUE_POOL_SIZE = 3;

/**
 * Jobs added already taken, in one statement: the rows pg-boss's `send` adds (`insertJobs` in
 * pg-boss 12's dist/plans.js: the queue's settings from `pgboss.queue`, every time `job_now()`)
 * in the state its `fetch` leaves them (`fetchNextJob`: `active`, `started_on` and `heartbeat_on`
 * at `job_now()`, no retry yet), where `send` and then a claim of the row were two statements and
 * two versions of the row, each with its entries in the table's indexes (issue 27, item 9).
 * `$2` their ids, `$3` their data (one job: arrays of one); it answers the id and retry count of
 * each added (none for a job whose id is there already). `table` is the queue's own table, as
 * pg-boss's statements name it (its partition of `pgboss.job`, which costs the planner more to go
 * through). `withoutFlushWait`: the statement's own transaction commits without waiting for its
 * WAL flush (`set_config(…, true)` is `SET LOCAL`, and the setting is read at commit).
 */
const addActive = (table: string, withoutFlushWait: boolean) => `
  INSERT INTO pgboss."${table.replaceAll('"', '""')}" (id, name, data, priority, start_after, created_on,
    expire_seconds, deletion_seconds, keep_until, retry_limit, retry_delay, retry_backoff, retry_delay_max, policy,
    dead_letter, heartbeat_seconds, state, started_on, heartbeat_on)
  SELECT j.id, q.name, j.data, 0, pgboss.job_now(), pgboss.job_now(),
    q.expire_seconds, q.deletion_seconds, pgboss.job_now() + q.retention_seconds * interval '1s', q.retry_limit,
    q.retry_delay, q.retry_backoff, q.retry_delay_max, q.policy,
    q.dead_letter, q.heartbeat_seconds, 'active', pgboss.job_now(), pgboss.job_now()
  FROM pgboss.queue q, unnest($2::uuid[], $3::jsonb[]) WITH ORDINALITY AS j (id, data, n)
  WHERE q.name = $1${withoutFlushWait ? " AND set_config('synchronous_commit', 'off', true) = 'off'" : ''}
  ORDER BY j.n
  ON CONFLICT DO NOTHING
  RETURNING id::text, retry_count`;

/** A job to add taken, outside a transaction (PgBossJobQueue.addTaken). */
interface Adding {
  job: { id: string; data: JobData };
  db: Store;
}

/**
 * pg-boss's `complete` of jobs as it makes it for this service (`completeJobs` in pg-boss 12's
 * dist/plans.js, unfenced, no output: the same columns set to the same values, of `active` jobs
 * only), without its count of the jobs it completed: RETURNING each job instead, so that a store
 * can mark jobs done and store their runs in one statement (`JobQueue.completion`).
 */
const completeJobs = (table: string) => `
  UPDATE pgboss."${table.replaceAll('"', '""')}" SET
    completed_on = pgboss.job_now(), state = 'completed', output = NULL, blocked = blocked,
    pending_dependencies = pending_dependencies
  WHERE name = $1 AND id = ANY($2::uuid[]) AND state = 'active'
  RETURNING id`;

type Boss = import('pg-boss').PgBoss;

/**
 * The run queue on PostgreSQL: pg-boss (docs/design-notes.md says why), in its own schema
 * `pgboss`, over a pool of its own that survives the server going away (server/store/postgres.ts).
 * Jobs are added and completed through the store's transaction (pg-boss's Kysely adapter), so a
 * job exists only if what caused it was stored, and is done only if its run was. Leases are
 * pg-boss's heartbeats, measured by the database's clock (`now()`).
 */
export class PgBossJobQueue implements JobQueue {
  /** `addActive`'s statement, waiting for its flush and not. */
  private readonly addActive: Record<'flushed' | 'unflushed', string>;
  private readonly completeJobs: string;
  /**
   * The jobs added taken outside a transaction while the statement before them runs, one
   * statement for all (issue 27, item 9): waiting for the flush and not.
   */
  private readonly adding: Record<'flushed' | 'unflushed', WriteBatch<Adding, number | undefined>>;

  private constructor(
    private readonly boss: Boss,
    private readonly fromKysely: typeof import('pg-boss').fromKysely,
    private readonly pool: import('pg').Pool,
    table: string,
  ) {
    this.addActive = { flushed: addActive(table, false), unflushed: addActive(table, true) };
    this.completeJobs = completeJobs(table);
    const adding = (flush: 'flushed' | 'unflushed') =>
      new WriteBatch<Adding, number | undefined>(
        (batch) => this.addMany(this.addActive[flush], batch),
        (one) => this.addOne(this.addActive[flush], one),
      );
    this.adding = { flushed: adding('flushed'), unflushed: adding('unflushed') };
  }

  static async open(url: string, logger: Logger): Promise<PgBossJobQueue> {
    const { PgBoss, fromKysely } = await import('pg-boss');
    const pool = await postgresPool(url, { poolSize: QUEUE_POOL_SIZE });
    let queue: Awaited<ReturnType<Boss['getQueue']>>;
    const boss = new PgBoss({
      db: { executeSql: (text: string, values?: unknown[]) => pool.query(text, values as unknown[]) },
      superviseIntervalSeconds: MONITOR_SECONDS,
      monitorIntervalSeconds: MONITOR_SECONDS,
      // The service decides which minutes are due (its clock); pg-boss's cron scheduler stays off.
      schedule: false,
    });
    // pg-boss reports what its monitor and maintenance meet (the database going away) as events;
    // an 'error' event nobody listens to would end the process.
    boss.on('error', (error: unknown) => logger.warn({ err: error }, 'job queue: pg-boss met an error'));
    try {
      await boss.start();
      queue = await boss.getQueue(QUEUE);
      if (!queue) {
        await boss.createQueue(QUEUE, {
          heartbeatSeconds: HEARTBEAT_SECONDS,
          // Far above any run (blocks time out after seconds); a heartbeat notices a dead instance.
          expireInSeconds: 3_600,
          // The engine counts attempts and records a run that never finishes as failed; pg-boss
          // itself never gives a run job up.
          retryLimit: 1_000_000,
          retryDelay: 1,
          // Done jobs' ids keep a minute from being added again; kept past the catch-up hour.
          deleteAfterSeconds: 2 * 24 * 3_600,
        });
        queue = await boss.getQueue(QUEUE);
      }
    } catch (error) {
      await boss.stop({ graceful: false }).catch(() => {});
      await pool.end();
      throw error;
    }
    // pg-boss answers the queue's table (`table_name`) though its types do not declare it.
    return new PgBossJobQueue(boss, fromKysely, pool, (queue as { table?: string } | null)?.table ?? 'job');
  }

  async add(jobs: Array<{ id: string; data: JobData }>, tx?: StoreTransaction): Promise<string[]> {
    const added: string[] = [];
    for (const job of jobs) {
      const id = await this.boss.send(QUEUE, job.data, { id: job.id, ...(tx ? { db: this.fromKysely(tx.db) } : {}) });
      if (id) added.push(id);
    }
    return added;
  }

  /**
   * The job added as pg-boss's `send` adds one and `fetch` then takes it, in one statement (the
   * row is what a fetched job is: `active`, its heartbeat and start at the database's clock,
   * `job_now()`, the transaction's start: a lease a few milliseconds older than the commit, of
   * HEARTBEAT_SECONDS). The engine renews it as every job it runs (`touch`), and if this instance
   * dies pg-boss's monitor fails it by its heartbeat and another instance takes the retry, as for
   * any fetched job. In `db`'s transaction, should it roll back, the job was never there; outside
   * one, the statement commits alone, or with the jobs added at the same time (one statement for
   * all, `adding`).
   */
  async addTaken(
    job: { id: string; data: JobData },
    db: Store,
    { commitWithoutFlushWait = false }: { commitWithoutFlushWait?: boolean } = {},
  ): Promise<Job> {
    const flush = commitWithoutFlushWait ? 'unflushed' : 'flushed';
    const retries = db.isTransaction()
      ? await this.addOne(this.addActive[flush], { job, db })
      : await this.adding[flush].write({ job, db });
    if (retries === undefined) throw new Error(`The job ${job.id} is in the queue already.`);
    return { id: job.id, data: job.data, attempt: retries + 1 };
  }

  /** `addActive`'s `statement` of one job: its retry count, or undefined when its id is there already. */
  private async addOne(statement: string, adding: Adding): Promise<number | undefined> {
    const [retries] = await this.addMany(statement, [adding]);
    return retries;
  }

  /** `addActive`'s `statement` of these jobs: the retry count of each, undefined where its id is there already. */
  private async addMany(statement: string, batch: Adding[]): Promise<Array<number | undefined>> {
    const { rows } = await this.fromKysely(batch[0]!.db.db).executeSql(statement, [
      QUEUE,
      batch.map(({ job }) => job.id),
      batch.map(({ job }) => JSON.stringify(job.data)),
    ]);
    const added = new Map((rows as Array<{ id: string; retry_count: number }>).map((row) => [row.id, row.retry_count]));
    return batch.map(({ job }) => added.get(job.id));
  }

  async take(limit: number): Promise<Job[]> {
    const jobs = await this.boss.fetch<JobData>(QUEUE, { batchSize: limit, includeMetadata: true });
    return jobs.map((job) => ({ id: job.id, data: job.data, attempt: job.retryCount + 1 }));
  }

  async renew(jobs: Job[]): Promise<void> {
    if (jobs.length > 0)
      await this.boss.touch(
        QUEUE,
        jobs.map((job) => job.id),
      );
  }

  async complete(job: Job, tx: StoreTransaction): Promise<boolean> {
    // pg-boss completes only an active job: of two instances that ran the same job (the first
    // lost its heartbeat), the second to commit finds it completed and rolls its run back.
    const result = await this.boss.complete(QUEUE, job.id, null, { db: this.fromKysely(tx.db) });
    // How many jobs it completed: typed internal by pg-boss, but what its `complete` answers.
    return (result as { affected?: number }).affected === 1;
  }

  completion(ids: string[]): { sql: string; parameters: unknown[] } {
    return { sql: this.completeJobs, parameters: [QUEUE, ids] };
  }

  async fail(job: Job, reason: string): Promise<void> {
    await this.boss.fail(QUEUE, job.id, { message: reason });
  }

  async isDone(id: string): Promise<boolean> {
    const [job] = await this.boss.findJobs(QUEUE, { id });
    return job?.state === 'completed';
  }

  async release(jobs: Job[]): Promise<void> {
    if (jobs.length === 0) return;
    const ids = jobs.map((job) => job.id);
    // Cancelled and resumed in one transaction: back to "created", not a failed attempt.
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const db = { executeSql: (text: string, values?: unknown[]) => client.query(text, values as unknown[]) };
      await this.boss.cancel(QUEUE, ids, { db });
      await this.boss.resume(QUEUE, ids, { db });
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.boss.stop({ graceful: false, close: false }).catch(() => {});
    await this.pool.end();
  }
}
