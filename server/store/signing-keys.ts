import { sql } from 'kysely';
import type { StoreClass } from './base.js';

export interface SigningKeyRow {
  kid: string;
  /** The private JWK, sealed with the SecretBox. */
  sealedKey: string;
  createdAt: number;
  /** When a newer key replaced it; null for the current key. */
  retiredAt: number | null;
}

/** The ring of token signing keys (server/auth.ts), each private key sealed. */
export function withSigningKeys<Base extends StoreClass>(base: Base) {
  return class SigningKeyQueries extends base {
    async listSigningKeys(): Promise<SigningKeyRow[]> {
      const rows = await this.db.selectFrom('signing_keys').selectAll().orderBy('created_at', 'desc').execute();
      return rows.map((row) => ({
        kid: row.kid,
        sealedKey: row.sealed_key,
        createdAt: row.created_at,
        retiredAt: row.retired_at,
      }));
    }

    /** Adds a key as the current one; every key that was current is retired at `now`. */
    async addSigningKey(kid: string, sealedKey: string, now: number): Promise<void> {
      await this.transaction(async (tx) => {
        // Two rotations at once must leave one current key. SQLite's transactions already run one
        // at a time (BEGIN IMMEDIATE); on PostgreSQL the second waits here for the first's lock on
        // the ring, and then retires the key the first added.
        if (tx.dialect === 'postgres') await sql`LOCK TABLE signing_keys IN SHARE ROW EXCLUSIVE MODE`.execute(tx.db);
        await tx.db.updateTable('signing_keys').set({ retired_at: now }).where('retired_at', 'is', null).execute();
        await tx.db.insertInto('signing_keys').values({ kid, sealed_key: sealedKey, created_at: now }).execute();
      });
    }

    /** Removes keys retired before `before`; answers their kids. */
    async dropSigningKeysRetiredBefore(before: number): Promise<string[]> {
      const rows = await this.db.deleteFrom('signing_keys').where('retired_at', '<', before).returning('kid').execute();
      return rows.map((row) => row.kid);
    }
  };
}
