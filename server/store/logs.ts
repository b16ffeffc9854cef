import type { ErrorKind, ErrorLogEntry, ExecutionLogEntry, WorkflowHealth } from 'forge-embed/client';
import { CompiledQuery, type Selectable, sql } from 'kysely';
import { type ChildRepository, type ChildRow, type RawChild, toChild } from './children.js';
import { CompiledOnce, type Connection, type Handle, inTransaction, newId } from './connection.js';
import type { Tables } from './schema.js';
import { TurnBatch } from './turn-batch.js';
import { WriteBatch } from './write-batch.js';

/**
 * Batches of stored runs an instance writes at once. A batch holds its workflows' and hours'
 * rows through its WAL flush: with one at a time, two instances' batches, which nearly always
 * share a row, waited for each other's flush in turn (issue 27, item 9).
 */
const STORE_BATCHES_IN_FLIGHT = 4;

/** A run to store after its job is marked done (`LogRepository.storeRunAfter`). */
export interface RunAfter {
  workflowId: string;
  entry: ExecutionLogEntry;
  jobId: string;
  /** The job queue's statement marking the jobs `ids` done (`JobQueue.completion`). */
  completion: (ids: string[]) => { sql: string; parameters: unknown[] };
}

/** The hour of an ISO 8601 time, `2026-11-23T11`: what the logs page index counts by. */
export const hourOf = (isoTime: string) => isoTime.slice(0, 13);
/** The first instant of an hour (`hourOf`'s form), or of the one `later` hours after, in ISO 8601. */
const startOfHour = (hour: string, later: number) =>
  new Date(Date.parse(`${hour}:00:00.000Z`) + later * 3_600_000).toISOString();

/**
 * Up to this many log entries, a page's start is found by stepping through the index (about
 * 0.2 ms per 1,000 entries on SQLite); past it, through the hour counts.
 */
const INDEX_SKIP_LIMIT = 1_000;

/** An execution log entry as stored: its results still the JSON text they were saved as. */
export interface StoredExecution extends Omit<ExecutionLogEntry, 'results'> {
  resultsJson: string;
}

type RawError = Selectable<Tables['error_logs']>;

export const toErrorEntry = (row: RawError): ErrorLogEntry => ({
  _id: row.id,
  workflowId: row.workflow_id,
  executionId: row.execution_id,
  blockId: row.block_id,
  blockType: row.block_type,
  error: row.error,
  kind: row.kind,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  __v: row.version,
});

export const ERROR_COLUMNS = [
  'id',
  'workflow_id',
  'execution_id',
  'block_id',
  'block_type',
  'error',
  'kind',
  'created_at',
  'updated_at',
  'version',
] as const;

type RawLogsHead = Pick<RawChild, 'id' | 'user_id' | 'logs_version'>;

/** Whose a child workflow is: what a caller's right to read its logs is checked on. */
export type ChildOwner = Pick<ChildRow, 'id' | 'userId'>;

/** Execution logs (paged by number, see pageStart) and error logs, and the run health read from both. */
export class LogRepository {
  // A logs page's check needs the child's owner and its logs version: not its settings (JSON,
  // parsed for every page while the whole row was read), nor its webhook token, a secret.
  private readonly headQuery = new CompiledOnce((db) =>
    db.selectFrom('workflows').select(['id', 'user_id', 'logs_version']).where('id', '=', ''),
  );
  private readonly headsQuery = new CompiledOnce<RawLogsHead>((db) => ({
    compile: () => sql<RawLogsHead>`select id, user_id, logs_version from workflows where id = any(${''})`.compile(db),
  }));
  /**
   * On PostgreSQL the logs requests of one turn read their children and versions in one
   * statement: with ten connections paging, a statement and a round trip each (on ten pooled
   * connections, ten backends waking on the two cores the service also needs) were most of what
   * a kept page cost beyond SQLite's (issue 29). SQLite's read is a synchronous call already.
   */
  private readonly headsInTurn = new TurnBatch<RawLogsHead>(async (ids) => {
    const rows = await this.headsQuery.rows(this.connection.db, [ids]);
    return new Map(rows.map((row) => [row.id, row]));
  });

