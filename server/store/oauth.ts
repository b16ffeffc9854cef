import { randomBytes } from 'node:crypto';
import type { Connection } from './connection.js';

export interface OAuthState {
  userId: string;
  integration: string;
  openerOrigin: string;
  code: string | null;
  /** Sealed: the PKCE verifier and connection values of the flow (server/routes/credentials.ts). */
  sealedFlow: string | null;
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

/** OAuth states (one-time, short-lived, bound to a user and the origin that asked) and grants waiting for confirmation. */
export class OAuthRepository {
  constructor(private readonly connection: Connection) {}

  async createState(
    userId: string,
    integration: string,
    openerOrigin: string,
    ttlMs: number,
    sealedFlow: string | null = null,
  ): Promise<{ state: string; expiresAt: number }> {
    const state = randomBytes(24).toString('base64url');
    const expiresAt = Date.now() + ttlMs;
    await this.connection.db.deleteFrom('oauth_states').where('expires_at', '<', Date.now()).execute();
    await this.connection.db
      .insertInto('oauth_states')
      .values({
        state,
        user_id: userId,
        integration,
        opener_origin: openerOrigin,
        expires_at: expiresAt,
        sealed_flow: sealedFlow,
      })
      .execute();
    return { state, expiresAt };
  }

  async getState(state: string): Promise<OAuthState | undefined> {
    return this.connection.db
      .selectFrom('oauth_states')
      .select([
        'user_id as userId',
        'integration',
        'opener_origin as openerOrigin',
        'code',
        'sealed_flow as sealedFlow',
      ])
      .where('state', '=', state)
      .where('expires_at', '>=', Date.now())
      .executeTakeFirst();
  }

  async setCode(state: string, code: string): Promise<void> {
    await this.connection.db.updateTable('oauth_states').set({ code }).where('state', '=', state).execute();
  }

  /** Marks the authorize link of a state as opened; true only the first time, within its lifetime. */
  async markStateOpened(state: string): Promise<boolean> {
    const result = await this.connection.db
      .updateTable('oauth_states')
      .set({ opened: 1 })
      .where('state', '=', state)
      .where('opened', '=', 0)
      .where('expires_at', '>=', Date.now())
      .executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }

  /** Uses a state up; answers it only if it was still there (and valid), so a replay finds nothing. */
  async takeState(state: string): Promise<OAuthState | undefined> {
    const found = await this.connection.db
      .deleteFrom('oauth_states')
      .where('state', '=', state)
      .returning([
        'user_id as userId',
        'integration',
        'opener_origin as openerOrigin',
        'code',
        'sealed_flow as sealedFlow',
        'expires_at',
      ])
      .executeTakeFirst();
    if (!found || found.expires_at < Date.now()) return undefined;
    const { expires_at: _expiresAt, ...flow } = found;
    return flow;
  }

  async createPendingGrant(grant: PendingGrant): Promise<void> {
    await this.connection.db.deleteFrom('oauth_grants').where('expires_at', '<', Date.now()).execute();
    await this.connection.db
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
    return this.connection.db
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
}
