import type { Kysely } from 'kysely';

/**
 * The scheduler reads a parent's active children; the outbox holds every error log entry until
 * each channel of the host (error webhook, event bus) has taken it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('workflows_by_parent').on('workflows').columns(['parent_id', 'active']).execute();
  await db.schema
    .createTable('deliveries')
    .addColumn('error_id', 'text', (c) => c.notNull().references('error_logs.id').onDelete('cascade'))
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('due_at', 'bigint', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addPrimaryKeyConstraint('deliveries_pkey', ['error_id', 'channel'])
    .execute();
  await db.schema.createIndex('deliveries_by_due').on('deliveries').column('due_at').execute();
}
