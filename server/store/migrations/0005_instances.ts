import type { Kysely } from 'kysely';

/**
 * Many instances on one database: what they must agree on lives here, not in a process.
 * - `schedule_claims`: one row per child workflow and scheduled minute; the instance whose insert
 *   wins runs it, so a minute runs once however many instances tick it.
 * - `deliveries.leased_by` / `lease_until`: the instance attempting a delivery, until when; a
 *   lease that ran out (its instance died) lets another take the delivery.
 * - `signing_keys`: the token-signing key ring, each private key sealed; the newest current key
 *   signs, retired ones verify until the tokens they signed have expired.
 * - `rate_counts`: fixed-window counters of the rate limits, one row per action, key and window.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('schedule_claims')
    .addColumn('workflow_id', 'text', (c) => c.notNull().references('workflows.id').onDelete('cascade'))
    .addColumn('minute', 'bigint', (c) => c.notNull())
    .addColumn('claimed_by', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('schedule_claims_pkey', ['workflow_id', 'minute'])
    .execute();
  await db.schema.createIndex('schedule_claims_by_minute').on('schedule_claims').column('minute').execute();
  await db.schema.alterTable('deliveries').addColumn('leased_by', 'text').execute();
  await db.schema.alterTable('deliveries').addColumn('lease_until', 'bigint').execute();
  await db.schema
    .createTable('signing_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('sealed_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('retired_at', 'bigint')
    .execute();
  await db.schema
    .createTable('rate_counts')
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('rate_counts_pkey', ['key', 'window_start'])
    .execute();
}
