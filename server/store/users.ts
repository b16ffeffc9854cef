import type { User } from 'forge-embed/client';
import { sql } from 'kysely';
import { newId, type StoreClass } from './base.js';

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
      return this.db
        .selectFrom('users')
        .select(['id as _id', 'email', 'full_name as fullName'])
        .where('id', '=', id)
        .executeTakeFirst();
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
  };
}
