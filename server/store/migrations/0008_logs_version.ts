import type { Kysely } from 'kysely';

/**
 * Each child workflow counts the times runs were stored for it (issue 29): a logs page read at
 * one count is the same page at that count on every instance, so it can be kept and sent again
 * until the count moves, instead of read from the executions at every request.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('workflows')
    .addColumn('logs_version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
