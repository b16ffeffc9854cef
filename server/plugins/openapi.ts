import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ProblemSchema, ref } from '../schemas.js';
import type { Access } from './route-table.js';

/**
 * The OpenAPI 3.1 document, built from the same route schemas that validate requests (served at
 * GET /openapi.json and written to docs/openapi.json by the build). Registered before any
 * route: it sees only the routes registered after it.
 */
async function openapi(app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', (route) => {
    route.schema = withProblems(route.schema as Record<string, unknown> | undefined, route.config?.access ?? 'public');
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Forge service',
        version: '2021-12',
        description:
          'The Integration Workflow Management Service and the embed surface that the forge-embed elements call. Every error is an RFC 9457 problem document.',
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            description: "The host account's API key (`forge_sk_…`). Backend only: refused on any request from a page.",
          },
          userToken: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'A user token from GET /user/{userId}/token (ES256, at most 30 minutes); the embed surface.',
          },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (json.$id as string) ?? `schema${i}` },
  });
}

/**
 * One place adds what every route's description shares: the problem documents a route can
 * answer, and which credential it takes (the OpenAPI `security` of each operation).
 */
function withProblems(schema: Record<string, unknown> | undefined, access: Access): Record<string, unknown> {
  const base = schema ?? {};
  const response = { ...((base.response as Record<string, unknown>) ?? {}) };
  const problem = ref(ProblemSchema);
  response['4xx'] ??= {
    description:
      'A problem document: bad input (400), a missing or invalid credential (401), the wrong kind of credential (403), an unknown id (404), a conflict (409), a body too large (413) or not JSON (415).',
    content: { 'application/problem+json': { schema: problem } },
  };
  response['5xx'] ??= {
    description:
      'The service failed (500; the problem document says nothing of its internals), or cannot reach its database right now (503, with Retry-After: retry then).',
    content: { 'application/problem+json': { schema: problem } },
  };
  const security =
    access === 'apiKey'
      ? [{ apiKey: [] }]
      : access === 'user'
        ? [{ userToken: [] }]
        : access === 'any'
          ? [{ apiKey: [] }, { userToken: [] }]
          : [];
  return { ...base, response, security };
}

export default fp(openapi, { name: 'forge-openapi', fastify: '5.x' });
