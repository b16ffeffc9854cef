import type { Kysely } from 'kysely';

/**
 * OAuth bound to the browser that started it: the authorize link works once, and a grant waits,
 * pending, until the element that started the flow confirms it (server/oauth-grants.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('oauth_states')
    .addColumn('opened', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('oauth_grants')
    .addColumn('confirmation_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('integration', 'text', (c) => c.notNull())
    .addColumn('opener_origin', 'text', (c) => c.notNull())
    .addColumn('grant_secret', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
}
