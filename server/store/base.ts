import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Tables } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

/** Ids in the style of the records the service interface shows (`_id`, `__v`): 24 hex digits. */
export function newId(): string {
  const time = Math.floor(Date.now() / 1000)
    .toString(16)
    .padStart(8, '0');
  return time + randomBytes(8).toString('hex');
}

/**
 * What every part of the store stands on: the query builder, the dialect and transactions. Each
 * part (users.ts, children.ts, logs.ts, …) is a mixin over this class, and store.ts composes them
 * into `Store`, so each concern's queries live in a file of their own while callers keep one
 * store with every method.
 */
export class StoreBase {
  /** The query builder; inside `transaction(work)`, the transaction's. */
  readonly db: Kysely<Tables>;
  readonly dialect: Dialect;

  constructor(db: Kysely<Tables>, dialect: Dialect) {
    this.db = db;
    this.dialect = dialect;
  }

  /**
   * Runs `work` in one transaction: its writes are saved together or not at all. `work` gets the
   * store bound to the transaction and must use it, not this store, for every query (on SQLite
   * the one connection is the transaction's until it ends). Inside a transaction, runs in it.
   */
  async transaction<T>(work: (tx: this) => Promise<T>): Promise<T> {
    if (this.db.isTransaction) return work(this);
    // The same class as this store (the whole Store), bound to the transaction.
    const Bound = this.constructor as new (db: Kysely<Tables>, dialect: Dialect) => this;
    return this.db.transaction().execute((trx) => work(new Bound(trx, this.dialect)));
  }
}

/** What a part of the store extends: StoreBase, or StoreBase with the parts before it. */
// biome-ignore lint/suspicious/noExplicitAny: TypeScript's mixin pattern requires a constructor of `any[]`.
export type StoreClass = new (...args: any[]) => StoreBase;
