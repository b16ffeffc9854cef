import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import type Database from 'better-sqlite3';
import type {
  ErrorKind,
  ErrorLogEntry,
  ExecutionLogEntry,
  User,
  VariableValues,
  WorkflowHealth,
} from 'forge-embed/client';
import {
  type ExpressionBuilder,
  Kysely,
  PostgresDialect,
  type Selectable,
  type SqliteDatabase,
  SqliteDialect,
  type SqliteStatement,
  sql,
} from 'kysely';
import { migrate, type Tables } from './schema.js';

/** Ids in the style of the records the service interface shows (`_id`, `__v`): 24 hex digits. */
export function newId(): string {
  const time = Math.floor(Date.now() / 1000)
    .toString(16)
    .padStart(8, '0');
  return time + randomBytes(8).toString('hex');
}

/** The hour of an ISO 8601 time, `2026-11-23T11`: what the logs page index counts by. */
const hourOf = (isoTime: string) => isoTime.slice(0, 13);
/** The first instant of an hour (`hourOf`'s form), or of the one `later` hours after, in ISO 8601. */
const startOfHour = (hour: string, later: number) =>
  new Date(Date.parse(`${hour}:00:00.000Z`) + later * 3_600_000).toISOString();

/** The secret part of a webhook URL: 192 random bits. */
const newWebhookToken = () => randomBytes(24).toString('base64url');

export interface ChildRow {
  id: string;
  userId: string;
  parentId: string;
  active: boolean;
  /** block id → variable name → value, only what this user set. */
  variables: Record<string, VariableValues>;
  webhookToken: string;
  createdAt: string;
  updatedAt: string;
}

type RawChild = Selectable<Tables['workflows']>;
type RawError = Selectable<Tables['error_logs']>;

