import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { AuthKeys } from '../auth.js';
import type { Catalog } from '../catalog/catalog.js';
import type { Delivery } from '../engine/delivery.js';
import type { Engine } from '../engine/engine.js';
import { originOfHost } from '../http.js';
import type { RateLimiter } from '../rate-limit.js';
import type { SecretBox } from '../secrets.js';
import type { Store } from '../store/store.js';

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
  /** Runs workflows: `engine.tick(date)` runs what is scheduled in that minute. */
  engine: Engine;
  /** Sends error log entries to the host's webhook and event bus. */
  delivery: Delivery;
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
