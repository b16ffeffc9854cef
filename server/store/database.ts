import type { Kysely } from 'kysely';
import type { Dialect } from './connection.js';
import { PoolUse } from './pool-use.js';
import { DEFAULT_POOL_SIZE, type PoolOptions, postgresKysely } from './postgres.js';
import type { Tables } from './schema.js';
import { sqliteKysely } from './sqlite.js';

/** Whether a `--db` value names a PostgreSQL server rather than a SQLite file. */
export const isPostgresUrl = (location: string) => /^postgres(ql)?:\/\//i.test(location);

/** The database as logs may name it: a PostgreSQL URL loses its password. */
export function describeDatabase(location: string): string {
  if (!isPostgresUrl(location)) return location;
  const url = new URL(location);
  url.password = '';
  return url.toString();
}

/** Kysely on the database at `location`: a SQLite file, `:memory:`, or a `postgres://` URL. */
export async function openDatabase(
  location: string,
  pool: PoolOptions = {},
): Promise<{ db: Kysely<Tables>; dialect: Dialect; poolUse: PoolUse }> {
  if (isPostgresUrl(location)) {
    const poolUse = new PoolUse(pool.poolSize ?? DEFAULT_POOL_SIZE);
    return { db: await postgresKysely(location, pool, poolUse), dialect: 'postgres', poolUse };
  }
  const poolUse = new PoolUse(1);
  return { db: sqliteKysely(location, poolUse), dialect: 'sqlite', poolUse };
}

/** SQLite's extended result codes for a broken UNIQUE or PRIMARY KEY constraint. */
const SQLITE_CONSTRAINT_UNIQUE = 2067;
const SQLITE_CONSTRAINT_PRIMARYKEY = 1555;

/**
 * The unique constraint that a write broke, or null when the error is something else: SQLite's
 * extended result codes (node:sqlite's `errcode`), or PostgreSQL's SQLSTATE 23505
 * (unique_violation).
 */
export function uniqueViolation(error: unknown): string | null {
  const e = error as { code?: string; errcode?: number; message?: string; constraint?: string };
  if (e?.code === '23505') return e.constraint ?? e.message ?? '';
  if (e?.errcode !== SQLITE_CONSTRAINT_UNIQUE && e?.errcode !== SQLITE_CONSTRAINT_PRIMARYKEY) return null;
  return e.message ?? '';
}

/**
 * Whether an error says the database cannot be reached right now (PostgreSQL stopped,
 * restarting or unreachable), rather than that the query was wrong.
 */
export function databaseUnavailable(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  if (typeof e?.code === 'string') {
    // Connection refused or reset; SQLSTATE class 08 (connection exception), 57P01–57P03
    // (the server shuts down or is starting).
    if (/^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN)$|^08|^57P0[123]$/.test(e.code)) return true;
  }
  // pg's own words for a connection that died; "not queryable" is what a transaction's ROLLBACK
  // meets on a connection its first query lost, and that error is the one the caller sees.
  return /Connection terminated|timeout exceeded when trying to connect|Query read timeout|connection error and is not queryable/i.test(
    e?.message ?? '',
  );
}