const toChild = (row: RawChild): ChildRow => ({
  id: row.id,
  userId: row.user_id,
  parentId: row.parent_id,
  active: row.active === 1,
  variables: JSON.parse(row.variables),
  webhookToken: row.webhook_token,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toErrorEntry = (row: RawError): ErrorLogEntry => ({
  _id: row.id,
  workflowId: row.workflow_id,
  executionId: row.execution_id,
  blockId: row.block_id,
  blockType: row.block_type,
  error: row.error,
  kind: row.kind,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  __v: row.version,
});

const ERROR_COLUMNS = [
  'id',
  'workflow_id',
  'execution_id',
  'block_id',
  'block_type',
  'error',
  'kind',
  'created_at',
  'updated_at',
  'version',
] as const;

/**
 * The unique constraint that a write broke, or null when the error is something else: SQLite's
 * codes, or PostgreSQL's SQLSTATE 23505 (unique_violation).
 */
export function uniqueViolation(error: unknown): string | null {
  const e = error as { code?: string; message?: string; constraint?: string };
  if (e?.code === '23505') return e.constraint ?? e.message ?? '';
  if (e?.code !== 'SQLITE_CONSTRAINT_UNIQUE' && e?.code !== 'SQLITE_CONSTRAINT_PRIMARYKEY') return null;
  return e.message ?? '';
}

export type Dialect = 'sqlite' | 'postgres';

/** Whether a `--db` value names a PostgreSQL server rather than a SQLite file. */
export const isPostgresUrl = (location: string) => /^postgres(ql)?:\/\//i.test(location);

/** The database as logs may name it: a PostgreSQL URL loses its password. */
export function describeDatabase(location: string): string {
  if (!isPostgresUrl(location)) return location;
  const url = new URL(location);
  url.password = '';
  return url.toString();
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
  return /Connection terminated|timeout exceeded when trying to connect|Query read timeout/i.test(e?.message ?? '');
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

/**
 * Up to this many log entries, a page's start is found by stepping through the index (about
 * 0.2 ms per 1,000 entries on SQLite); past it, through the hour counts.
 */
const INDEX_SKIP_LIMIT = 1_000;

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

/**
 * All persistent state of the service: one SQLite file, or a PostgreSQL database. Every method
 * is async and means the same on both backends.
 */
export class Store {
  /** The query builder; inside `transaction(work)`, the transaction's. */
  readonly db: Kysely<Tables>;
  readonly dialect: Dialect;
  /** The migrations that opening the database applied (none when it was up to date). */
  migrated: string[] = [];

  private constructor(db: Kysely<Tables>, dialect: Dialect) {
    this.db = db;
    this.dialect = dialect;
  }

  /**
   * Opens (creating when missing) the database at `location` — a SQLite file, `:memory:`, or a
   * `postgres://` URL — and brings its schema up to date.
   */
  static async open(location: string): Promise<Store> {
    const store = isPostgresUrl(location)
      ? new Store(await postgresKysely(location), 'postgres')
      : new Store(
          new Kysely<Tables>({ dialect: new SqliteDialect({ database: preparingOnce(openSqlite(location)) }) }),
          'sqlite',
        );
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

  /**
   * Runs `work` in one transaction: its writes are saved together or not at all. `work` gets the
   * store bound to the transaction and must use it, not this store, for every query (on SQLite
   * the one connection is the transaction's until it ends). Inside a transaction, runs in it.
   */
  async transaction<T>(work: (tx: Store) => Promise<T>): Promise<T> {
    if (this.db.isTransaction) return work(this);
    return this.db.transaction().execute((trx) => work(new Store(trx, this.dialect)));
  }

  // Settings ------------------------------------------------------------------------------

  async getSetting(key: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
    return row?.value;
  }

  async setSetting(key: string, value: string): Promise<void> {
    await this.db
      .insertInto('settings')
      .values({ key, value })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: (eb) => eb.ref('excluded.value') }))
      .execute();
  }

  /**
   * Stores a setting unless one is there already; answers the stored value, so of two callers
   * racing to create it, both get the winner's.
   */
  async addSetting(key: string, value: string): Promise<string> {
    await this.db
      .insertInto('settings')
      .values({ key, value })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    return (await this.getSetting(key)) ?? value;
  }

  async deleteSetting(key: string): Promise<void> {
    await this.db.deleteFrom('settings').where('key', '=', key).execute();
  }

  // Users ---------------------------------------------------------------------------------

  async createUser(fullName: string, email: string): Promise<string> {
    const id = newId();
    await this.db
      .insertInto('users')
      .values({ id, email, full_name: fullName, created_at: new Date().toISOString() })
      .execute();
    return id;
  }

  async listUsers(): Promise<User[]> {
    return this.db
      .selectFrom('users')
      .select(['id as _id', 'email', 'full_name as fullName'])
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async getUser(id: string): Promise<User | undefined> {
    return this.db
      .selectFrom('users')
      .select(['id as _id', 'email', 'full_name as fullName'])
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async updateUser(id: string, fullName: string, email: string): Promise<boolean> {
    const result = await this.db
      .updateTable('users')
      .set({ full_name: fullName, email })
      .where('id', '=', id)
      .executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }

  /**
   * Removes the user and, through the foreign keys, its workflows, credentials, logs and errors,
   * for real: on SQLite secure_delete zeroes the freed space, and the write-ahead log, which
   * still holds earlier copies of the pages, is emptied.
   */
  async deleteUser(id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
    const deleted = result.numDeletedRows === 1n;
    if (deleted && this.dialect === 'sqlite' && !this.db.isTransaction) {
      await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(this.db);
    }
    return deleted;
  }

  // Child workflows -----------------------------------------------------------------------

  async createChild(userId: string, parentId: string, variables: Record<string, VariableValues>): Promise<ChildRow> {
    const now = new Date().toISOString();
    const row: RawChild = {
      id: newId(),
      user_id: userId,
      parent_id: parentId,
      active: 1,
      variables: JSON.stringify(variables),
      webhook_token: newWebhookToken(),
      created_at: now,
      updated_at: now,
    };
    await this.db.insertInto('workflows').values(row).execute();
    return toChild(row);
  }

  async getChild(id: string): Promise<ChildRow | undefined> {
    const row = await this.db.selectFrom('workflows').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toChild(row);
  }

  /**
   * Reads a child inside a transaction and keeps others from writing it until the transaction
   * ends, so a read-modify-write loses no concurrent write (PostgreSQL locks the row; SQLite's
   * one connection already serializes transactions).
   */
  async getChildForUpdate(id: string): Promise<ChildRow | undefined> {
    let query = this.db.selectFrom('workflows').selectAll().where('id', '=', id);
    if (this.dialect === 'postgres') query = query.forUpdate();
    const row = await query.executeTakeFirst();
    return row && toChild(row);
  }

  async getChildByWebhookToken(token: string): Promise<ChildRow | undefined> {
    const row = await this.db.selectFrom('workflows').selectAll().where('webhook_token', '=', token).executeTakeFirst();
    return row && toChild(row);
  }

  async findChild(userId: string, parentId: string): Promise<ChildRow | undefined> {
    const row = await this.db
      .selectFrom('workflows')
      .selectAll()
      .where('user_id', '=', userId)
      .where('parent_id', '=', parentId)
      .executeTakeFirst();
    return row && toChild(row);
  }

  async listChildren(userId: string): Promise<ChildRow[]> {
    const rows = await this.db
      .selectFrom('workflows')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toChild);
  }

  async listActiveChildren(): Promise<ChildRow[]> {
    const rows = await this.db.selectFrom('workflows').selectAll().where('active', '=', 1).execute();
    return rows.map(toChild);
  }

  async setChildActive(id: string, active: boolean): Promise<void> {
    await this.db
      .updateTable('workflows')
      .set({ active: active ? 1 : 0, updated_at: new Date().toISOString() })
      .where('id', '=', id)
      .execute();
  }

  /** Switches off every active workflow of a user; answers how many were on. */
  async deactivateUserChildren(userId: string): Promise<number> {
    const result = await this.db
      .updateTable('workflows')
      .set({ active: 0, updated_at: new Date().toISOString() })
      .where('user_id', '=', userId)
      .where('active', '=', 1)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async setChildVariables(id: string, variables: Record<string, VariableValues>): Promise<void> {
    await this.db
      .updateTable('workflows')
      .set({ variables: JSON.stringify(variables), updated_at: new Date().toISOString() })
      .where('id', '=', id)
      .execute();
  }

  /** Gives a child a new webhook token; answers it. */
  async rotateWebhookToken(id: string): Promise<string> {
    const token = newWebhookToken();
    await this.db
      .updateTable('workflows')
      .set({ webhook_token: token, updated_at: new Date().toISOString() })
      .where('id', '=', id)
      .execute();
    return token;
  }

  async deleteChild(id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('workflows').where('id', '=', id).executeTakeFirst();
    return result.numDeletedRows === 1n;
  }

  // Credentials ---------------------------------------------------------------------------

  async saveCredential(userId: string, integration: string, sealedSecret: string): Promise<string> {
    const connectedAt = new Date().toISOString();
    await this.db
      .insertInto('credentials')
      .values({ user_id: userId, integration, secret: sealedSecret, connected_at: connectedAt })
      .onConflict((oc) =>
        oc.columns(['user_id', 'integration']).doUpdateSet({
          secret: (eb) => eb.ref('excluded.secret'),
          connected_at: (eb) => eb.ref('excluded.connected_at'),
        }),
      )
      .execute();
    return connectedAt;
  }

  async listCredentials(userId: string): Promise<Array<{ integration: string; connectedAt: string }>> {
    return this.db
      .selectFrom('credentials')
      .select(['integration', 'connected_at as connectedAt'])
      .where('user_id', '=', userId)
      .orderBy('integration')
      .execute();
  }

  async getCredentialSecret(userId: string, integration: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('credentials')
      .select('secret')
      .where('user_id', '=', userId)
      .where('integration', '=', integration)
      .executeTakeFirst();
    return row?.secret;
  }

  // OAuth states: one-time, short-lived, bound to a user and the origin that asked ----------

  async createOAuthState(
    userId: string,
    integration: string,
    openerOrigin: string,
    ttlMs: number,
  ): Promise<{ state: string; expiresAt: number }> {
    const state = randomBytes(24).toString('base64url');
    const expiresAt = Date.now() + ttlMs;
    await this.db.deleteFrom('oauth_states').where('expires_at', '<', Date.now()).execute();
    await this.db
      .insertInto('oauth_states')
      .values({ state, user_id: userId, integration, opener_origin: openerOrigin, expires_at: expiresAt })
      .execute();
    return { state, expiresAt };
  }

  async getOAuthState(state: string): Promise<OAuthState | undefined> {
    return this.db
      .selectFrom('oauth_states')
      .select(['user_id as userId', 'integration', 'opener_origin as openerOrigin', 'code'])
      .where('state', '=', state)
      .where('expires_at', '>=', Date.now())
      .executeTakeFirst();
  }

  async setOAuthCode(state: string, code: string): Promise<void> {
    await this.db.updateTable('oauth_states').set({ code }).where('state', '=', state).execute();
  }

  /** Marks the authorize link of a state as opened; true only the first time, within its lifetime. */
  async markOAuthStateOpened(state: string): Promise<boolean> {
    const result = await this.db
      .updateTable('oauth_states')
      .set({ opened: 1 })
      .where('state', '=', state)
      .where('opened', '=', 0)
      .where('expires_at', '>=', Date.now())
      .executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }

  async createPendingGrant(grant: PendingGrant): Promise<void> {
    await this.db.deleteFrom('oauth_grants').where('expires_at', '<', Date.now()).execute();
    await this.db
      .insertInto('oauth_grants')
      .values({
        confirmation_hash: grant.hash,
        user_id: grant.userId,
        integration: grant.integration,
        opener_origin: grant.openerOrigin,
        grant_secret: grant.sealedGrant,
        expires_at: grant.expiresAt,
      })
      .execute();
  }

  /** Uses a pending grant up, whatever becomes of it; of two at once, one gets it. */
  async takePendingGrant(hash: string): Promise<PendingGrant | undefined> {
    return this.db
      .deleteFrom('oauth_grants')
      .where('confirmation_hash', '=', hash)
      .returning([
        'confirmation_hash as hash',
        'user_id as userId',
        'integration',
        'opener_origin as openerOrigin',
        'grant_secret as sealedGrant',
        'expires_at as expiresAt',
      ])
      .executeTakeFirst();
  }

  /** Uses a state up; answers it only if it was still there (and valid), so a replay finds nothing. */
  async takeOAuthState(state: string): Promise<OAuthState | undefined> {
    const found = await this.db
      .deleteFrom('oauth_states')
      .where('state', '=', state)
      .returning(['user_id as userId', 'integration', 'opener_origin as openerOrigin', 'code', 'expires_at'])
      .executeTakeFirst();
    if (!found || found.expires_at < Date.now()) return undefined;
    const { expires_at: _expiresAt, ...flow } = found;
    return flow;
  }

  // Execution logs and error logs ---------------------------------------------------------

  async insertExecution(workflowId: string, entry: ExecutionLogEntry): Promise<void> {
    await this.insertExecutions(workflowId, [entry]);
  }

  /** Stores runs of one workflow, and counts them in the hours that index the logs pages. */
  async insertExecutions(workflowId: string, entries: ExecutionLogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const perHour = new Map<string, number>();
    for (const entry of entries) {
      const hour = hourOf(entry.startedAt);
      perHour.set(hour, (perHour.get(hour) ?? 0) + 1);
    }
    await this.transaction(async (tx) => {
      await tx.db
        .insertInto('executions')
        .values(
          entries.map((entry) => ({
            id: entry.executionId,
            workflow_id: workflowId,
            started_at: entry.startedAt,
            stopped_at: entry.stoppedAt,
            finished: entry.finished ? 1 : 0,
            results: JSON.stringify(entry.results),
          })),
        )
        .execute();
      await tx.db
        .insertInto('execution_hours')
        .values([...perHour].map(([hour, executions]) => ({ workflow_id: workflowId, hour, executions })))
        .onConflict((oc) =>
          oc.columns(['workflow_id', 'hour']).doUpdateSet({
            executions: (eb) => eb('execution_hours.executions', '+', eb.ref('excluded.executions')),
          }),
        )
        .execute();
    });
  }

  /**
   * A child workflow with one page of its execution log, newest or oldest first; undefined when
   * there is no such child. The logs route must know the child (its owner) before it answers,
   * and reading both in one query spares a round trip to the database on every request.
   */
  async getChildWithExecutions(
    id: string,
    page: number,
    limit: number,
    order: 'asc' | 'desc',
  ): Promise<{ child: ChildRow; executions: StoredExecution[] } | undefined> {
    const first = await this.pageStart(id, (page - 1) * limit, order);
    if (!first) {
      const child = await this.getChild(id);
      return child && { child, executions: [] };
    }
    const entries = this.db
      .selectFrom('executions')
      .select(['id as x_id', 'started_at as x_started_at', 'stopped_at as x_stopped_at', 'finished', 'results'])
      .where('workflow_id', '=', id)
      .where(sql<boolean>`(started_at, id) ${sql.raw(order === 'desc' ? '<=' : '>=')} ${first}`)
      .orderBy('started_at', order)
      .orderBy('id', order)
      .limit(limit);
    // One row per entry of the page, each with the child's columns; one row with no entry when
    // the page is empty; none when there is no such child.
    const rows = await this.db
      .selectFrom('workflows')
      .leftJoin(entries.as('x'), (join) => join.onTrue())
      .selectAll('workflows')
      .select(['x.x_id', 'x.x_started_at', 'x.x_stopped_at', 'x.finished', 'x.results'])
      .where('workflows.id', '=', id)
      .orderBy('x.x_started_at', order)
      .orderBy('x.x_id', order)
      .execute();
    if (rows.length === 0) return undefined;
    return {
      child: toChild(rows[0]!),
      executions: rows
        .filter((row) => row.x_id !== null)
        .map((row) => ({
          executionId: row.x_id!,
          startedAt: row.x_started_at!,
          stoppedAt: row.x_stopped_at!,
          finished: row.finished === 1,
          resultsJson: row.results!,
        })),
    };
  }

  /**
   * The query that finds a page's first entry (its `started_at` and `id`), for the page to be
   * read from there on; null when the page is past the last entry.
   */
  private async pageStart(workflowId: string, offset: number, order: 'asc' | 'desc') {
    // The page's first entry is sought in the index alone (workflow_id, started_at, id): skipped
    // entries cost an index step, never a row read.
    const first = this.db
      .selectFrom('executions')
      .select(['started_at', 'id'])
      .where('workflow_id', '=', workflowId)
      .orderBy('started_at', order)
      .orderBy('id', order)
      .limit(1);
    if (offset < INDEX_SKIP_LIMIT) return first.offset(offset);
    // A deep page: the hour counts give the hour that holds its first entry and how many
    // entries come before that hour, so only the entries of that hour are skipped.
    const hour = await this.db
      .selectFrom((qb) =>
        qb
          .selectFrom('execution_hours')
          .select([
            'hour',
            'executions',
            sql<number>`SUM(executions) OVER (ORDER BY hour ${sql.raw(order === 'desc' ? 'DESC' : 'ASC')})`.as(
              'through',
            ),
          ])
          .where('workflow_id', '=', workflowId)
          .as('hours'),
      )
      .select(['hour', sql<number>`through - executions`.as('before')])
      .where('through', '>', offset)
      .orderBy('hour', order)
      .limit(1)
      .executeTakeFirst();
    if (!hour) return null;
    return (
      first
        // Whole times, compared with whole times: before the next hour, or from the hour on.
        .where(
          'started_at',
          order === 'desc' ? '<' : '>=',
          order === 'desc' ? startOfHour(hour.hour, 1) : startOfHour(hour.hour, 0),
        )
        .offset(offset - Number(hour.before))
    );
  }

  async insertError(entry: Omit<ErrorLogEntry, '_id' | 'createdAt' | 'updatedAt' | '__v'>): Promise<ErrorLogEntry> {
    const now = new Date().toISOString();
    const row: RawError = {
      id: newId(),
      workflow_id: entry.workflowId,
      execution_id: entry.executionId,
      block_id: entry.blockId,
      block_type: entry.blockType,
      // A message may quote what a remote server sent; PostgreSQL text cannot hold NUL.
      error: entry.error.replaceAll('\0', '\uFFFD'),
      kind: entry.kind,
      created_at: now,
      updated_at: now,
      version: 0,
    };
    await this.db.insertInto('error_logs').values(row).execute();
    return toErrorEntry(row);
  }

  async listErrors(workflowId: string): Promise<ErrorLogEntry[]> {
    const rows = await this.db
      .selectFrom('error_logs')
      .select(ERROR_COLUMNS)
      .where('workflow_id', '=', workflowId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    return rows.map(toErrorEntry);
  }

  /**
   * The run health of every child workflow of a user, in one query: the latest execution, the
   * error entry of that execution when it failed, and the failures since `since`. Each subquery
   * walks one workflow's slice of an index (executions_by_workflow, error_logs_by_workflow), so
   * the answer stays quick however many runs a workflow has had.
   */
  async listHealth(userId: string, since: string): Promise<Array<Omit<WorkflowHealth, 'nextRunAt'>>> {
    const { rows } = await sql<{
      id: string;
      parent_id: string;
      active: number;
      run_id: string | null;
      started_at: string;
      stopped_at: string;
      finished: number;
      kind: ErrorKind | null;
      error: string;
      block_id: string;
      failed_at: string;
      failed: number;
    }>`
      SELECT w.id, w.parent_id, w.active,
          x.id AS run_id, x.started_at, x.stopped_at, x.finished,
          e.kind, e.error, e.block_id, e.created_at AS failed_at,
          CAST((SELECT COUNT(*) FROM error_logs c WHERE c.workflow_id = w.id AND c.created_at >= ${since}) AS INTEGER) AS failed
        FROM workflows w
        LEFT JOIN executions x ON x.id = (
          SELECT id FROM executions WHERE workflow_id = w.id ORDER BY started_at DESC, id DESC LIMIT 1)
        LEFT JOIN error_logs e ON x.finished = 0 AND e.execution_id = x.id AND e.id = (
          SELECT id FROM error_logs WHERE workflow_id = w.id ORDER BY created_at DESC, id DESC LIMIT 1)
        WHERE w.user_id = ${userId}
        ORDER BY w.created_at, w.id`.execute(this.db);
    return rows.map((row) => ({
      workflowId: row.id,
      parentId: row.parent_id,
      active: row.active === 1,
      lastRun: row.run_id
        ? {
            executionId: row.run_id,
            startedAt: row.started_at,
            stoppedAt: row.stopped_at,
            finished: row.finished === 1,
          }
        : null,
      failedLast24h: row.failed,
      failure: row.kind
        ? { kind: row.kind, error: row.error, blockId: row.block_id, integration: null, createdAt: row.failed_at }
        : null,
    }));
  }

  // Scheduling and delivery (server/engine) -------------------------------------------------

  /** Parents that have at least one active child: the only ones a scheduler tick looks at. */
  async listParentsWithActiveChildren(): Promise<string[]> {
    const rows = await this.db.selectFrom('workflows').select('parent_id').distinct().where('active', '=', 1).execute();
    return rows.map((row) => row.parent_id);
  }

  async listActiveChildrenOf(parentId: string): Promise<ChildRow[]> {
    const rows = await this.db
      .selectFrom('workflows')
      .selectAll()
      .where('parent_id', '=', parentId)
      .where('active', '=', 1)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toChild);
  }

  /** Puts an error log entry in the outbox of a delivery channel (once per entry and channel). */
  async enqueueDelivery(errorId: string, channel: string, dueAt: number): Promise<void> {
    await this.db
      .insertInto('deliveries')
      .values({ error_id: errorId, channel, due_at: dueAt })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  /**
   * Takes the oldest delivery due at `now` whose lease is free (none, or run out), leasing it to
   * `holder` until `leaseUntil`; answers it with its entry, or undefined when none is free. The
   * lease is a conditional update, so of instances racing for a delivery exactly one gets it.
   */
  async leaseNextDelivery(now: number, holder: string, leaseUntil: number): Promise<PendingDelivery | undefined> {
    const free = (eb: ExpressionBuilder<Tables, 'deliveries'>) =>
      eb.and([eb('due_at', '<=', now), eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)])]);
    // A few candidates, so that losing a race for the oldest moves on to the next.
    const candidates = await this.db
      .selectFrom('deliveries')
      .select(['error_id', 'channel'])
      .where(free)
      .orderBy('due_at')
      .limit(5)
      .execute();
    for (const { error_id, channel } of candidates) {
      const leased = await this.db
        .updateTable('deliveries')
        .set({ leased_by: holder, lease_until: leaseUntil })
        .where('error_id', '=', error_id)
        .where('channel', '=', channel)
        .where(free)
        .executeTakeFirst();
      if (leased.numUpdatedRows !== 1n) continue;
      const [taken] = await this.pendingDeliveries((q) =>
        q.where('d.error_id', '=', error_id).where('d.channel', '=', channel),
      );
      return taken;
    }
    return undefined;
  }

  /** Deliveries due at `now`, oldest first, each with the entry to send (leased or not). */
  async dueDeliveries(now: number, limit: number): Promise<PendingDelivery[]> {
    return this.pendingDeliveries((q) => q.where('d.due_at', '<=', now).limit(limit));
  }

  private async pendingDeliveries(
    filter: (query: ReturnType<Store['deliveriesWithEntries']>) => ReturnType<Store['deliveriesWithEntries']>,
  ): Promise<PendingDelivery[]> {
    const rows = await filter(this.deliveriesWithEntries()).execute();
    return rows.map((row) => ({ channel: row.channel, attempts: row.attempts, entry: toErrorEntry(row) }));
  }

  private deliveriesWithEntries() {
    return this.db
      .selectFrom('deliveries as d')
      .innerJoin('error_logs as e', 'e.id', 'd.error_id')
      .select(['d.channel', 'd.attempts', ...ERROR_COLUMNS.map((column) => `e.${column}` as const)])
      .orderBy('d.due_at')
      .orderBy('e.created_at')
      .orderBy('e.id');
  }

  /**
   * When the next delivery may be attempted (ms since the epoch): its due time, or the end of the
   * lease another instance holds on it. Undefined when the outbox is empty.
   */
  async nextDeliveryDueAt(): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('deliveries')
      .select(
        sql<
          number | null
        >`min(CASE WHEN lease_until IS NOT NULL AND lease_until > due_at THEN lease_until ELSE due_at END)`.as('next'),
      )
      .executeTakeFirst();
    return row?.next ?? undefined;
  }

  async finishDelivery(errorId: string, channel: string): Promise<void> {
    await this.db.deleteFrom('deliveries').where('error_id', '=', errorId).where('channel', '=', channel).execute();
  }

  async postponeDelivery(
    errorId: string,
    channel: string,
    attempts: number,
    dueAt: number,
    lastError: string,
  ): Promise<void> {
    await this.db
      .updateTable('deliveries')
      .set({ attempts, due_at: dueAt, last_error: lastError, leased_by: null, lease_until: null })
      .where('error_id', '=', errorId)
      .where('channel', '=', channel)
      .execute();
  }

  /** Gives up the lease on a delivery without attempting it. */
  async releaseDelivery(errorId: string, channel: string): Promise<void> {
    await this.db
      .updateTable('deliveries')
      .set({ leased_by: null, lease_until: null })
      .where('error_id', '=', errorId)
      .where('channel', '=', channel)
      .execute();
  }

  /** Makes waiting deliveries (of one channel, or all) due now: their target changed, or the service restarted. */
  async retryDeliveriesNow(channel?: string): Promise<void> {
    const now = Date.now();
    let query = this.db.updateTable('deliveries').set({ due_at: now }).where('due_at', '>', now);
    if (channel !== undefined) query = query.where('channel', '=', channel);
    await query.execute();
  }

  /** Empties a channel's outbox: the host switched the channel off. */
  async dropDeliveries(channel: string): Promise<void> {
    await this.db.deleteFrom('deliveries').where('channel', '=', channel).execute();
  }

  /** How many deliveries of a channel wait, and the most recent reason one failed. */
  async deliveryBacklog(channel: string): Promise<{ pending: number; lastError: string | null }> {
    const row = await this.db
      .selectFrom('deliveries')
      .select((eb) => [
        eb.fn.countAll<number>().as('pending'),
        eb
          .selectFrom('deliveries')
          .select('last_error')
          .where('channel', '=', channel)
          .where('last_error', 'is not', null)
          .orderBy('due_at', 'desc')
          .limit(1)
          .as('lastError'),
      ])
      .where('channel', '=', channel)
      .executeTakeFirstOrThrow();
    return { pending: Number(row.pending), lastError: row.lastError ?? null };
  }

  /**
   * Claims one scheduled minute of a child for `holder`: true for the one instance whose insert
   * made the row, false for every other that tried the same (child, minute).
   */
  async claimScheduledRun(workflowId: string, minute: number, holder: string): Promise<boolean> {
    // An insert that met an existing claim returns no row.
    const made = await this.db
      .insertInto('schedule_claims')
      .values({ workflow_id: workflowId, minute, claimed_by: holder })
      .onConflict((oc) => oc.doNothing())
      .returning('minute')
      .executeTakeFirst();
    return made !== undefined;
  }

  /** Forgets claims of minutes before `minute`: no instance ticks them any more. */
  async dropScheduleClaimsBefore(minute: number): Promise<void> {
    await this.db.deleteFrom('schedule_claims').where('minute', '<', minute).execute();
  }

  // Signing keys (server/auth.ts) -----------------------------------------------------------

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

  // Rate limits (server/rate-limit.ts) -------------------------------------------------------

  /** Counts one hit in a window; answers the window's count, this hit included. */
  async countHit(key: string, windowStart: number): Promise<number> {
    const row = await this.db
      .insertInto('rate_counts')
      .values({ key, window_start: windowStart, count: 1 })
      .onConflict((oc) =>
        oc.columns(['key', 'window_start']).doUpdateSet({ count: (eb) => eb('rate_counts.count', '+', 1) }),
      )
      .returning('count')
      .executeTakeFirstOrThrow();
    return row.count;
  }

  async dropRateCountsBefore(windowStart: number): Promise<void> {
    await this.db.deleteFrom('rate_counts').where('window_start', '<', windowStart).execute();
  }
}

