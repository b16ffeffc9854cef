import type { User } from 'forge-embed/client';
import { sql } from 'kysely';
import { CompiledOnce, type Connection, inTransaction, isTransaction, newId } from './connection.js';

/** The host's users. */
export class UserRepository {
  private readonly getQuery = new CompiledOnce((db) =>
    db.selectFrom('users').select(['id as _id', 'email', 'full_name as fullName']).where('id', '=', ''),
  );

  private readonly withOwnVersionQuery = new CompiledOnce((db) =>
    db.selectFrom('users').select(['id', 'email', 'full_name', 'own_version']).where('id', '=', ''),
  );

  constructor(private readonly connection: Connection) {}

  async create(fullName: string, email: string): Promise<string> {
    const id = newId();
    await this.connection.db
      .insertInto('users')
      .values({ id, email, full_name: fullName, created_at: new Date().toISOString() })
      .execute();
    return id;
  }

  async list(): Promise<User[]> {
    return this.connection.db
      .selectFrom('users')
      .select(['id as _id', 'email', 'full_name as fullName'])
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async get(id: string): Promise<User | undefined> {
    // Every request with a user token reads its user (issue 29).
    const [user] = await this.getQuery.rows(this.connection.db, [id]);
    return user;
  }

  /**
   * A user (as `get` answers it) and the version of their workflows and connections, which every
   * write to either moves (triggers, migration 0011): what GET /setup's credential check reads, so
   * that an answer kept at that version is sent without reading them (issue 29).
   */
  async getWithOwnVersion(id: string): Promise<{ user: User; ownVersion: number } | undefined> {
    const [row] = await this.withOwnVersionQuery.rows(this.connection.db, [id]);
    return (
      row && { user: { _id: row.id, email: row.email, fullName: row.full_name }, ownVersion: Number(row.own_version) }
    );
  }

  async update(id: string, fullName: string, email: string): Promise<boolean> {
    const result = await this.connection.db
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
  async delete(id: string): Promise<boolean> {
    const { db, dialect } = this.connection;
    const result =
      dialect === 'postgres'
        ? await inTransaction(this.connection, async (tx) => {
            // The workflows' rows first, in the order of their ids: the order in which a group
            // commit of runs takes them (server/store/commit-group.ts). The deletion's cascade
            // takes them in the table's order, which moves as rows are written again: a group
            // holding one workflow and waiting for another the cascade holds was a deadlock
            // (issue 27, item 9; store.test.ts).
            await sql`SELECT id FROM workflows WHERE user_id = ${id} ORDER BY id COLLATE "C" FOR UPDATE`.execute(tx.db);
            return tx.db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
          })
        : await db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
    const deleted = result.numDeletedRows === 1n;
    if (deleted && dialect === 'sqlite' && !isTransaction(this.connection)) {
      await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db);
    }
    return deleted;
  }
}
