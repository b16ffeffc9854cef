import type { Catalog } from '../catalog/catalog.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { type OAuthApp, ProviderFailure, refreshCredential, revokeCredential } from '../oauth/client.js';
import type { SecretBox } from '../secrets.js';
import type { Store } from '../store/store.js';
import { type Tracing, traced } from '../trace.js';
import { BlockFailure } from './blocks.js';
import { type AppAccess, placeCredential, type StoredCredential } from './placement.js';

/**
 * A user's connection to an app, as the engine uses it: the credential placed for a block
 * (server/engine/placement.ts), an OAuth token kept fresh exactly once. A token that expires
 * within REFRESH_MARGIN_MS is refreshed before the block runs; after a 401 it is refreshed once.
 * Of several runs that need the same refresh, one makes it: a single flight inside this process,
 * and on PostgreSQL a row lock (SELECT … FOR UPDATE) across instances, after which the others
 * find the new token and use it. invalid_grant or invalid_client marks the connection broken;
 * a network error, a timeout or a 5xx only fails this run (kind `app`) and keeps the refresh token.
 */

/** A token that expires sooner than this (or than half its lifetime) is refreshed before it is used. */
export const REFRESH_MARGIN_MS = 60_000;

/**
 * Whether a token is to be refreshed before use. The margin is at most half the token's
 * lifetime: a provider's 30-second token is used for 15 seconds, not refreshed at every run.
 * Provider tokens expire in real time (their expiry came from the provider), not the service's clock.
 */
export function needsRefresh(credential: { expiresAt?: number; lifetimeMs?: number }): boolean {
  if (credential.expiresAt === undefined) return false;
  const margin = Math.min(REFRESH_MARGIN_MS, (credential.lifetimeMs ?? Number.POSITIVE_INFINITY) / 2);
  return credential.expiresAt - Date.now() < margin;
}

type OAuthCredential = Extract<StoredCredential, { kind: 'oauth2' }>;

export interface ConnectionsOptions {
  store: Store;
  catalog: Catalog;
  secrets: SecretBox;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** Counts refreshes by outcome and connections turned broken (server/metrics.ts); default none. */
  metrics?: Metrics;
  /** A span for each refresh (server/trace.ts); default none. */
  tracing?: Tracing;
  /** The service's own origin (the local provider's `auth` paths are on it). */
  serviceUrl: () => string;
}

export interface BlockAccess {
  access: AppAccess | undefined;
  /** After a 401: the token refreshed once, or undefined when there is nothing to refresh. */
  renew?: () => Promise<AppAccess | undefined>;
}

/** A refresh for one user's connection to `app` (`name` to show), to replace the token `seen`. */
interface RefreshRequest {
  userId: string;
  app: OAuthApp;
  name: string;
  seen: string;
  /** The run's logger, so that what the refresh notes carries the execution id. */
  runLog: Logger | undefined;
}

export class Connections {
  private readonly inFlight = new Map<string, Promise<OAuthCredential>>();

  constructor(private readonly options: ConnectionsOptions) {}

  /** What a block of `integration` sends for `userId`; throws a BlockFailure (kind `connection`) for a broken one. */
  async forBlock(userId: string, integration: string | undefined, runLog?: Logger): Promise<BlockAccess> {
    if (!integration) return { access: undefined };
    const { store, catalog, secrets } = this.options;
    const config = catalog.apps.get(integration) ?? { parameters: [] };
    const row = await store.credentials.getConnection(userId, integration);
    if (!row) {
      // Not connected: the request goes without a credential (the app refuses it, as it should).
      const fixed = config.baseUrl && !config.baseUrl.includes('{{') ? config.baseUrl : undefined;
      return { access: { baseUrl: fixed, headers: {}, query: {}, anyOrigin: false, connection: {} } };
    }
    const name = catalog.integrations.get(integration)?.displayName ?? integration;
    if (row.status === 'broken') {
      throw new BlockFailure(
        `${name} no longer accepts this connection (the access was revoked or expired); connect ${name} again.`,
        'connection',
      );
    }
    let credential = secrets.open<StoredCredential>(row.secret);
    const auth = config.auth;
    const place = (c: StoredCredential) => {
      const access = placeCredential(config, c);
      if (!access) {
        throw new BlockFailure(
          `The connection to ${name} lacks a value its API needs (it was saved before the catalog asked for it); connect ${name} again.`,
          'connection',
        );
      }
      return access;
    };
    if (auth?.kind !== 'oauth2' || credential.kind !== 'oauth2') return { access: place(credential) };
    // The service's origin (the local provider's paths are on it) is looked up only for a refresh:
    // asking the server for its address at every use was a measurable part of an options read.
    const refresh = (seen: string) =>
      this.refresh({ userId, app: { integration, auth, serviceUrl: this.options.serviceUrl() }, name, runLog, seen });
    if (needsRefresh(credential)) credential = await refresh(credential.accessToken);
    const used = credential.accessToken;
    return {
      access: place(credential),
      renew: async () => place(await refresh(used)),
    };
  }

