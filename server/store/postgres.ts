import { Kysely, PostgresDialect } from 'kysely';
import type { PoolUse } from './pool-use.js';
import type { Tables } from './schema.js';

const CONNECT_TIMEOUT_MS = 5_000;
/** Far above any of the store's queries; only a server that stopped answering reaches it. */
const QUERY_TIMEOUT_MS = 15_000;

/**
 * Kysely over a pool of PostgreSQL connections. `pg` loads only here, so a SQLite service never
 * needs it.
 */
export interface PoolOptions {
  /** Connections the pool opens at most. Default 10 (DEFAULT_POOL_SIZE, pg's). */
  poolSize?: number;
  /** How long one query may take before the client gives up on it. Default 15 s. */
  statementTimeoutMs?: number;
}

/** pg's own default for the pool's size. */
export const DEFAULT_POOL_SIZE = 10;

export async function postgresKysely(
  url: string,
  { poolSize, statementTimeoutMs = QUERY_TIMEOUT_MS }: PoolOptions = {},
  use?: PoolUse,
): Promise<Kysely<Tables>> {
  const pool = await postgresPool(url, { poolSize, statementTimeoutMs });
  use?.readWaitingFrom(pool);
  const prepared = new PreparedNames();
  const dialect = new PostgresDialect({
    pool: {
      connect: async () => prepared.on(await pool.connect()),
      end: () => pool.end(),
    } as unknown as import('pg').Pool,
  });
  return new Kysely<Tables>({ dialect: use ? use.counting(dialect) : dialect });
}

/**
 * A pool of PostgreSQL connections that survives the server going away: the store's, and the
 * job queue's (pg-boss, server/store/pg-boss-queue.ts).
 */
export async function postgresPool(
  url: string,
  { poolSize, statementTimeoutMs = QUERY_TIMEOUT_MS }: PoolOptions = {},
): Promise<import('pg').Pool> {
  const { default: pg } = await import('pg');
  const INT8 = 20;
  const pool = new pg.Pool({
    connectionString: url,
    // A stopped or unreachable server fails a request within seconds instead of holding it.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: statementTimeoutMs,
    ...(poolSize ? { max: poolSize } : {}),
    // Epoch milliseconds and counts are 64-bit: read them as numbers, as SQLite gives them.
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        oid === INT8 ? Number : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // A server that goes away drops its connections; the pool replaces them on the next query.
  // A dropped connection emits 'error', and an 'error' nobody listens to ends the process. The
  // pool listens only while a connection is idle in it, not while it is checked out (between
  // two queries of a transaction, or mid-query) nor while it is being closed: so every
  // connection gets a listener of its own for its whole life. The query that was running fails
  // on its own (a 503 for its request), and the pool discards a connection that failed.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** How many SQL texts get a prepared statement on PostgreSQL; the store's fixed set is far smaller. */
const PREPARED_STATEMENT_LIMIT = 256;

/**
 * Each SQL text prepared once per PostgreSQL connection, as on SQLite: `pg` sends a query with
 * a name as Parse only the first time on a connection, then Bind and Execute alone, and the
 * server keeps the parsed statement (and, after a few runs, a generic plan) instead of parsing
 * and planning the text again on every request. Kysely sends every query unnamed.
 */
class PreparedNames {
  private readonly names = new Map<string, string>();
  /** Texts whose statement a schema change broke ("cached plan must not change result type"). */
  private readonly unnamed = new Set<string>();
  private readonly wrapped = new WeakSet<object>();

  on<C extends { query: (...args: never[]) => unknown }>(client: C): C {
    if (this.wrapped.has(client)) return client;
    this.wrapped.add(client);
    const query = (client.query as (...args: unknown[]) => unknown).bind(client);
    (client as { query: unknown }).query = (text: unknown, values?: unknown, ...rest: unknown[]) => {
      const name = typeof text === 'string' && Array.isArray(values) ? this.nameOf(text) : undefined;
      if (name === undefined) return query(text, values, ...rest);
      return (query({ name, text, values }) as Promise<unknown>).catch((error: { code?: string; message?: string }) => {
        // A migration that changed a table's columns breaks `SELECT *` statements prepared
        // before it: the text is sent unnamed from then on, on every connection.
        if (error?.code !== '0A000' || !/cached plan/.test(error.message ?? '')) throw error;
        this.names.delete(text as string);
        this.unnamed.add(text as string);
        return query(text, values);
      });
    };
    return client;
  }

  private nameOf(text: string): string | undefined {
    let name = this.names.get(text);
    if (name !== undefined || this.unnamed.has(text)) return name;
    // Statements only: schema changes and transaction control stay unnamed.
    if (!/^\s*(select|insert|update|delete|with)\b/i.test(text) || this.names.size >= PREPARED_STATEMENT_LIMIT) {
      return undefined;
    }
    name = `forge_${this.names.size + this.unnamed.size}`;
    this.names.set(text, name);
    return name;
  }
}