  /** The runs stored after their jobs' completion while the statement before them runs (storeRunAfter). */
  private readonly runsTogether = new WriteBatch<RunAfter, { guarded: boolean; stored: boolean }>(
    (runs) => this.insertExecutionsAfter(runs, runs[0]!.completion(runs.map((run) => run.jobId))),
    (run) => this.insertExecutionAfter(run.workflowId, run.entry, run.completion([run.jobId])),
    STORE_BATCHES_IN_FLIGHT,
  );

  constructor(
    private readonly connection: Connection,
    private readonly children: ChildRepository,
  ) {}

  /**
   * On PostgreSQL, a run stored in one statement with its job marked done (`completion`, the job
   * queue's): outside a transaction, with the runs stored at the same time, one statement for all
   * (`insertExecutionsAfter`, issue 27 item 9); in one, alone (`insertExecutionAfter`). Answers
   * whether the job was marked done here and whether the run was stored.
   */
  storeRunAfter(run: RunAfter): Promise<{ guarded: boolean; stored: boolean }> {
    if (this.connection.db.isTransaction)
      return this.insertExecutionAfter(run.workflowId, run.entry, run.completion([run.jobId]));
    return this.runsTogether.write(run);
  }

  /** Stores one run; false, storing nothing, when the workflow is no longer there (see insertExecutions). */
  insertExecution(workflowId: string, entry: ExecutionLogEntry): Promise<boolean> {
    return this.insertExecutions(workflowId, [entry]);
  }

  /**
   * Stores runs of one workflow, and counts them in the hours that index the logs pages; false,
   * storing nothing, when the workflow is no longer there (removed while it ran, with its logs).
   */
  async insertExecutions(workflowId: string, entries: ExecutionLogEntry[]): Promise<boolean> {
    if (entries.length === 0) return true;
    const perHour = new Map<string, number>();
    for (const entry of entries) {
      const hour = hourOf(entry.startedAt);
      perHour.set(hour, (perHour.get(hour) ?? 0) + 1);
    }
    return inTransaction(this.connection, async ({ db }) => {
      // The logs pages' version moves with every store of runs, in the same transaction, so a
      // reader that sees the new version sees the runs too (server/kept-answers.ts keeps pages by it). The
      // same statement says whether the workflow is still there, which a run used to read first,
      // and on PostgreSQL it holds the row until the runs are in.
      const bumped = await db
        .updateTable('workflows')
        .set((eb) => ({ logs_version: eb('logs_version', '+', 1) }))
        .where('id', '=', workflowId)
        .executeTakeFirst();
      if (bumped.numUpdatedRows === 0n) return false;
      await db
        .insertInto('executions')
        .values(
          entries.map((entry) => ({
            id: entry.executionId,
            workflow_id: workflowId,
            started_at: entry.startedAt,
            stopped_at: entry.stoppedAt,
            finished: entry.finished ? 1 : 0,
            results: JSON.stringify(entry.results),
          })),
        )
        .execute();
      await db
        .insertInto('execution_hours')
        .values([...perHour].map(([hour, executions]) => ({ workflow_id: workflowId, hour, executions })))
        .onConflict((oc) =>
          oc.columns(['workflow_id', 'hour']).doUpdateSet({
            executions: (eb) => eb('execution_hours.executions', '+', eb.ref('excluded.executions')),
          }),
        )
        .execute();
      return true;
    });
  }

