import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import FindMyWay from 'find-my-way';
import { requestPath } from '../http.js';
import { API_PREFIX } from '../views.js';

/**
 * Who may call a route: `apiKey` the host's backend only, `user` a user token only (the embed
 * surface's own operations), `any` either (the embed surface, scoped to the token's user),
 * `public` no credential (pages the OAuth popup visits, icons, the JWKS, webhooks, probes).
 */
export type Access = 'apiKey' | 'user' | 'any' | 'public';

/** One route of the service: method, path (relative to the API prefix unless it is another tree) and who may call it. */
export interface RouteEntry {
  method: string;
  path: string;
  access: Access;
}

export interface RouteTable {
  /** Every route, as Fastify registered it, filled in as each is registered. */
  entries: RouteEntry[];
  /** Who may call the route a method and URL lead to; undefined where there is none. */
  accessOf(method: string, url: string): Access | undefined;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
    /** A load balancer's probe: served beside the service interface, not part of it (left out of the table). */
    probe?: boolean;
  }
  interface FastifyInstance {
    routeTable: RouteTable;
  }
}

/**
 * The route list: Fastify's, gathered as it registers each route. CORS and the 405 answers look
 * routes up in it, and tests walk it so that no endpoint is left out. Registered before any
 * route, or it misses them.
 */
async function routeTable(app: FastifyInstance): Promise<void> {
  const entries: RouteEntry[] = [];
  const router = FindMyWay();
  app.addHook('onRoute', (route) => {
    const access = route.config?.access ?? 'public';
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (/^(HEAD|OPTIONS)$/i.test(method)) continue;
      router.on(method.toUpperCase() as FindMyWay.HTTPMethod, route.url, () => {}, { access });
      // The table is the service interface (the API and the OAuth popup's pages); the probes
      // for load balancers live beside it.
      if (!route.config?.probe) entries.push({ method, path: tablePath(route.url), access });
    }
  });
  app.decorate('routeTable', {
    entries,
    accessOf(method, url) {
      try {
        return (router.find(method as FindMyWay.HTTPMethod, requestPath(url))?.store as { access: Access } | undefined)
          ?.access;
      } catch {
        return undefined;
      }
    },
  } satisfies RouteTable);
}

const tablePath = (url: string) => (url.startsWith(`${API_PREFIX}/`) ? url.slice(API_PREFIX.length) : url);

export default fp(routeTable, { name: 'forge-route-table', fastify: '5.x' });
