import type { Kysely } from 'kysely';

/**
 * Run health: each error entry says what kind of problem it was (connection, settings, app,
 * internal), decided when it is recorded rather than guessed from its text when read. Entries
 * recorded before are `internal`, as nothing more is known of them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('error_logs')
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('internal'))
    .execute();
}
