import { sql } from 'kysely';
import { type Connection, inTransaction } from './connection.js';

export interface SigningKeyRow {
  kid: string;
  /** The private JWK, sealed with the SecretBox. */
  sealedKey: string;
  createdAt: number;
  /** When a newer key replaced it; null for the current key. */
  retiredAt: number | null;
}

/** The ring of token signing keys (server/auth.ts), each private key sealed. */
export class SigningKeyRepository {
  constructor(private readonly connection: Connection) {}

  async list(): Promise<SigningKeyRow[]> {
    const rows = await this.connection.db
      .selectFrom('signing_keys')
      .selectAll()
      .orderBy('created_at', 'desc')
      .execute();
    return rows.map((row) => ({
      kid: row.kid,
      sealedKey: row.sealed_key,
      createdAt: row.created_at,
      retiredAt: row.retired_at,
    }));
  }

  /** Adds a key as the current one; every key that was current is retired at `now`. */
  async add(kid: string, sealedKey: string, now: number): Promise<void> {
    await inTransaction(this.connection, async ({ db, dialect }) => {
      // Two rotations at once must leave one current key. SQLite's transactions already run one
      // at a time (BEGIN IMMEDIATE); on PostgreSQL the second waits here for the first's lock on
      // the ring, and then retires the key the first added.
      if (dialect === 'postgres') await sql`LOCK TABLE signing_keys IN SHARE ROW EXCLUSIVE MODE`.execute(db);
      await db.updateTable('signing_keys').set({ retired_at: now }).where('retired_at', 'is', null).execute();
      await db.insertInto('signing_keys').values({ kid, sealed_key: sealedKey, created_at: now }).execute();
    });
  }

  /** Removes keys retired before `before`; answers their kids. */
  async dropRetiredBefore(before: number): Promise<string[]> {
    const rows = await this.connection.db
      .deleteFrom('signing_keys')
      .where('retired_at', '<', before)
      .returning('kid')
      .execute();
    return rows.map((row) => row.kid);
  }
}