  /** A fresh token in place of `seen`: the one another run or instance already got, or a new one from the provider. */
  private refresh(request: RefreshRequest): Promise<OAuthCredential> {
    const key = `${request.userId}\n${request.app.integration}`;
    const running = this.inFlight.get(key);
    if (running) return running;
    const flight = this.refreshLocked(request).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, flight);
    return flight;
  }

  private async refreshLocked({ userId, app, name, seen, runLog }: RefreshRequest): Promise<OAuthCredential> {
    const { store, secrets, env, log, metrics, tracing } = this.options;
    // A run's notes carry its execution id.
    const note = (line: string) => (runLog ? runLog.warn({ component: 'oauth' }, line) : log(line));
    const counted = (outcome: 'refreshed' | 'reused' | 'failed' | 'broken') =>
      metrics?.tokenRefreshes.inc({ integration: app.integration, outcome });
    const decide = async (tx: Store) => {
      const row = await tx.credentials.getConnection(userId, app.integration, { forUpdate: true });
      if (!row) return { outcome: 'gone' as const };
      if (row.status === 'broken') return { outcome: 'broken' as const, message: 'the connection is broken' };
      const current = secrets.open<OAuthCredential>(row.secret);
      // Another run or instance refreshed while this one waited for the lock: its token is used,
      // even if the provider gives tokens shorter-lived than the margin.
      const unexpired = current.expiresAt === undefined || current.expiresAt > Date.now();
      if (current.accessToken !== seen && unexpired) {
        counted('reused');
        return { outcome: 'ok' as const, credential: current };
      }
      try {
        const renewed = await traced(
          tracing,
          `oauth refresh ${app.integration}`,
          { kind: 'client', attributes: { 'forge.integration': app.integration } },
          () => refreshCredential(app, env, current),
        );
        await tx.credentials.replaceSecret(userId, app.integration, secrets.seal(renewed));
        counted('refreshed');
        return { outcome: 'ok' as const, credential: renewed };
      } catch (error) {
        if (!(error instanceof ProviderFailure)) throw error;
        note(`oauth ${app.integration}: refresh for user ${userId} failed: ${error.providerAnswer}`);
        if (error.reason !== 'broken') {
          counted('failed');
          return { outcome: 'failed' as const, message: error.message };
        }
        await tx.credentials.markBroken(userId, app.integration);
        counted('broken');
        metrics?.connectionsBroken.inc({ integration: app.integration });
        return { outcome: 'broken' as const, message: error.message };
      }
    };
    // On PostgreSQL the row lock holds other instances until this refresh is stored. SQLite has
    // one instance: the single flight is enough, and its one connection stays free meanwhile.
    const result = store.dialect === 'postgres' ? await store.transaction(decide) : await decide(store);
    if (result.outcome === 'ok') return result.credential;
    if (result.outcome === 'failed') {
      throw new BlockFailure(
        `${name} could not renew its access token (${result.message}); the next run tries again.`,
        'app',
      );
    }
    throw new BlockFailure(
      `${name} no longer accepts this connection (the access was revoked or expired); connect ${name} again.`,
      'connection',
    );
  }
}

/**
 * What a disconnect did: the child workflows it switched off, and whether the app was told.
 * `revoked`: the app confirmed it revoked the grant. `not-supported`: the app has no revocation
 * endpoint (or it is not an OAuth connection). `failed`: the app could not be reached or refused;
 * the service forgot the credential all the same (see `disconnect`).
 */
export interface Disconnected {
  integration: string;
  switchedOff: string[];
  revocation: 'revoked' | 'not-supported' | 'failed';
}

/**
 * Ends a user's connection to an app: asks the app to revoke the grant (when it has a revocation
 * endpoint), then deletes the stored credential and switches off the user's child workflows that
 * use the integration, those two in one transaction. Undefined when the user has no connection
 * to it.
 *
 * The revocation comes first, while the credential is still there to revoke: a service that
 * stops between the two leaves a revoked grant behind, which its next refresh finds broken and
 * the user sees as "needs reconnecting", never a live grant the service no longer knows of. A
 * revocation that fails does not stop the disconnect: the user asked the service to stop using
 * the account, and it does (its copy of the token is gone, nothing runs with it); the answer says
 * `failed`, so the element can tell the user to remove the access in the app too, and the log has
 * the app's answer.
 */
export async function disconnect(
  { store, catalog, secrets, env, log, serviceUrl, tracing }: ConnectionsOptions,
  userId: string,
  integration: string,
): Promise<Disconnected | undefined> {
  const row = await store.credentials.getConnection(userId, integration);
  if (!row) return undefined;
  const auth = catalog.apps.get(integration)?.auth;
  const credential = secrets.open<StoredCredential>(row.secret);
  let revocation: Disconnected['revocation'] = 'not-supported';
  if (auth?.kind === 'oauth2' && auth.revocationUrl && credential.kind === 'oauth2') {
    try {
      await traced(
        tracing,
        `oauth revoke ${integration}`,
        { kind: 'client', attributes: { 'forge.integration': integration } },
        () => revokeCredential({ integration, auth, serviceUrl: serviceUrl() }, env, credential),
      );
      revocation = 'revoked';
    } catch (error) {
      revocation = 'failed';
      log(`oauth ${integration}: revocation for user ${userId} failed: ${(error as Error).message}`);
    }
  }
  return store.transaction(async (tx) => {
    // Another disconnect of the same connection got here first: it answers, this one is a 404.
    if (!(await tx.credentials.delete(userId, integration))) return undefined;
    const switchedOff: string[] = [];
    for (const child of await tx.children.list(userId)) {
      if (child.active && catalog.get(child.parentId)?.integrations.some((i) => i.name === integration)) {
        await tx.children.setActive(child.id, false);
        switchedOff.push(child.id);
      }
    }
    return { integration, switchedOff, revocation };
  });
}
