import type { Kysely } from 'kysely';

/**
 * The tables of the first release. Times the service shows are ISO 8601 text (they sort as
 * text on both backends); times it only compares (expiries) are milliseconds since the epoch,
 * which need 64 bits: `bigint` (SQLite gives it the same INTEGER affinity as before).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('full_name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('workflows')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('parent_id', 'text', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('variables', 'text', (c) => c.notNull())
    .addColumn('webhook_token', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    // One installation of a parent per user: concurrent installs meet here, not in a read.
    .addUniqueConstraint('workflows_user_parent', ['user_id', 'parent_id'])
    .execute();
  await db.schema
    .createTable('credentials')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('integration', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('connected_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('credentials_pkey', ['user_id', 'integration'])
    .execute();
  await db.schema
    .createTable('executions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workflow_id', 'text', (c) => c.notNull().references('workflows.id').onDelete('cascade'))
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('stopped_at', 'text', (c) => c.notNull())
    .addColumn('finished', 'integer', (c) => c.notNull())
    .addColumn('results', 'text', (c) => c.notNull())
    .execute();
  // Logs are read a page at a time per workflow, newest or oldest first.
  await db.schema
    .createIndex('executions_by_workflow')
    .on('executions')
    .columns(['workflow_id', 'started_at', 'id'])
    .execute();
  await db.schema
    .createTable('error_logs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workflow_id', 'text', (c) => c.notNull().references('workflows.id').onDelete('cascade'))
    .addColumn('execution_id', 'text', (c) => c.notNull())
    .addColumn('block_id', 'text', (c) => c.notNull())
    .addColumn('block_type', 'text', (c) => c.notNull())
    .addColumn('error', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('error_logs_by_workflow')
    .on('error_logs')
    .columns(['workflow_id', 'created_at'])
    .execute();
  await db.schema
    .createTable('oauth_states')
    .addColumn('state', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('integration', 'text', (c) => c.notNull())
    .addColumn('opener_origin', 'text', (c) => c.notNull())
    .addColumn('code', 'text')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
}