/**
 * Kysely over a pool of PostgreSQL connections. `pg` loads only here, so a SQLite service never
 * needs it.
 */
const CONNECT_TIMEOUT_MS = 5_000;
/** Far above any of the store's queries; only a server that stopped answering reaches it. */
const QUERY_TIMEOUT_MS = 15_000;

async function postgresKysely(url: string): Promise<Kysely<Tables>> {
  const { default: pg } = await import('pg');
  const INT8 = 20;
  const pool = new pg.Pool({
    connectionString: url,
    // A stopped or unreachable server fails a request within seconds instead of holding it.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    // Epoch milliseconds and counts are 64-bit: read them as numbers, as SQLite gives them.
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        oid === INT8 ? Number : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // A server that goes away drops the idle connections; the pool replaces them on the next
  // query. Without a listener the dropped connection's error would end the process.
  pool.on('error', () => {});
  const prepared = new PreparedNames();
  return new Kysely<Tables>({
    dialect: new PostgresDialect({
      pool: {
        connect: async () => prepared.on(await pool.connect()),
        end: () => pool.end(),
      } as unknown as import('pg').Pool,
    }),
  });
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

export interface OAuthState {
  userId: string;
  integration: string;
  openerOrigin: string;
  code: string | null;
}

/** A provider's grant waiting for the element that started the flow to confirm it (server/oauth-grants.ts). */
export interface PendingGrant {
  /** SHA-256 of the one-time confirmation value; the value itself is never stored. */
  hash: string;
  userId: string;
  integration: string;
  openerOrigin: string;
  sealedGrant: string;
  expiresAt: number;
}

export interface SigningKeyRow {
  kid: string;
  /** The private JWK, sealed with the SecretBox. */
  sealedKey: string;
  createdAt: number;
  /** When a newer key replaced it; null for the current key. */
  retiredAt: number | null;
}

/** An execution log entry as stored: its results still the JSON text they were saved as. */
export interface StoredExecution extends Omit<ExecutionLogEntry, 'results'> {
  resultsJson: string;
}

export interface PendingDelivery {
  channel: string;
  /** Failed attempts so far. */
  attempts: number;
  entry: ErrorLogEntry;
}
