import type { Connection } from './connection.js';

/** The integration credentials each user has connected, each sealed (server/secrets.ts). */
export class CredentialRepository {
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

  async list(userId: string): Promise<Array<{ integration: string; connectedAt: string }>> {
    return this.connection.db
      .selectFrom('credentials')
      .select(['integration', 'connected_at as connectedAt'])
      .where('user_id', '=', userId)
      .orderBy('integration')
      .execute();
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
}
