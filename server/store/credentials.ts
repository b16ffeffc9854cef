import { CompiledOnce, type Connection, type Handle } from './connection.js';

export interface ConnectionRow {
  /** Sealed (server/secrets.ts). */
  secret: string;
  status: 'connected' | 'broken';
}

/** A connection as the user and the host may see it: never its secret. */
export interface ConnectionSummary {
  integration: string;
  connectedAt: string;
  status: 'connected' | 'broken';
  /** A display label the provider gave (a workspace, an e-mail). */
  account?: string;
}

/** A connection's row as the user and the host see it; `account` only when the provider gave one. */
export const connectionSummary = (row: {
  integration: string;
  connected_at: string;
  status: ConnectionSummary['status'];
  account: string | null;
}): ConnectionSummary => ({
  integration: row.integration,
  connectedAt: row.connected_at,
  status: row.status,
  ...(row.account ? { account: row.account } : {}),
});

/** The integration credentials each user has connected, each sealed (server/secrets.ts). */
export class CredentialRepository {
  // GET /setup reads it on every open of the modal (issue 29).
  private readonly listQuery = new CompiledOnce((db) =>
    db
      .selectFrom('credentials')
      .select(['integration', 'connected_at', 'status', 'account'])
      .where('user_id', '=', '')
      .orderBy('integration'),
  );

  // Every block run and options read with a connection reads it (issue 26).
  private readonly connectionQuery = new CompiledOnce((db) => CredentialRepository.connectionRow(db));
  private readonly lockingQuery = new CompiledOnce((db) => CredentialRepository.connectionRow(db).forUpdate());

  private static connectionRow(db: Handle) {
    return db
      .selectFrom('credentials')
      .select(['secret', 'status'])
      .where('user_id', '=', '')
      .where('integration', '=', '');
  }

  constructor(private readonly connection: Connection) {}

  /**
   * Stores a user's connection to an integration, replacing the one it had; answers when. It is
   * `connected` from now on, whatever the one it replaces was.
   */
  async save(
    userId: string,
    integration: string,
    sealedSecret: string,
    account: string | null = null,
  ): Promise<string> {
    const connectedAt = new Date().toISOString();
    await this.connection.db
      .insertInto('credentials')
      .values({
        user_id: userId,
        integration,
        secret: sealedSecret,
        connected_at: connectedAt,
        status: 'connected',
        account,
      })
      .onConflict((oc) =>
        oc.columns(['user_id', 'integration']).doUpdateSet({
          secret: (eb) => eb.ref('excluded.secret'),
          connected_at: (eb) => eb.ref('excluded.connected_at'),
          status: 'connected',
          account: (eb) => eb.ref('excluded.account'),
        }),
      )
      .execute();
    return connectedAt;
  }

  /**
   * The user's connections without their secrets: when, whether the app still takes it, and its
   * account label.
   */
  async list(userId: string): Promise<ConnectionSummary[]> {
    return (await this.listQuery.rows(this.connection.db, [userId])).map(connectionSummary);
  }

  /** Removes one connection; answers whether there was one. */
  async delete(userId: string, integration: string): Promise<boolean> {
    const { numDeletedRows } = await this.connection.db
      .deleteFrom('credentials')
      .where('user_id', '=', userId)
      .where('integration', '=', integration)
      .executeTakeFirst();
    return numDeletedRows > 0n;
  }

  async getSecret(userId: string, integration: string): Promise<string | undefined> {
    const row = await this.connection.db
      .selectFrom('credentials')
      .select('secret')
      .where('user_id', '=', userId)
      .where('integration', '=', integration)
      .executeTakeFirst();
    return row?.secret;
  }

  /**
   * One connection's row: its sealed secret and status. `forUpdate` locks the row until the
   * transaction ends (PostgreSQL; SQLite has one writer anyway), so of several instances that
   * want to refresh the same token, one does and the others read its result.
   */
  async getConnection(
    userId: string,
    integration: string,
    { forUpdate = false }: { forUpdate?: boolean } = {},
  ): Promise<ConnectionRow | undefined> {
    const query = forUpdate && this.connection.dialect === 'postgres' ? this.lockingQuery : this.connectionQuery;
    const [row] = await query.rows(this.connection.db, [userId, integration]);
    return row;
  }

  /** A refreshed token replaces the stored one; the connection stays as it was connected. */
  async replaceSecret(userId: string, integration: string, sealedSecret: string): Promise<void> {
    await this.connection.db
      .updateTable('credentials')
      .set({ secret: sealedSecret })
      .where('user_id', '=', userId)
      .where('integration', '=', integration)
      .execute();
  }

  /** The provider refused the grant: runs fail at once until the user connects again. */
  async markBroken(userId: string, integration: string): Promise<void> {
    await this.connection.db
      .updateTable('credentials')
      .set({ status: 'broken' })
      .where('user_id', '=', userId)
      .where('integration', '=', integration)
      .execute();
  }
}
