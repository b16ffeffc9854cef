import { sql } from 'kysely';
import { StoreBase } from './base.js';
import { withChildren } from './children.js';
import { openDatabase } from './database.js';
import { withDeliveries } from './deliveries.js';
import { withLogs } from './logs.js';
import { withOAuth } from './oauth.js';
import type { PoolOptions } from './postgres.js';
import { withRateCounts } from './rate-counts.js';
import { migrate } from './schema.js';
import { withSettings } from './settings.js';
import { withSigningKeys } from './signing-keys.js';
import { withUsers } from './users.js';

export { type Dialect, newId } from './base.js';
export type { ChildRow } from './children.js';
export { databaseUnavailable, describeDatabase, isPostgresUrl, uniqueViolation } from './database.js';
export type { PendingDelivery } from './deliveries.js';
export type { StoredExecution } from './logs.js';
export type { OAuthState, PendingGrant } from './oauth.js';
export type { SigningKeyRow } from './signing-keys.js';

/**
 * All persistent state of the service: one SQLite file, or a PostgreSQL database. Every method
 * is async and means the same on both backends. The queries live beside this file, one module
 * per concern; `Store` is their sum.
 */
export class Store extends withRateCounts(
  withSigningKeys(withDeliveries(withOAuth(withLogs(withChildren(withUsers(withSettings(StoreBase))))))),
) {
  /** The migrations that opening the database applied (none when it was up to date). */
  migrated: string[] = [];

  /**
   * Opens (creating when missing) the database at `location` — a SQLite file, `:memory:`, or a
   * `postgres://` URL — and brings its schema up to date.
   */
  static async open(location: string, pool: PoolOptions = {}): Promise<Store> {
    const { db, dialect } = await openDatabase(location, pool);
    const store = new Store(db, dialect);
    try {
      const { results = [] } = await migrate(store.db, store.dialect);
      store.migrated = results.map((r) => r.migrationName);
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }

  /** Throws when the database cannot answer a query (for the readiness probe). */
  async ping(): Promise<void> {
    await sql`SELECT 1`.execute(this.db);
  }
}
