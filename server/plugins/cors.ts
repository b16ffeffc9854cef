import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Access } from './route-table.js';

const EMBED: Access[] = ['any', 'user'];

export interface CorsOptions {
  /** Origins the embed surface answers cross-origin. */
  allowedOrigins: string[];
}

/**
 * CORS: only the embed surface, only for the allowed origins; a preflight elsewhere is a 204
 * with no CORS header, so a browser never learns it may call an API-key operation. Registered
 * before the credential check, so that a refusal (401, 403) reaches the page that may read it.
 */
async function embedCors(app: FastifyInstance, { allowedOrigins }: CorsOptions): Promise<void> {
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
  await app.register(cors, {
    strictPreflight: false,
    hideOptionsRoute: true,
    delegator: (request, callback) => {
      const origin = request.headers.origin;
      // Most calls come from backends, with no Origin: nothing to look up.
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

export default fp(embedCors, { name: 'forge-cors', fastify: '5.x', dependencies: ['forge-route-table'] });
