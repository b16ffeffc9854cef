import type { Kysely } from 'kysely';

/**
 * A delivery that failed its last allowed attempt stays in the outbox as a dead letter
 * (`dead_at`, when it was given up on): no worker takes it, the host lists it and sends it
 * again with the API key (issue 27).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('deliveries').addColumn('dead_at', 'bigint').execute();
}
