import type { User } from 'forge-embed/client';
import { type CompiledQuery, sql } from 'kysely';
import { newId, type StoreClass } from './base.js';

/** GET-a-user's query, compiled, by the Kysely instance it was compiled for. */
const getUserQueries = new WeakMap<object, CompiledQuery<User>>();

/** The host's users, and the integration credentials each has connected (sealed). */
export function withUsers<Base extends StoreClass>(base: Base) {
  return class UserQueries extends base {
    async createUser(fullName: string, email: string): Promise<string> {
      const id = newId();
      await this.db
        .insertInto('users')
        .values({ id, email, full_name: fullName, created_at: new Date().toISOString() })
        .execute();
      return id;
    }

    async listUsers(): Promise<User[]> {
      return this.db
        .selectFrom('users')
        .select(['id as _id', 'email', 'full_name as fullName'])
        .orderBy('created_at')
        .orderBy('id')
        .execute();
    }

    async getUser(id: string): Promise<User | undefined> {
      // Every request with a user token reads its user: the query is built and compiled once
      // per database, not per request (issue 29); only its parameter changes.
      let query = getUserQueries.get(this.db);
      if (!query) {
        query = this.db
          .selectFrom('users')
          .select(['id as _id', 'email', 'full_name as fullName'])
          .where('id', '=', '')
          .compile();
        getUserQueries.set(this.db, query);
      }
      const { rows } = await this.db.executeQuery<User>({ ...query, parameters: [id] });
      return rows[0];
    }

    async updateUser(id: string, fullName: string, email: string): Promise<boolean> {
      const result = await this.db
        .updateTable('users')
        .set({ full_name: fullName, email })
        .where('id', '=', id)
        .executeTakeFirst();
      return result.numUpdatedRows === 1n;
    }

    /**
     * Removes the user and, through the foreign keys, its workflows, credentials, logs and errors,
     * for real: on SQLite secure_delete zeroes the freed space, and the write-ahead log, which
     * still holds earlier copies of the pages, is emptied.
     */
    async deleteUser(id: string): Promise<boolean> {
      const result = await this.db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
      const deleted = result.numDeletedRows === 1n;
      if (deleted && this.dialect === 'sqlite' && !this.db.isTransaction) {
        await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(this.db);
      }
      return deleted;
    }

    /** Stores a new connection: it is `connected` from now on, whatever the one it replaces was. */
    async saveCredential(
      userId: string,
      integration: string,
      sealedSecret: string,
      account: string | null = null,
    ): Promise<string> {
      const connectedAt = new Date().toISOString();
      await this.db
        .insertInto('credentials')
        .values({
          user_id: userId,
          integration,
          secret: sealedSecret,
          connected_at: connectedAt,
          status: 'connected',
          account,
        })
        .onConflict((oc) =>
          oc.columns(['user_id', 'integration']).doUpdateSet({
            secret: (eb) => eb.ref('excluded.secret'),
            connected_at: (eb) => eb.ref('excluded.connected_at'),
            status: 'connected',
            account: (eb) => eb.ref('excluded.account'),
          }),
        )
        .execute();
      return connectedAt;
    }

    async listCredentials(userId: string): Promise<Array<{ integration: string; connectedAt: string }>> {
      return this.db
        .selectFrom('credentials')
        .select(['integration', 'connected_at as connectedAt'])
        .where('user_id', '=', userId)
        .orderBy('integration')
        .execute();
    }

    async getCredentialSecret(userId: string, integration: string): Promise<string | undefined> {
      const row = await this.db
        .selectFrom('credentials')
        .select('secret')
        .where('user_id', '=', userId)
        .where('integration', '=', integration)
        .executeTakeFirst();
      return row?.secret;
    }

    /**
     * One connection's row: its sealed secret and status. `forUpdate` locks the row until the
     * transaction ends (PostgreSQL; SQLite has one writer anyway), so of several instances that
     * want to refresh the same token, one does and the others read its result.
     */
    async getConnection(
      userId: string,
      integration: string,
      { forUpdate = false }: { forUpdate?: boolean } = {},
    ): Promise<{ secret: string; status: 'connected' | 'broken' } | undefined> {
      let query = this.db
        .selectFrom('credentials')
        .select(['secret', 'status'])
        .where('user_id', '=', userId)
        .where('integration', '=', integration);
      if (forUpdate && this.dialect === 'postgres') query = query.forUpdate();
      return query.executeTakeFirst();
    }

    /** A refreshed token replaces the stored one; the connection stays as it was connected. */
    async replaceConnectionSecret(userId: string, integration: string, sealedSecret: string): Promise<void> {
      await this.db
        .updateTable('credentials')
        .set({ secret: sealedSecret })
        .where('user_id', '=', userId)
        .where('integration', '=', integration)
        .execute();
    }

    /** The provider refused the grant: runs fail at once until the user connects again. */
    async markConnectionBroken(userId: string, integration: string): Promise<void> {
      await this.db
        .updateTable('credentials')
        .set({ status: 'broken' })
        .where('user_id', '=', userId)
        .where('integration', '=', integration)
        .execute();
    }
  };
}
