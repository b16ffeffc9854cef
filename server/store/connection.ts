import { randomBytes } from 'node:crypto';
import type { Compilable, CompiledQuery, Kysely, Transaction } from 'kysely';
import type { Tables } from './schema.js';
import { readAtOnceOf } from './sqlite.js';

export type Dialect = 'sqlite' | 'postgres';

/** The query builder over the whole database, or over one transaction of it. */
export type Handle = Kysely<Tables>;
/** The query builder of one transaction: a query given one is part of that transaction. */
export type TransactionHandle = Transaction<Tables>;

/**
 * What every repository stands on: the query builder and the dialect. A repository made over a
 * transaction's handle runs every query in that transaction.
 */
export interface Connection<H extends Handle = Handle> {
  readonly db: H;
  readonly dialect: Dialect;
}

/**
 * A read that runs on every request of some route, built and compiled once instead of at each
 * run (issue 29): Kysely's building and compiling was a measurable part of a request. `build`
 * gives the query with placeholder values; `rows` runs it with the real ones, in their order. On
 * SQLite, outside a transaction, the compiled SQL runs on node:sqlite directly (`readAtOnceOf`):
 * Kysely's way to the statement cost as much again as the read.
 */
export class CompiledOnce<Row> {
  private compiled?: CompiledQuery<Row>;

  constructor(private readonly build: (db: Handle) => Compilable<Row>) {}

  async rows(db: Handle, parameters: unknown[]): Promise<Row[]> {
    this.compiled ??= this.build(db).compile();
    const atOnce = readAtOnceOf(db)?.(this.compiled.sql, parameters);
    if (atOnce) return atOnce as Row[];
    return (await db.executeQuery<Row>({ ...this.compiled, parameters })).rows;
  }
}

/**
 * Runs `work` in one transaction on `connection`: its writes are saved together or not at all.
 * Inside a transaction, runs in it. `work` must use the connection it is given, not the outer one,
 * for every query (on SQLite the one connection is the transaction's until it ends).
 */
export function inTransaction<T>(
  connection: Connection,
  work: (tx: Connection<TransactionHandle>) => Promise<T>,
): Promise<T> {
  if (isTransaction(connection)) return work(connection);
  return connection.db.transaction().execute((trx) => work({ db: trx, dialect: connection.dialect }));
}

export const isTransaction = (connection: Connection): connection is Connection<TransactionHandle> =>
  connection.db.isTransaction;

/** Ids in the style of the records the service interface shows (`_id`, `__v`): 24 hex digits. */
export function newId(): string {
  const time = Math.floor(Date.now() / 1000)
    .toString(16)
    .padStart(8, '0');
  return time + randomBytes(8).toString('hex');
}
