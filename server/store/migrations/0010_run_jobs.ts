import { type Kysely, SqliteAdapter } from 'kysely';

/**
 * Runs stand on a job queue (issue 27):
 * - `jobs` (SQLite only): the queue of runs, a scheduled minute of a child or an accepted
 *   webhook call each, leased by the database's clock. On PostgreSQL the queue is pg-boss, in
 *   its own schema (`pgboss`), which it creates and migrates itself.
 * - `webhook_requests`: a webhook call's `Idempotency-Key` and the execution it started, so a
 *   repeat within 24 hours answers that execution and starts nothing.
 * - `schedule_claims` goes: a minute is a job now, and its id keeps it from being taken twice.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) {
    await db.schema
      .createTable('jobs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('run_after', 'bigint', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('leased_by', 'text')
      .addColumn('lease_until', 'bigint')
      .addColumn('done_at', 'bigint')
      .execute();
    await db.schema.createIndex('jobs_by_state').on('jobs').columns(['state', 'run_after']).execute();
  }
  await db.schema
    .createTable('webhook_requests')
    .addColumn('workflow_id', 'text', (c) => c.notNull().references('workflows.id').onDelete('cascade'))
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('execution_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_requests_pkey', ['workflow_id', 'idempotency_key'])
    .execute();
  await db.schema.createIndex('webhook_requests_by_age').on('webhook_requests').column('created_at').execute();
  await db.schema.dropTable('schedule_claims').execute();
}
