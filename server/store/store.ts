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
import { migrate } from './schema.js';

/** Ids in the style of the records the service interface shows (`_id`, `__v`): 24 hex digits. */
export function newId(): string {
  const time = Math.floor(Date.now() / 1000)
    .toString(16)
    .padStart(8, '0');
  return time + randomBytes(8).toString('hex');
}

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

interface RawChild {
  id: string;
  user_id: string;
  parent_id: string;
  active: number;
  variables: string;
  webhook_token: string;
  created_at: string;
  updated_at: string;
}

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

interface RawError {
  id: string;
  workflow_id: string;
  execution_id: string;
  block_id: string;
  block_type: string;
  error: string;
  kind: ErrorKind;
  created_at: string;
  updated_at: string;
  version: number;
}

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

/** The unique constraint that a write broke, or null when the error is something else. */
export function uniqueViolation(error: unknown): string | null {
  const e = error as { code?: string; message?: string };
  if (e?.code !== 'SQLITE_CONSTRAINT_UNIQUE' && e?.code !== 'SQLITE_CONSTRAINT_PRIMARYKEY') return null;
  return e.message ?? '';
}

function openDatabase(path: string): Database.Database {
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
  migrate(db);
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

/** All persistent state of the service, in one SQLite database. */
export class Store {
  readonly db: Database.Database;

  /**
   * Statements prepared once per SQL text: preparing is a measurable part of every request
   * (SQLite parses and plans the text each time), and the store's SQL is a fixed set.
   */
  readonly #statements = new Map<string, Database.Statement>();

  constructor(path: string) {
    this.db = openDatabase(path);
  }

  #sql(text: string): Database.Statement {
    let statement = this.#statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.#statements.set(text, statement);
    }
    return statement;
  }

  close(): void {
    this.db.close();
  }

  /** Throws when the database cannot answer a query (for the readiness probe). */
  ping(): void {
    this.#sql('SELECT 1').get();
  }

  transaction<T>(work: () => T): T {
    return this.db.transaction(work)();
  }

  // Settings ------------------------------------------------------------------------------

  getSetting(key: string): string | undefined {
    const row = this.#sql('SELECT value FROM settings WHERE key = ?').get(key) as { value: string } | undefined;
    return row?.value;
  }

  setSetting(key: string, value: string): void {
    this.#sql(
      'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ).run(key, value);
  }

  deleteSetting(key: string): void {
    this.#sql('DELETE FROM settings WHERE key = ?').run(key);
  }

  // Users ---------------------------------------------------------------------------------

  createUser(fullName: string, email: string): string {
    const id = newId();
    this.#sql('INSERT INTO users (id, email, full_name, created_at) VALUES (?, ?, ?, ?)').run(
      id,
      email,
      fullName,
      new Date().toISOString(),
    );
    return id;
  }

  listUsers(): User[] {
    return this.#sql(
      'SELECT id AS _id, email, full_name AS fullName FROM users ORDER BY created_at, id',
    ).all() as User[];
  }

  getUser(id: string): User | undefined {
    return this.#sql('SELECT id AS _id, email, full_name AS fullName FROM users WHERE id = ?').get(id) as
      | User
      | undefined;
  }

  updateUser(id: string, fullName: string, email: string): boolean {
    return this.#sql('UPDATE users SET full_name = ?, email = ? WHERE id = ?').run(fullName, email, id).changes === 1;
  }

  /**
   * Removes the user and, through the foreign keys, its workflows, credentials, logs and errors,
   * for real: secure_delete zeroes the freed space, and the write-ahead log, which still holds
   * earlier copies of the pages, is emptied.
   */
  deleteUser(id: string): boolean {
    const deleted = this.#sql('DELETE FROM users WHERE id = ?').run(id).changes === 1;
    if (deleted) this.db.pragma('wal_checkpoint(TRUNCATE)');
    return deleted;
  }

  // Child workflows -----------------------------------------------------------------------

  createChild(userId: string, parentId: string, variables: Record<string, VariableValues>): ChildRow {
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
    this.#sql(
      `INSERT INTO workflows (id, user_id, parent_id, active, variables, webhook_token, created_at, updated_at)
         VALUES (@id, @user_id, @parent_id, @active, @variables, @webhook_token, @created_at, @updated_at)`,
    ).run(row);
    return toChild(row);
  }

  getChild(id: string): ChildRow | undefined {
    const row = this.#sql('SELECT * FROM workflows WHERE id = ?').get(id) as RawChild | undefined;
    return row && toChild(row);
  }

  getChildByWebhookToken(token: string): ChildRow | undefined {
    const row = this.#sql('SELECT * FROM workflows WHERE webhook_token = ?').get(token) as RawChild | undefined;
    return row && toChild(row);
  }

  findChild(userId: string, parentId: string): ChildRow | undefined {
    const row = this.#sql('SELECT * FROM workflows WHERE user_id = ? AND parent_id = ?').get(userId, parentId) as
      | RawChild
      | undefined;
    return row && toChild(row);
  }

  listChildren(userId: string): ChildRow[] {
    return (
      this.#sql('SELECT * FROM workflows WHERE user_id = ? ORDER BY created_at, id').all(userId) as RawChild[]
    ).map(toChild);
  }

  listActiveChildren(): ChildRow[] {
    return (this.#sql('SELECT * FROM workflows WHERE active = 1').all() as RawChild[]).map(toChild);
  }

  setChildActive(id: string, active: boolean): void {
    this.#sql('UPDATE workflows SET active = ?, updated_at = ? WHERE id = ?').run(
      active ? 1 : 0,
      new Date().toISOString(),
      id,
    );
  }

  /** Switches off every active workflow of a user; answers how many were on. */
  deactivateUserChildren(userId: string): number {
    return this.#sql('UPDATE workflows SET active = 0, updated_at = ? WHERE user_id = ? AND active = 1').run(
      new Date().toISOString(),
      userId,
    ).changes;
  }

  setChildVariables(id: string, variables: Record<string, VariableValues>): void {
    this.#sql('UPDATE workflows SET variables = ?, updated_at = ? WHERE id = ?').run(
      JSON.stringify(variables),
      new Date().toISOString(),
      id,
    );
  }

  /** Gives a child a new webhook token; answers it. */
  rotateWebhookToken(id: string): string {
    const token = newWebhookToken();
    this.#sql('UPDATE workflows SET webhook_token = ?, updated_at = ? WHERE id = ?').run(
      token,
      new Date().toISOString(),
      id,
    );
    return token;
  }

  deleteChild(id: string): boolean {
    return this.#sql('DELETE FROM workflows WHERE id = ?').run(id).changes === 1;
  }

  // Credentials ---------------------------------------------------------------------------

  saveCredential(userId: string, integration: string, sealedSecret: string): string {
    const connectedAt = new Date().toISOString();
    this.#sql(
      `INSERT INTO credentials (user_id, integration, secret, connected_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (user_id, integration) DO UPDATE SET secret = excluded.secret, connected_at = excluded.connected_at`,
    ).run(userId, integration, sealedSecret, connectedAt);
    return connectedAt;
  }

  listCredentials(userId: string): Array<{ integration: string; connectedAt: string }> {
    return this.#sql(
      'SELECT integration, connected_at AS connectedAt FROM credentials WHERE user_id = ? ORDER BY integration',
    ).all(userId) as Array<{ integration: string; connectedAt: string }>;
  }

  getCredentialSecret(userId: string, integration: string): string | undefined {
    const row = this.#sql('SELECT secret FROM credentials WHERE user_id = ? AND integration = ?').get(
      userId,
      integration,
    ) as { secret: string } | undefined;
    return row?.secret;
  }

  // OAuth states: one-time, short-lived, bound to a user and the origin that asked ----------

  createOAuthState(
    userId: string,
    integration: string,
    openerOrigin: string,
    ttlMs: number,
  ): { state: string; expiresAt: number } {
    const state = randomBytes(24).toString('base64url');
    const expiresAt = Date.now() + ttlMs;
    this.#sql('DELETE FROM oauth_states WHERE expires_at < ?').run(Date.now());
    this.#sql(
      'INSERT INTO oauth_states (state, user_id, integration, opener_origin, expires_at) VALUES (?, ?, ?, ?, ?)',
    ).run(state, userId, integration, openerOrigin, expiresAt);
    return { state, expiresAt };
  }

  getOAuthState(
    state: string,
  ): { userId: string; integration: string; openerOrigin: string; code: string | null } | undefined {
    return this.#sql(
      `SELECT user_id AS userId, integration, opener_origin AS openerOrigin, code
         FROM oauth_states WHERE state = ? AND expires_at >= ?`,
    ).get(state, Date.now()) as
      | { userId: string; integration: string; openerOrigin: string; code: string | null }
      | undefined;
  }

  setOAuthCode(state: string, code: string): void {
    this.#sql('UPDATE oauth_states SET code = ? WHERE state = ?').run(code, state);
  }

  /** Marks the authorize link of a state as opened; true only the first time, within its lifetime. */
  markOAuthStateOpened(state: string): boolean {
    return (
      this.#sql('UPDATE oauth_states SET opened = 1 WHERE state = ? AND opened = 0 AND expires_at >= ?').run(
        state,
        Date.now(),
      ).changes === 1
    );
  }

  createPendingGrant(grant: PendingGrant): void {
    this.#sql('DELETE FROM oauth_grants WHERE expires_at < ?').run(Date.now());
    this.#sql(
      `INSERT INTO oauth_grants (confirmation_hash, user_id, integration, opener_origin, grant_secret, expires_at)
         VALUES (?, ?, ?, ?, ?, ?)`,
    ).run(grant.hash, grant.userId, grant.integration, grant.openerOrigin, grant.sealedGrant, grant.expiresAt);
  }

  /** Uses a pending grant up, whatever becomes of it. */
  takePendingGrant(hash: string): PendingGrant | undefined {
    return this.transaction(() => {
      const found = this.#sql(
        `SELECT confirmation_hash AS hash, user_id AS userId, integration, opener_origin AS openerOrigin,
             grant_secret AS sealedGrant, expires_at AS expiresAt
           FROM oauth_grants WHERE confirmation_hash = ?`,
      ).get(hash) as PendingGrant | undefined;
      this.#sql('DELETE FROM oauth_grants WHERE confirmation_hash = ?').run(hash);
      return found;
    });
  }

  /** Uses a state up; answers it only if it was still there, so a replay finds nothing. */
  takeOAuthState(
    state: string,
  ): { userId: string; integration: string; openerOrigin: string; code: string | null } | undefined {
    return this.transaction(() => {
      const found = this.getOAuthState(state);
      this.#sql('DELETE FROM oauth_states WHERE state = ?').run(state);
      return found;
    });
  }

  // Execution logs and error logs ---------------------------------------------------------

  insertExecution(workflowId: string, entry: ExecutionLogEntry): void {
    this.#sql(
      'INSERT INTO executions (id, workflow_id, started_at, stopped_at, finished, results) VALUES (?, ?, ?, ?, ?, ?)',
    ).run(
      entry.executionId,
      workflowId,
      entry.startedAt,
      entry.stoppedAt,
      entry.finished ? 1 : 0,
      JSON.stringify(entry.results),
    );
  }

  listExecutions(workflowId: string, page: number, limit: number, order: 'asc' | 'desc'): ExecutionLogEntry[] {
    const direction = order === 'asc' ? 'ASC' : 'DESC';
    // The page is found in the index alone (it covers workflow_id, started_at, id and the rowid),
    // and only its rows are read from the table: a deep page skips index entries, not whole rows.
    const rows = this.#sql(
      `SELECT id, started_at, stopped_at, finished, results FROM executions
         WHERE rowid IN (
           SELECT rowid FROM executions WHERE workflow_id = ?
           ORDER BY started_at ${direction}, id ${direction} LIMIT ? OFFSET ?)
         ORDER BY started_at ${direction}, id ${direction}`,
    ).all(workflowId, limit, (page - 1) * limit) as Array<{
      id: string;
      started_at: string;
      stopped_at: string;
      finished: number;
      results: string;
    }>;
    return rows.map((row) => ({
      executionId: row.id,
      startedAt: row.started_at,
      stoppedAt: row.stopped_at,
      finished: row.finished === 1,
      results: JSON.parse(row.results),
    }));
  }

  insertError(entry: Omit<ErrorLogEntry, '_id' | 'createdAt' | 'updatedAt' | '__v'>): ErrorLogEntry {
    const now = new Date().toISOString();
    const row: RawError = {
      id: newId(),
      workflow_id: entry.workflowId,
      execution_id: entry.executionId,
      block_id: entry.blockId,
      block_type: entry.blockType,
      error: entry.error,
      kind: entry.kind,
      created_at: now,
      updated_at: now,
      version: 0,
    };
    this.#sql(
      `INSERT INTO error_logs (id, workflow_id, execution_id, block_id, block_type, error, kind, created_at, updated_at, version)
         VALUES (@id, @workflow_id, @execution_id, @block_id, @block_type, @error, @kind, @created_at, @updated_at, @version)`,
    ).run(row);
    return toErrorEntry(row);
  }

  listErrors(workflowId: string): ErrorLogEntry[] {
    return (
      this.#sql('SELECT * FROM error_logs WHERE workflow_id = ? ORDER BY created_at DESC, id DESC').all(
        workflowId,
      ) as RawError[]
    ).map(toErrorEntry);
  }

  /**
   * The run health of every child workflow of a user, in one query: the latest execution, the
   * error entry of that execution when it failed, and the failures since `since`. Each
   * subquery walks one workflow's slice of an index (executions_by_workflow,
   * error_logs_by_workflow), so the answer stays quick however many runs a workflow has.
   */
  listHealth(userId: string, since: string): Array<Omit<WorkflowHealth, 'nextRunAt'>> {
    const rows = this.#sql(
      `SELECT w.id, w.parent_id, w.active,
           x.id AS run_id, x.started_at, x.stopped_at, x.finished,
           e.kind, e.error, e.block_id, e.created_at AS failed_at,
           (SELECT COUNT(*) FROM error_logs c WHERE c.workflow_id = w.id AND c.created_at >= @since) AS failed
         FROM workflows w
         LEFT JOIN executions x ON x.id = (
           SELECT id FROM executions WHERE workflow_id = w.id ORDER BY started_at DESC, id DESC LIMIT 1)
         LEFT JOIN error_logs e ON x.finished = 0 AND e.execution_id = x.id AND e.id = (
           SELECT id FROM error_logs WHERE workflow_id = w.id ORDER BY created_at DESC, id DESC LIMIT 1)
         WHERE w.user_id = @userId
         ORDER BY w.created_at, w.id`,
    ).all({ userId, since }) as Array<{
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
    }>;
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
  listParentsWithActiveChildren(): string[] {
    return (this.#sql('SELECT DISTINCT parent_id FROM workflows WHERE active = 1').all() as RawChild[]).map(
      (row) => row.parent_id,
    );
  }

  listActiveChildrenOf(parentId: string): ChildRow[] {
    return (
      this.#sql('SELECT * FROM workflows WHERE parent_id = ? AND active = 1 ORDER BY created_at, id').all(
        parentId,
      ) as RawChild[]
    ).map(toChild);
  }

  /** Puts an error log entry in the outbox of a delivery channel (once per entry and channel). */
  enqueueDelivery(errorId: string, channel: string, dueAt: number): void {
    this.#sql('INSERT OR IGNORE INTO deliveries (error_id, channel, due_at) VALUES (?, ?, ?)').run(
      errorId,
      channel,
      dueAt,
    );
  }

  /** Deliveries due at `now`, oldest first, each with the entry to send. */
  dueDeliveries(now: number, limit: number): PendingDelivery[] {
    const rows = this.#sql(
      `SELECT d.channel, d.attempts, e.* FROM deliveries d JOIN error_logs e ON e.id = d.error_id
         WHERE d.due_at <= ? ORDER BY d.due_at, e.created_at, e.id LIMIT ?`,
    ).all(now, limit) as Array<RawError & { channel: string; attempts: number }>;
    return rows.map((row) => ({ channel: row.channel, attempts: row.attempts, entry: toErrorEntry(row) }));
  }

  /** When the next delivery is due (ms since the epoch), or undefined when the outbox is empty. */
  nextDeliveryDueAt(): number | undefined {
    const row = this.#sql('SELECT MIN(due_at) AS next FROM deliveries').get() as { next: number | null };
    return row.next ?? undefined;
  }

  finishDelivery(errorId: string, channel: string): void {
    this.#sql('DELETE FROM deliveries WHERE error_id = ? AND channel = ?').run(errorId, channel);
  }

  postponeDelivery(errorId: string, channel: string, attempts: number, dueAt: number, lastError: string): void {
    this.#sql('UPDATE deliveries SET attempts = ?, due_at = ?, last_error = ? WHERE error_id = ? AND channel = ?').run(
      attempts,
      dueAt,
      lastError,
      errorId,
      channel,
    );
  }

  /** Makes waiting deliveries (of one channel, or all) due now: their target changed, or the service restarted. */
  retryDeliveriesNow(channel?: string): void {
    this.#sql(
      'UPDATE deliveries SET due_at = @now WHERE due_at > @now AND (@channel IS NULL OR channel = @channel)',
    ).run({ now: Date.now(), channel: channel ?? null });
  }

  /** Empties a channel's outbox: the host switched the channel off. */
  dropDeliveries(channel: string): void {
    this.#sql('DELETE FROM deliveries WHERE channel = ?').run(channel);
  }

  /** How many deliveries of a channel wait, and the most recent reason one failed. */
  deliveryBacklog(channel: string): { pending: number; lastError: string | null } {
    return this.#sql(
      `SELECT COUNT(*) AS pending,
           (SELECT last_error FROM deliveries WHERE channel = @channel AND last_error IS NOT NULL
            ORDER BY due_at DESC LIMIT 1) AS lastError
         FROM deliveries WHERE channel = @channel`,
    ).get({ channel }) as { pending: number; lastError: string | null };
  }
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

export interface PendingDelivery {
  channel: string;
  /** Failed attempts so far. */
  attempts: number;
  entry: ErrorLogEntry;
}
