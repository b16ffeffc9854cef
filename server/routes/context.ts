import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuthKeys } from '../auth.js';
import type { Catalog } from '../catalog/catalog.js';
import type { Clock } from '../clock.js';
import type { Delivery } from '../engine/delivery.js';
import type { Engine } from '../engine/engine.js';
import { originOfHost } from '../http.js';
import type { RateLimiter } from '../rate-limit.js';
import type { SecretBox } from '../secrets.js';
import type { Store } from '../store/store.js';
import type { Tracing } from '../trace.js';

/**
 * What every route module is given: each is a `RoutePlugin` registered with these options. It
 * lives apart from server/app.ts, which composes the routes, so that the routes need nothing
 * from the module that registers them.
 */
export interface ServiceDeps {
  store: Store;
  catalog: Catalog;
  authKeys: AuthKeys;
  secrets: SecretBox;
  allowedOrigins: string[];
  allowPrivateWebhooks: boolean;
  limits: RateLimiter;
  oauthGrantTtlMs: number | undefined;
  /** What "now" is (server/clock.ts). */
  clock: Clock;
  /** How long the error webhook's previous secret signs beside the new one after a rotation. */
  webhookSecretGraceMs: number;
  /** Set once the service begins to stop: /readyz says not ready from then on (drain delay). */
  lifecycle: { stopping: boolean };
  /**
   * The service's public origin (FORGE_PUBLIC_URL): OAuth redirect URIs are made from it, never
   * from a request's Host header. Undefined: http://localhost:<port>.
   */
  publicUrl: string | undefined;
  /** Where the OAuth clients' ids and secrets are read from (the names are in the catalog). */
  env: NodeJS.ProcessEnv;
  /** The service's own notes (a provider's refusal, a refresh that failed); never a secret. */
  log: (line: string) => void;
  /** Runs workflows: `engine.tick(date)` runs what is scheduled in that minute. */
  engine: Engine;
  /** Sends error log entries to the host's webhook and event bus. */
  delivery: Delivery;
  /** Spans, when OTEL_EXPORTER_OTLP_ENDPOINT is set (server/trace.ts); otherwise undefined. */
  tracing: Tracing | undefined;
}

/** The OAuth redirect URI a host registers with each provider: `<public url>/forge/2021-12/oauth/callback`. */
export function redirectUri(deps: Pick<ServiceDeps, 'publicUrl'>, request: FastifyRequest): string {
  return `${serviceOrigin(deps, request.server)}/forge/2021-12/oauth/callback`;
}

/** The service's own origin: its public URL, else http://localhost:<the port it listens on>. */
export function serviceOrigin(deps: Pick<ServiceDeps, 'publicUrl'>, server: FastifyInstance): string {
  const port = (server.server.address() as { port?: number } | null)?.port ?? 4010;
  return deps.publicUrl ?? `http://localhost:${port}`;
}

/**
 * A route module: a Fastify plugin given the service's dependencies, whose handlers read their
 * params, query and body typed from the route's TypeBox schema (and `request.principal` typed
 * from its `config.access`).
 */
export type RoutePlugin = FastifyPluginAsyncTypebox<ServiceDeps>;

/** The origin a caller reached the service at, for the URLs the service hands out. */
export function baseOf(request: FastifyRequest): string {
  return (
    originOfHost(request.headers.host) ??
    `http://localhost:${(request.server.server.address() as { port?: number } | null)?.port ?? 4010}`
  );
}
