import { sql } from 'kysely';
import { ChildRepository } from './children.js';
import { CommitGroup } from './commit-group.js';
import { type Connection, type Dialect, type Handle, inTransaction, type TransactionHandle } from './connection.js';
import { CredentialRepository } from './credentials.js';
import { openDatabase } from './database.js';
import { DeliveryRepository } from './deliveries.js';
import { LogRepository } from './logs.js';
import { OAuthRepository } from './oauth.js';
import type { PoolUse } from './pool-use.js';
import type { PoolOptions } from './postgres.js';
import { RateCountRepository } from './rate-counts.js';
import { migrate } from './schema.js';
import { SettingRepository } from './settings.js';
import { SigningKeyRepository } from './signing-keys.js';
import { readTransactionOf } from './sqlite.js';
import { UserRepository } from './users.js';
import { WebhookRequestRepository } from './webhook-requests.js';

export type { ChildRow } from './children.js';
export { type Dialect, newId } from './connection.js';
export { databaseUnavailable, describeDatabase, isPostgresUrl, uniqueViolation } from './database.js';
export type { PendingDelivery } from './deliveries.js';
export type { StoredExecution } from './logs.js';
export type { OAuthState, PendingGrant } from './oauth.js';
export type { SigningKeyRow } from './signing-keys.js';

/**
 * All persistent state of the service: one SQLite file, or a PostgreSQL database. Each concern
 * is a repository of its own (`store.users`, `store.children`, …, one module beside this file
 * each) over one shared handle; every method is async and means the same on both backends.
 * `H` is the handle's kind: a store that `transaction(work)` hands its work is bound to the
 * transaction (a `StoreTransaction`), and whatever needs one says so by taking that type.
 */
export class Store<H extends Handle = Handle> {
  /** The query builder; in a StoreTransaction, the transaction's. */
  readonly db: H;
  readonly dialect: Dialect;
  readonly settings: SettingRepository;
  readonly users: UserRepository;
  readonly credentials: CredentialRepository;
  readonly children: ChildRepository<H>;
  readonly logs: LogRepository;
  readonly oauth: OAuthRepository;
  readonly deliveries: DeliveryRepository;
  readonly webhookRequests: WebhookRequestRepository;
  readonly signingKeys: SigningKeyRepository;
  readonly rateCounts: RateCountRepository;
  /** The migrations that opening the database applied (none when it was up to date). */
  migrated: string[] = [];
  /** Connections in use and queries waiting for one (the metrics); set on the store `open` made. */
  poolUse: PoolUse | undefined;
  private commitGroup: CommitGroup | undefined;

  constructor(connection: Connection<H>) {
    this.db = connection.db;
    this.dialect = connection.dialect;
    this.settings = new SettingRepository(connection);
    this.users = new UserRepository(connection);
    this.credentials = new CredentialRepository(connection);
    this.children = new ChildRepository(connection);
    this.logs = new LogRepository(connection, this.children);
    this.oauth = new OAuthRepository(connection);
    this.deliveries = new DeliveryRepository(connection);
    this.webhookRequests = new WebhookRequestRepository(connection);
    this.signingKeys = new SigningKeyRepository(connection);
    this.rateCounts = new RateCountRepository(connection);
  }

  /**
   * Opens (creating when missing) the database at `location` — a SQLite file, `:memory:`, or a
   * `postgres://` URL — and brings its schema up to date.
   */
  static async open(location: string, pool: PoolOptions = {}): Promise<Store> {
    const opened = await openDatabase(location, pool);
    const store = new Store(opened);
    store.poolUse = opened.poolUse;
    try {
      const { results = [] } = await migrate(store.db, store.dialect);
      store.migrated = results.map((r) => r.migrationName);
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  /**
   * Runs `work` in one transaction: the writes of every repository it makes are saved together
   * or not at all. `work` gets the store bound to the transaction and must use it, not this
   * store, for every query (on SQLite the one connection is the transaction's until it ends).
   * Inside a transaction, runs in it.
   */
  async transaction<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    if (this.isTransaction()) return work(this);
    return inTransaction(this, (tx) => work(new Store(tx)));
  }

  /**
   * As `transaction(work)`, for the short writes that many requests make at once (a webhook call
   * accepted, a run stored): on SQLite the transaction may be shared, and so its commit (an
   * fsync), with others begun in the same turn of the event loop (server/store/commit-group.ts);
   * on PostgreSQL, whose server already flushes concurrent commits together, it is
   * `transaction(work)`. `work` makes database queries only: it holds the shared transaction.
   */
  async sharedTransaction<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    if (this.isTransaction() || this.dialect !== 'sqlite') return this.transaction(work);
    this.commitGroup ??= new CommitGroup((shared) => inTransaction(this, shared));
    return this.commitGroup.run((tx) => work(new Store(tx)));
  }

  /**
   * Runs reads together, each given the handle to read on, and answers their results in order.
   * On SQLite in one read transaction on its one connection: a statement of its own takes
   * SQLite's read locks and gives them back (an `fcntl` on the database file and on its `-shm`
   * file each way), which was most of the cost of a small read (issue 29, GET /setup); the reads
   * then also see one snapshot. A deferred BEGIN, not the IMMEDIATE one of `transaction`: it
   * takes no write lock, so it waits for no writer. On PostgreSQL side by side, each on a
   * connection of the pool: one round trip's wait. Inside a transaction, in it, one by one.
   */
  async readTogether<T extends unknown[]>(...reads: { [K in keyof T]: (db: Handle) => Promise<T[K]> }): Promise<T> {
    if (this.isTransaction()) {
      const results: unknown[] = [];
      for (const read of reads) results.push(await read(this.db));
      return results as T;
    }
    const transaction = readTransactionOf(this.db);
    if (!transaction) return Promise.all(reads.map((read) => read(this.db))) as Promise<T>;
    return this.db.connection().execute(async (db) => {
      transaction.begin();
      try {
        const results: unknown[] = [];
        for (const read of reads) results.push(await read(db));
        return results as T;
      } finally {
        transaction.end();
      }
    });
  }

  isTransaction(): this is StoreTransaction {
    return this.db.isTransaction;
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }

  /** Throws when the database cannot answer a query (for the readiness probe). */
  async ping(): Promise<void> {
    await sql`SELECT 1`.execute(this.db);
  }
}

/** The store bound to one transaction: what `store.transaction(work)` hands `work`. */
export type StoreTransaction = Store<TransactionHandle>;
