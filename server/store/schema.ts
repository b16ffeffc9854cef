import { type Generated, type Kysely, sql } from 'kysely';
import { type Migration, type MigrationResultSet, Migrator } from 'kysely/migration';
import * as tables from './migrations/0001_tables.js';
import * as deliveryOutbox from './migrations/0002_delivery_outbox.js';
import * as oauthGrants from './migrations/0003_oauth_grants.js';
import * as executionHours from './migrations/0004_execution_hours.js';
import * as instances from './migrations/0005_instances.js';
import * as errorKind from './migrations/0006_error_kind.js';
import * as connections from './migrations/0007_connections.js';
import * as logsVersion from './migrations/0008_logs_version.js';
import * as deadLetters from './migrations/0009_dead_letters.js';
import * as runJobs from './migrations/0010_run_jobs.js';
import * as ownVersion from './migrations/0011_own_version.js';

/** The tables as the store reads and writes them (both backends store the same values). */
export interface Tables {
  settings: { key: string; value: string };
  users: {
    id: string;
    email: string;
    full_name: string;
    created_at: string;
    /** How many times the user's workflows and connections were written (triggers move it): GET /setup's version. */
    own_version: Generated<number>;
  };
  workflows: {
    id: string;
    user_id: string;
    parent_id: string;
    /** 1 or 0: one column type on both backends. */
    active: number;
    /** JSON text. */
    variables: string;
    webhook_token: string;
    created_at: string;
    updated_at: string;
    /** How many times runs were stored for the workflow: the version of its logs pages. */
    logs_version: number;
  };
  credentials: {
    user_id: string;
    integration: string;
    secret: string;
    connected_at: string;
    /** `connected`, or `broken` once the provider refused the grant (a new connection clears it). */
    status: Generated<'connected' | 'broken'>;
    /** A display label the provider gave (a workspace, an e-mail); never a secret. */
    account: string | null;
  };
  executions: {
    id: string;
    workflow_id: string;
    started_at: string;
    stopped_at: string;
    finished: number;
    results: string;
  };
  error_logs: {
    id: string;
    workflow_id: string;
    execution_id: string;
    block_id: string;
    block_type: string;
    error: string;
    /** What kind of problem (ErrorKind), decided when the entry is recorded. */
    kind: Generated<'connection' | 'settings' | 'app' | 'internal'>;
    created_at: string;
    updated_at: string;
    version: Generated<number>;
  };
  oauth_states: {
    state: string;
    user_id: string;
    integration: string;
    opener_origin: string;
    code: string | null;
    /** Sealed: the flow's PKCE verifier and the connection values given before the redirect. */
    sealed_flow: string | null;
    expires_at: number;
    opened: Generated<number>;
  };
  oauth_grants: {
    confirmation_hash: string;
    user_id: string;
    integration: string;
    opener_origin: string;
    grant_secret: string;
    expires_at: number;
  };
  /** Executions per workflow and hour of their start (`2026-11-23T11`): the logs page index. */
  execution_hours: { workflow_id: string; hour: string; executions: number };
  deliveries: {
    error_id: string;
    channel: string;
    attempts: Generated<number>;
    due_at: number;
    last_error: string | null;
    leased_by: string | null;
    lease_until: number | null;
    /** When the last allowed attempt failed (the database's clock): a dead letter, which no worker takes. */
    dead_at: number | null;
  };
  /** The run queue on SQLite (server/store/jobs.ts); pg-boss's tables on PostgreSQL. */
  jobs: {
    id: string;
    /** JSON text: the job's JobData. */
    data: string;
    state: 'ready' | 'active' | 'done';
    run_after: number;
    attempts: Generated<number>;
    leased_by: string | null;
    lease_until: number | null;
    done_at: number | null;
  };
  webhook_requests: { workflow_id: string; idempotency_key: string; execution_id: string; created_at: number };
  signing_keys: { kid: string; sealed_key: string; created_at: number; retired_at: number | null };
  rate_counts: { key: string; window_start: number; count: number };
}

/**
 * Every migration, in the order they apply; the name is what the database records. The first
 * three are the steps that earlier versions counted in SQLite's `user_version`.
 */
export const MIGRATIONS: Record<string, Migration> = {
  '0001_tables': tables,
  '0002_delivery_outbox': deliveryOutbox,
  '0003_oauth_grants': oauthGrants,
  '0004_execution_hours': executionHours,
  '0005_instances': instances,
  '0006_error_kind': errorKind,
  '0007_connections': connections,
  '0008_logs_version': logsVersion,
  '0009_dead_letters': deadLetters,
  '0010_run_jobs': runJobs,
  '0011_own_version': ownVersion,
};

/** Where Kysely's Migrator records what it applied (its default name). */
const MIGRATION_TABLE = 'kysely_migration';

/**
 * Brings the database to the latest schema; safe to run from several instances at once (the
 * Migrator takes a lock). Throws with every failed step's error.
 */
export async function migrate(db: Kysely<Tables>, dialect: 'sqlite' | 'postgres'): Promise<MigrationResultSet> {
  if (dialect === 'sqlite') await adoptVersionedSqlite(db);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => MIGRATIONS },
    migrationTableName: MIGRATION_TABLE,
  });
  const result = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(
      `The database could not be migrated${failed ? ` (step ${failed})` : ''}: ${(result.error as Error).message ?? result.error}`,
      { cause: result.error },
    );
  }
  if (dialect === 'sqlite') {
    // Still counted where earlier versions look, so one of them opening this file finds its
    // schema in place instead of creating its tables again.
    const applied = (await migrator.getMigrations()).filter((m) => m.executedAt !== undefined).length;
    await sql.raw(`PRAGMA user_version = ${applied}`).execute(db);
  }
  return result;
}

/**
 * A SQLite database made before the Migrator counted its schema steps in `user_version`: the
 * first that many migrations are already in it, so they are recorded as applied (in the
 * Migrator's own table, as it would have written them) and only the later ones run.
 */
async function adoptVersionedSqlite(db: Kysely<Tables>): Promise<void> {
  const { rows } = await sql<{ user_version: number }>`PRAGMA user_version`.execute(db);
  const steps = rows[0]?.user_version ?? 0;
  if (steps === 0) return;
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  if (tables.some((t) => t.name === MIGRATION_TABLE)) return;
  const names = Object.keys(MIGRATIONS).slice(0, steps);
  await db.transaction().execute(async (trx) => {
    await trx.schema
      .createTable(MIGRATION_TABLE)
      .addColumn('name', 'varchar(255)', (c) => c.notNull().primaryKey())
      .addColumn('timestamp', 'varchar(255)', (c) => c.notNull())
      .execute();
    const timestamp = new Date().toISOString();
    await (trx as unknown as Kysely<Record<string, { name: string; timestamp: string }>>)
      .insertInto(MIGRATION_TABLE)
      .values(names.map((name) => ({ name, timestamp })))
      .execute();
  });
}
