import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { Kysely, type SqliteDatabase, SqliteDialect, type SqliteStatement } from 'kysely';
import type { PoolUse } from './pool-use.js';
import type { Tables } from './schema.js';

/** How long a query waits for another process's write lock on the file before it fails (SQLITE_BUSY). */
const BUSY_TIMEOUT_MS = 5_000;

/**
 * Kysely over a SQLite file (or `:memory:`), through Node's own SQLite (`node:sqlite`), so
 * installing the service compiles nothing; each SQL text prepared once.
 */
export function sqliteKysely(path: string, use?: PoolUse): Kysely<Tables> {
  const database = openSqlite(path);
  const statements = preparingOnce(database);
  const dialect = new SqliteDialect({ database: statements });
  const db = new Kysely<Tables>({ dialect: use ? use.counting(dialect) : dialect });
  readsAtOnce.set(db, (query, parameters) =>
    database.isTransaction ? undefined : statements.prepare(query).all(parameters),
  );
  return db;
}

/**
 * Runs a read's SQL on node:sqlite at once, its statement prepared once, and answers its rows;
 * undefined while a transaction is open on the one connection (the caller then goes through
 * Kysely, which waits for it).
 */
export type ReadAtOnce = (query: string, parameters: ReadonlyArray<unknown>) => unknown[] | undefined;

const readsAtOnce = new WeakMap<Kysely<Tables>, ReadAtOnce>();

/**
 * How to read at once on a Kysely that `sqliteKysely` made; undefined for any other (a
 * transaction's, a held connection's, PostgreSQL's). Kysely's own way to a query, a chain of
 * promises through its executor, its connection lock and the driver, cost about as much as the
 * read itself (issue 29: GET /setup and every user-token read's user). Outside a transaction the
 * same statement, run synchronously, is what Kysely would run: nothing else can run between its
 * start and its end, and each statement sees the last commit. Inside one (another request's
 * write, between its awaits) it would read what that transaction has not committed, so then not.
 */
export const readAtOnceOf = (db: Kysely<Tables>): ReadAtOnce | undefined => readsAtOnce.get(db);

function openSqlite(path: string): DatabaseSync {
  restrictToOwner(path);
  const db = new DatabaseSync(path, { timeout: BUSY_TIMEOUT_MS, enableForeignKeyConstraints: true });
  db.exec('PRAGMA journal_mode = WAL');
  // Deleted rows are overwritten with zeros, so an erased user's data does not linger in free pages.
  db.exec('PRAGMA secure_delete = ON');
  // FULL: a write the service answered as saved is on disk even if the process dies next.
  db.exec('PRAGMA synchronous = FULL');
  return db;
}

/**
 * The database holds every user's data: only its owner may read it. SQLite gives the -wal and
 * -shm files it creates the database file's permissions; files from an older version are
 * tightened.
 */
function restrictToOwner(path: string): void {
  if (path === ':memory:' || path.startsWith('file:')) return;
  closeSync(openSync(path, 'a', 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    if (existsSync(file)) chmodSync(file, 0o600);
  }
}

/** How many prepared statements a SQLite database keeps; the store's SQL is a far smaller fixed set. */
const STATEMENT_CACHE_SIZE = 256;

/**
 * The database as Kysely's SQLite dialect sees it, with each SQL text prepared once: preparing
 * is a measurable part of every request (SQLite parses and plans the text each time), and the
 * dialect would prepare again for every query.
 */
function preparingOnce(db: DatabaseSync): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => db.close(),
    prepare(query) {
      // Kysely opens transactions with a deferred BEGIN. With several processes on one file, two
      // deferred transactions that read and then write deadlock, and SQLite fails one at once
      // (SQLITE_BUSY, past busy_timeout): IMMEDIATE takes the write lock first, so the other
      // waits its turn instead.
      const text = query === 'begin' ? 'begin immediate' : query;
      let statement = statements.get(text);
      if (!statement) {
        statement = asKyselyStatement(db.prepare(text));
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
        statements.set(text, statement);
      }
      return statement;
    },
  };
}

/**
 * A node:sqlite statement in the shape Kysely's SQLite dialect calls (better-sqlite3's): the
 * parameters come as one array, and `reader` says whether the statement answers rows (a SELECT,
 * or a write with RETURNING).
 */
function asKyselyStatement(statement: StatementSync): SqliteStatement {
  const params = (parameters: ReadonlyArray<unknown>) => parameters as SQLInputValue[];
  return {
    reader: statement.columns().length > 0,
    // node:sqlite makes rows without a prototype; the store hands rows on as they come (a user
    // read is the row itself), so they become plain objects, as other drivers give them.
    all: (parameters) => statement.all(...params(parameters)).map((row) => ({ ...row })),
    run: (parameters) => statement.run(...params(parameters)),
    iterate: (parameters) => statement.iterate(...params(parameters)),
  };
}
