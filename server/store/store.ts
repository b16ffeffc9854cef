import { sql } from 'kysely';
import { ChildRepository, type ChildRow, type RawChild, toChild } from './children.js';
import { CommitGroup } from './commit-group.js';
import {
  CompiledOnce,
  type Connection,
  type Dialect,
  type Handle,
  inTransaction,
  type TransactionHandle,
} from './connection.js';
import { type ConnectionSummary, CredentialRepository, connectionSummary } from './credentials.js';
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
import { UserRepository } from './users.js';
import { WebhookRequestRepository } from './webhook-requests.js';

export type { ChildRow } from './children.js';
export { type Dialect, newId } from './connection.js';
export { databaseUnavailable, describeDatabase, isPostgresUrl, uniqueViolation } from './database.js';
export type { PendingDelivery } from './deliveries.js';
export type { ChildOwner, StoredExecution } from './logs.js';
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
  // The columns of the two tables side by side, each row its own table's with the other's null;
  // children in their list's order, connections in theirs (their created_at and id are null).
  private readonly ownQuery = new CompiledOnce<OwnRow>((db) => ({
    compile: () =>
      sql<OwnRow>`select 'child' as kind, id, user_id, parent_id, active, variables, webhook_token, created_at,
 updated_at, logs_version, null as integration, null as connected_at, null as status, null as account
 from workflows where user_id = ${''}
 union all select 'connection', null, null, null, null, null, null, null, null, null, integration, connected_at,
 status, account from credentials where user_id = ${''}
 order by created_at, id, integration`.compile(db),
  }));

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
   * fsync), with others begun in the same turn of the event loop (server/store/commit-group.ts).
   * On PostgreSQL only writes given an `order` are shared (a run stored: every run of a workflow
   * updates its row, which each transaction would hold through its WAL flush, one after another),
   * with those that arrived while the group before committed, run in their `order` (the workflow
   * whose rows they lock), so that groups lock shared rows in one order; without an `order` it is
   * `transaction(work)`: the server flushes concurrent commits together itself. `work` makes
   * database queries only: it holds the shared transaction.
   */
  async sharedTransaction<T>(work: (tx: StoreTransaction) => Promise<T>, order?: string): Promise<T> {
    if (this.isTransaction() || (this.dialect !== 'sqlite' && order === undefined)) return this.transaction(work);
    return this.group().run((tx) => work(new Store(tx)), order);
  }

  private group(): CommitGroup {
    this.commitGroup ??= new CommitGroup((shared) => inTransaction(this, shared), this.dialect === 'postgres');
    return this.commitGroup;
  }

  /**
   * A write of one statement that many requests make at once (a webhook call accepted and taken
   * at once): on SQLite it shares a commit with others, as `sharedTransaction(work)`. On
   * PostgreSQL it runs outside any transaction: the statement commits alone, without a BEGIN and
   * a COMMIT (two round trips, and the server's work for each: issue 27, item 9). Inside a
   * transaction, in it. `work` must make exactly one statement.
   */
  async oneStatementWrite<T>(work: (db: Store) => Promise<T>): Promise<T> {
    if (this.isTransaction() || this.dialect !== 'postgres') return this.sharedTransaction(work);
    return work(this);
  }

  /**
   * Waits until every commit made so far is flushed, those that did not wait for their flush too
   * (`JobQueue.addTaken`'s `commitWithoutFlushWait`). On PostgreSQL a transaction of its own
   * writes one WAL record (a logical decoding message, which any role may emit and no one reads),
   * so its commit is synchronous and waits for the WAL up to it, one sequence with every commit
   * before. A transaction that only takes an id (`pg_current_xact_id()`) would not do: PostgreSQL
   * commits one that wrote no WAL without waiting for the flush. On SQLite every commit is
   * already flushed.
   */
  async flushCommits(): Promise<void> {
    if (this.dialect === 'postgres') await sql`select pg_logical_emit_message(true, 'forge', 'flush')`.execute(this.db);
  }

  /**
   * A user's children and connections (as `children.list` and `credentials.list` answer them), in
   * one statement: what GET /setup reads when it keeps no answer at the user's version (issue 29);
   * the credential check has read the user. On SQLite a statement of its own takes the read lock
   * and gives it back (an `fcntl` each way and an `fstat`, about 7 µs of a 10 µs read), so one lock
   * instead of two; one snapshot; on PostgreSQL one round trip.
   */
  async childrenAndConnections(userId: string): Promise<{ children: ChildRow[]; connections: ConnectionSummary[] }> {
    const children: ChildRow[] = [];
    const connections: ConnectionSummary[] = [];
    for (const row of await this.ownQuery.rows(this.db, [userId, userId])) {
      if (row.kind === 'child') children.push(toChild(row));
      else connections.push(connectionSummary(row));
    }
    return { children, connections };
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

/** A row of `childrenAndConnections`' statement: a child's columns or a connection's. */
type OwnRow =
  | ({ kind: 'child' } & RawChild)
  | {
      kind: 'connection';
      integration: string;
      connected_at: string;
      status: ConnectionSummary['status'];
      account: string | null;
    };

/** The store bound to one transaction: what `store.transaction(work)` hands `work`. */
export type StoreTransaction = Store<TransactionHandle>;