  /**
   * On PostgreSQL, one run's execution as `insertExecutions(workflowId, [entry])` stores it, in
   * one statement after `guard` (a data-modifying statement with RETURNING, its parameters
   * numbered from $1: a job marked done, server/store/pg-boss-queue.ts), and only if the guard
   * returned a row: one round trip where a transaction of the guard and three writes was six
   * (issue 27, item 9). Rows are taken in the order the separate statements took them: the
   * guard's, the workflow's, then its hour's. Answers whether the guard returned a row and
   * whether the execution was stored (not when the workflow is gone).
   */
  async insertExecutionAfter(
    workflowId: string,
    entry: ExecutionLogEntry,
    guard: { sql: string; parameters: unknown[] },
  ): Promise<{ guarded: boolean; stored: boolean }> {
    const at = (n: number) => `$${guard.parameters.length + n}`;
    const { rows } = await this.connection.db.executeQuery<{ guarded: boolean; stored: boolean }>(
      CompiledQuery.raw(
        `WITH guard AS (${guard.sql}),
        bumped AS (UPDATE workflows SET logs_version = logs_version + 1
          WHERE id = ${at(1)}::text AND EXISTS (SELECT FROM guard) RETURNING id),
        execution AS (INSERT INTO executions (id, workflow_id, started_at, stopped_at, finished, results)
          SELECT ${at(2)}::text, id, ${at(3)}::text, ${at(4)}::text, ${at(5)}::integer, ${at(6)}::text FROM bumped),
        hour AS (INSERT INTO execution_hours (workflow_id, hour, executions) SELECT id, ${at(7)}::text, 1 FROM bumped
          ON CONFLICT (workflow_id, hour) DO UPDATE SET executions = execution_hours.executions + 1)
        SELECT EXISTS (SELECT FROM guard) AS guarded, EXISTS (SELECT FROM bumped) AS stored`,
        [
          ...guard.parameters,
          workflowId,
          entry.executionId,
          entry.startedAt,
          entry.stoppedAt,
          entry.finished ? 1 : 0,
          JSON.stringify(entry.results),
          hourOf(entry.startedAt),
        ],
      ),
    );
    return rows[0]!;
  }

  /**
   * On PostgreSQL, runs as `insertExecutionAfter` stores each, in one statement after `guard`,
   * which marks their jobs done and returns the `id` (a uuid) of each it marked: a run whose job
   * it did not return is not stored; of the others, those whose workflow is still there are. The
   * workflows' rows are locked in the order every shared write takes them (by id, as
   * `CommitGroup`'s members and a user's deletion do), before their hours' rows (also in order),
   * so that two batches, or a batch and a group, never wait for each other in a circle. Answers,
   * in the runs' order, whether each one's job was marked done and whether the run was stored.
   */
  async insertExecutionsAfter(
    runs: Array<{ workflowId: string; entry: ExecutionLogEntry; jobId: string }>,
    guard: { sql: string; parameters: unknown[] },
  ): Promise<Array<{ guarded: boolean; stored: boolean }>> {
    const at = (n: number) => `$${guard.parameters.length + n}`;
    const { rows } = await this.connection.db.executeQuery<{ guarded: boolean; stored: boolean }>(
      CompiledQuery.raw(
        `WITH guard AS (${guard.sql}),
        input AS (SELECT * FROM unnest(${at(1)}::uuid[], ${at(2)}::text[], ${at(3)}::text[], ${at(4)}::text[],
          ${at(5)}::text[], ${at(6)}::integer[], ${at(7)}::text[], ${at(8)}::text[]) WITH ORDINALITY
          AS i (job_id, workflow_id, id, started_at, stopped_at, finished, results, hour, n)),
        kept AS (SELECT * FROM input WHERE job_id IN (SELECT id FROM guard)),
        locked AS (SELECT id FROM workflows WHERE id IN (SELECT workflow_id FROM kept)
          ORDER BY id COLLATE "C" FOR UPDATE),
        bumped AS (UPDATE workflows SET logs_version = logs_version + runs.count
          FROM (SELECT workflow_id, count(*) AS count FROM kept GROUP BY workflow_id) runs
          WHERE workflows.id = runs.workflow_id AND workflows.id IN (SELECT id FROM locked) RETURNING workflows.id),
        execution AS (INSERT INTO executions (id, workflow_id, started_at, stopped_at, finished, results)
          SELECT id, workflow_id, started_at, stopped_at, finished, results FROM kept
          WHERE workflow_id IN (SELECT id FROM bumped)),
        hour AS (INSERT INTO execution_hours (workflow_id, hour, executions)
          SELECT workflow_id, hour, count(*) FROM kept WHERE workflow_id IN (SELECT id FROM bumped)
          GROUP BY workflow_id, hour ORDER BY workflow_id COLLATE "C", hour COLLATE "C"
          ON CONFLICT (workflow_id, hour) DO UPDATE SET executions = execution_hours.executions + excluded.executions)
        SELECT job_id IN (SELECT id FROM guard) AS guarded,
          job_id IN (SELECT id FROM guard) AND workflow_id IN (SELECT id FROM bumped) AS stored
        FROM input ORDER BY n`,
        [
          ...guard.parameters,
          runs.map((run) => run.jobId),
          runs.map((run) => run.workflowId),
          runs.map((run) => run.entry.executionId),
          runs.map((run) => run.entry.startedAt),
          runs.map((run) => run.entry.stoppedAt),
          runs.map((run) => (run.entry.finished ? 1 : 0)),
          runs.map((run) => JSON.stringify(run.entry.results)),
          runs.map((run) => hourOf(run.entry.startedAt)),
        ],
      ),
    );
    return rows;
  }

