import type { Kysely } from 'kysely';

/**
 * Real apps (issue 24): a connection has a status (`connected`, or `broken` once the provider
 * refused its grant) and an account label the provider gave; an OAuth flow keeps its PKCE
 * verifier and the values the user gave before the redirect, sealed, beside its state.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('credentials')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('connected'))
    .execute();
  await db.schema.alterTable('credentials').addColumn('account', 'text').execute();
  await db.schema.alterTable('oauth_states').addColumn('sealed_flow', 'text').execute();
}
