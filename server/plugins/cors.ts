import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import type { Access } from './route-table.js';

const EMBED: Access[] = ['any', 'user'];

export interface CorsOptions {
  /** Origins the embed surface answers cross-origin. */
  allowedOrigins: string[];
}

/**
 * CORS: only the embed surface, only for the allowed origins; a preflight elsewhere is a 204
 * with no CORS header, so a browser never learns it may call an API-key operation. Run first of
 * the request checks (request-checks.ts), before the credential check, so that a refusal (401,
 * 403) reaches the page that may read it.
 *
 * Most calls come from backends, with no Origin, and @fastify/cors's whole answer to them is
 * `Vary: Origin` (the embed surface's answers differ by Origin), made after normalizing the
 * delegator's options, spreading them again with the route's and reading the route's options
 * twice (issue 29). The request checks set that header themselves for a request without an
 * Origin, as the library sets it, and call the hook returned here only for a request with one.
 * The library's preflight route (`OPTIONS *`) and request decoration are registered on `app`.
 */
export function embedCors(app: FastifyInstance, { allowedOrigins }: CorsOptions): onRequestHookHandler {
  // The two answers the delegator gives, made once at start rather than per request (issue 29).
  const allowed = {
    origin: true,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type'],
    maxAge: 600,
    preflightContinue: false,
    optionsSuccessStatus: 204,
  };
  const refused = { origin: false };
  return corsHook(app, {
    strictPreflight: false,
    hideOptionsRoute: true,
    delegator: (request, callback) => {
      const origin = request.headers.origin;
      if (!origin) return callback(null, refused);
      const method =
        request.method === 'OPTIONS'
          ? String(request.headers['access-control-request-method'] ?? 'GET')
          : request.method;
      const access = app.routeTable.accessOf(method, request.url);
      callback(null, allowedOrigins.includes(origin) && access && EMBED.includes(access) ? allowed : refused);
    },
  });
}

/**
 * @fastify/cors, registered on `app` (its preflight route `OPTIONS *` and its request decoration)
 * but for its `onRequest` hook, which it hands back instead of adding: the request checks call it
 * for the requests that carry an Origin. The library adds exactly that hook (checked here, so a
 * version that registers differently fails at start, not silently).
 */
function corsHook(app: FastifyInstance, options: FastifyCorsOptions): onRequestHookHandler {
  let hook: onRequestHookHandler | undefined;
  const registrar = {
    decorateRequest: app.decorateRequest.bind(app),
    options: app.options.bind(app),
    addHook(name: string, handler: onRequestHookHandler) {
      if (name !== 'onRequest' || hook) throw new Error(`@fastify/cors added an unexpected ${name} hook.`);
      hook = handler;
      return registrar;
    },
  };
  cors(registrar as unknown as FastifyInstance, options, (error) => {
    if (error) throw error;
  });
  if (!hook) throw new Error('@fastify/cors added no onRequest hook.');
  return hook;
}