  /** Whether the execution `id` finished; undefined while it is not stored. */
  async executionFinished(id: string): Promise<boolean | undefined> {
    const row = await this.connection.db
      .selectFrom('executions')
      .select('finished')
      .where('id', '=', id)
      .executeTakeFirst();
    return row && Number(row.finished) === 1;
  }

  /**
   * A child workflow's owner and its logs version (how many times runs were stored for it);
   * undefined when there is no such child. Every logs request reads it.
   */
  async getChildWithLogsVersion(id: string): Promise<{ child: ChildOwner; logsVersion: number } | undefined> {
    const { db, dialect } = this.connection;
    const row =
      dialect === 'postgres' && !db.isTransaction
        ? await this.headsInTurn.read(id)
        : (await this.headQuery.rows(db, [id]))[0];
    return row && { child: { id: row.id, userId: row.user_id }, logsVersion: Number(row.logs_version) };
  }

  /**
   * A child workflow with one page of its execution log, newest or oldest first; undefined when
   * there is no such child. The logs route must know the child (its owner) before it answers,
   * and reading both in one query spares a round trip to the database on every request.
   */
  async getChildWithExecutions(
    id: string,
    page: number,
    limit: number,
    order: 'asc' | 'desc',
  ): Promise<{ child: ChildRow; executions: StoredExecution[] } | undefined> {
    const { db } = this.connection;
    const first = await pageStart(db, id, (page - 1) * limit, order);
    if (!first) {
      const child = await this.children.get(id);
      return child && { child, executions: [] };
    }
    const entries = db
      .selectFrom('executions')
      .select(['id as x_id', 'started_at as x_started_at', 'stopped_at as x_stopped_at', 'finished', 'results'])
      .where('workflow_id', '=', id)
      .where(sql<boolean>`(started_at, id) ${sql.raw(order === 'desc' ? '<=' : '>=')} ${first}`)
      .orderBy('started_at', order)
      .orderBy('id', order)
      .limit(limit);
    // One row per entry of the page, each with the child's columns; one row with no entry when
    // the page is empty; none when there is no such child.
    const rows = await db
      .selectFrom('workflows')
      .leftJoin(entries.as('x'), (join) => join.onTrue())
      .selectAll('workflows')
      .select(['x.x_id', 'x.x_started_at', 'x.x_stopped_at', 'x.finished', 'x.results'])
      .where('workflows.id', '=', id)
      .orderBy('x.x_started_at', order)
      .orderBy('x.x_id', order)
      .execute();
    if (rows.length === 0) return undefined;
    return {
      child: toChild(rows[0]!),
      executions: rows
        .filter((row) => row.x_id !== null)
        .map((row) => ({
          executionId: row.x_id!,
          startedAt: row.x_started_at!,
          stoppedAt: row.x_stopped_at!,
          finished: row.finished === 1,
          resultsJson: row.results!,
        })),
    };
  }

  async insertError(entry: Omit<ErrorLogEntry, '_id' | 'createdAt' | 'updatedAt' | '__v'>): Promise<ErrorLogEntry> {
    const now = new Date().toISOString();
    const row: RawError = {
      id: newId(),
      workflow_id: entry.workflowId,
      execution_id: entry.executionId,
      block_id: entry.blockId,
      block_type: entry.blockType,
      // A message may quote what a remote server sent; PostgreSQL text cannot hold NUL.
      error: entry.error.replaceAll('\0', '\uFFFD'),
      kind: entry.kind,
      created_at: now,
      updated_at: now,
      version: 0,
    };
    await this.connection.db.insertInto('error_logs').values(row).execute();
    return toErrorEntry(row);
  }

