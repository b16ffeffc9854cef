import { randomBytes } from 'node:crypto';
import type { VariableValues } from 'forge-embed/client';
import { type Selectable, sql } from 'kysely';
import { CompiledOnce, type Connection, type Handle, newId, type TransactionHandle } from './connection.js';
import type { Tables } from './schema.js';
import { TurnBatch } from './turn-batch.js';

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

export type RawChild = Selectable<Tables['workflows']>;

export const toChild = (row: RawChild): ChildRow => ({
  id: row.id,
  userId: row.user_id,
  parentId: row.parent_id,
  active: row.active === 1,
  variables: JSON.parse(row.variables),
  webhookToken: row.webhook_token,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/**
 * Child workflows: a user's install of a parent, its switch, variables and webhook token. Made
 * over a transaction's handle (`H` = TransactionHandle), it also reads a child for update.
 */
export class ChildRepository<H extends Handle = Handle> {
  private readonly listQuery = new CompiledOnce((db) =>
    db.selectFrom('workflows').selectAll().where('user_id', '=', '').orderBy('created_at').orderBy('id'),
  );

  // Every read of one workflow by id (the options read's, issue 26, among them).
  private readonly getQuery = new CompiledOnce((db) => db.selectFrom('workflows').selectAll().where('id', '=', ''));

  private readonly byTokensQuery = new CompiledOnce<RawChild>((db) => ({
    compile: () => sql<RawChild>`select * from workflows where webhook_token = any(${''})`.compile(db),
  }));
  /**
   * On PostgreSQL the webhook calls of one turn read their workflows in one statement (issue 27,
   * item 9: under load, one round trip a call was a backend woken per call).
   */
  private readonly byTokenInTurn = new TurnBatch<RawChild>(async (tokens) => {
    const rows = await this.byTokensQuery.rows(this.connection.db, [tokens]);
    return new Map(rows.map((row) => [row.webhook_token, row]));
  });

  constructor(private readonly connection: Connection<H>) {}

  async create(userId: string, parentId: string, variables: Record<string, VariableValues>): Promise<ChildRow> {
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
      logs_version: 0,
    };
    await this.connection.db.insertInto('workflows').values(row).execute();
    return toChild(row);
  }

  async get(id: string): Promise<ChildRow | undefined> {
    const [row] = await this.getQuery.rows(this.connection.db, [id]);
    return row && toChild(row);
  }

  /**
   * Reads a child and keeps others from writing it until the transaction ends, so a
   * read-modify-write loses no concurrent write (PostgreSQL locks the row; SQLite's one connection
   * already serializes transactions). Only a repository bound to a transaction has it.
   */
  async getForUpdate(this: ChildRepository<TransactionHandle>, id: string): Promise<ChildRow | undefined> {
    const { db, dialect } = this.connection;
    let query = db.selectFrom('workflows').selectAll().where('id', '=', id);
    if (dialect === 'postgres') query = query.forUpdate();
    const row = await query.executeTakeFirst();
    return row && toChild(row);
  }

  async getByWebhookToken(token: string): Promise<ChildRow | undefined> {
    const { db, dialect } = this.connection;
    if (dialect === 'postgres' && !db.isTransaction) {
      const row = await this.byTokenInTurn.read(token);
      return row && toChild(row);
    }
    const row = await this.connection.db
      .selectFrom('workflows')
      .selectAll()
      .where('webhook_token', '=', token)
      .executeTakeFirst();
    return row && toChild(row);
  }

  /** The child a user installed from a parent, if any. */
  async find(userId: string, parentId: string): Promise<ChildRow | undefined> {
    const row = await this.connection.db
      .selectFrom('workflows')
      .selectAll()
      .where('user_id', '=', userId)
      .where('parent_id', '=', parentId)
      .executeTakeFirst();
    return row && toChild(row);
  }

  /** A user's children, oldest first: GET /user/:id reads them at every request. */
  async list(userId: string): Promise<ChildRow[]> {
    return (await this.listQuery.rows(this.connection.db, [userId])).map(toChild);
  }

  /** Parents that have at least one active child: the only ones a scheduler tick looks at. */
  async listParentsWithActive(): Promise<string[]> {
    const rows = await this.connection.db
      .selectFrom('workflows')
      .select('parent_id')
      .distinct()
      .where('active', '=', 1)
      .execute();
    return rows.map((row) => row.parent_id);
  }

  async listActiveOf(parentId: string): Promise<ChildRow[]> {
    const rows = await this.connection.db
      .selectFrom('workflows')
      .selectAll()
      .where('parent_id', '=', parentId)
      .where('active', '=', 1)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toChild);
  }

  async setActive(id: string, active: boolean): Promise<void> {
    await this.connection.db
      .updateTable('workflows')
      .set({ active: active ? 1 : 0, updated_at: new Date().toISOString() })
      .where('id', '=', id)
      .execute();
  }

  /** Switches off every active workflow of a user; answers how many were on. */
  async deactivateAllOf(userId: string): Promise<number> {
    const result = await this.connection.db
      .updateTable('workflows')
      .set({ active: 0, updated_at: new Date().toISOString() })
      .where('user_id', '=', userId)
      .where('active', '=', 1)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async setVariables(id: string, variables: Record<string, VariableValues>): Promise<void> {
    await this.connection.db
      .updateTable('workflows')
      .set({ variables: JSON.stringify(variables), updated_at: new Date().toISOString() })
      .where('id', '=', id)
      .execute();
  }

  /** Gives a child a new webhook token; answers it. */
  async rotateWebhookToken(id: string): Promise<string> {
    const token = newWebhookToken();
    await this.connection.db
      .updateTable('workflows')
      .set({ webhook_token: token, updated_at: new Date().toISOString() })
      .where('id', '=', id)
      .execute();
    return token;
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.connection.db.deleteFrom('workflows').where('id', '=', id).executeTakeFirst();
    return result.numDeletedRows === 1n;
  }
}
