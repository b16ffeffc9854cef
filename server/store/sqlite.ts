import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import type Database from 'better-sqlite3';
import { Kysely, type SqliteDatabase, SqliteDialect, type SqliteStatement } from 'kysely';
import type { Tables } from './schema.js';

/** Kysely over a SQLite file (or `:memory:`), each SQL text prepared once. */
export function sqliteKysely(path: string): Kysely<Tables> {
  return new Kysely<Tables>({ dialect: new SqliteDialect({ database: preparingOnce(openSqlite(path)) }) });
}

function openSqlite(path: string): Database.Database {
  // better-sqlite3 is an optional dependency, so that installing the elements alone never
  // compiles SQLite; the service says plainly what to do when it is missing.
  const require = createRequire(import.meta.url);
  let Driver: typeof Database;
  try {
    Driver = require('better-sqlite3');
  } catch (error) {
    throw new Error(
      `The local Forge service needs the better-sqlite3 package, which did not load (${(error as Error).message}). Run "npm install better-sqlite3" and start it again.`,
    );
  }
  restrictToOwner(path);
  const db = new Driver(path);
  db.pragma('journal_mode = WAL');
  // Deleted rows are overwritten with zeros, so an erased user's data does not linger in free pages.
  db.pragma('secure_delete = ON');
  // FULL: a write the service answered as saved is on disk even if the process dies next.
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
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
function preparingOnce(db: Database.Database): SqliteDatabase {
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
        statement = db.prepare(text) as unknown as SqliteStatement;
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
        statements.set(text, statement);
      }
      return statement;
    },
  };
}