  async listErrors(workflowId: string): Promise<ErrorLogEntry[]> {
    const rows = await this.connection.db
      .selectFrom('error_logs')
      .select(ERROR_COLUMNS)
      .where('workflow_id', '=', workflowId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    return rows.map(toErrorEntry);
  }

  /**
   * The run health of every child workflow of a user, in one query: the latest execution, the
   * error entry of that execution when it failed, and the failures since `since`. Each subquery
   * walks one workflow's slice of an index (executions_by_workflow, error_logs_by_workflow), so
   * the answer stays quick however many runs a workflow has had.
   */
  async listHealth(userId: string, since: string): Promise<Array<Omit<WorkflowHealth, 'nextRunAt'>>> {
    const { rows } = await sql<{
      id: string;
      parent_id: string;
      active: number;
      run_id: string | null;
      started_at: string;
      stopped_at: string;
      finished: number;
      kind: ErrorKind | null;
      error: string;
      block_id: string;
      failed_at: string;
      failed: number;
    }>`
      SELECT w.id, w.parent_id, w.active,
          x.id AS run_id, x.started_at, x.stopped_at, x.finished,
          e.kind, e.error, e.block_id, e.created_at AS failed_at,
          CAST((SELECT COUNT(*) FROM error_logs c WHERE c.workflow_id = w.id AND c.created_at >= ${since}) AS INTEGER) AS failed
        FROM workflows w
        LEFT JOIN executions x ON x.id = (
          SELECT id FROM executions WHERE workflow_id = w.id ORDER BY started_at DESC, id DESC LIMIT 1)
        LEFT JOIN error_logs e ON x.finished = 0 AND e.execution_id = x.id AND e.id = (
          SELECT id FROM error_logs WHERE workflow_id = w.id ORDER BY created_at DESC, id DESC LIMIT 1)
        WHERE w.user_id = ${userId}
        ORDER BY w.created_at, w.id`.execute(this.connection.db);
    return rows.map((row) => ({
      workflowId: row.id,
      parentId: row.parent_id,
      active: row.active === 1,
      lastRun: row.run_id
        ? {
            executionId: row.run_id,
            startedAt: row.started_at,
            stoppedAt: row.stopped_at,
            finished: row.finished === 1,
          }
        : null,
      failedLast24h: row.failed,
      failure: row.kind
        ? { kind: row.kind, error: row.error, blockId: row.block_id, integration: null, createdAt: row.failed_at }
        : null,
    }));
  }
}

/**
 * The query that finds a page's first entry (its `started_at` and `id`), for the page to be
 * read from there on; null when the page is past the last entry.
 */
async function pageStart(db: Handle, workflowId: string, offset: number, order: 'asc' | 'desc') {
  // The page's first entry is sought in the index alone (workflow_id, started_at, id): skipped
  // entries cost an index step, never a row read.
  const first = db
    .selectFrom('executions')
    .select(['started_at', 'id'])
    .where('workflow_id', '=', workflowId)
    .orderBy('started_at', order)
    .orderBy('id', order)
    .limit(1);
  if (offset < INDEX_SKIP_LIMIT) return first.offset(offset);
  // A deep page: the hour counts give the hour that holds its first entry and how many
  // entries come before that hour, so only the entries of that hour are skipped.
  const hour = await db
    .selectFrom((qb) =>
      qb
        .selectFrom('execution_hours')
        .select([
          'hour',
          'executions',
          sql<number>`SUM(executions) OVER (ORDER BY hour ${sql.raw(order === 'desc' ? 'DESC' : 'ASC')})`.as('through'),
        ])
        .where('workflow_id', '=', workflowId)
        .as('hours'),
    )
    .select(['hour', sql<number>`through - executions`.as('before')])
    .where('through', '>', offset)
    .orderBy('hour', order)
    .limit(1)
    .executeTakeFirst();
  if (!hour) return null;
  return (
    first
      // Whole times, compared with whole times: before the next hour, or from the hour on.
      .where(
        'started_at',
        order === 'desc' ? '<' : '>=',
        order === 'desc' ? startOfHour(hour.hour, 1) : startOfHour(hour.hour, 0),
      )
      .offset(offset - Number(hour.before))
  );
}
