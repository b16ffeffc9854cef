import { createReadStream, existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { Catalog } from '../catalog/catalog.js';
import { HttpProblem, notFound } from '../http.js';
import type { RoutePlugin } from './context.js';

const ICON_TYPES: Record<string, string> = { '.svg': 'image/svg+xml', '.png': 'image/png' };
const Image = {
  description: 'An icon (SVG or PNG).',
  content: { 'image/svg+xml': { schema: Type.String() }, 'image/png': { schema: Type.String() } },
};

/** What the service says about itself: its signing keys, the catalog's icons, its OpenAPI document. */
const meta: RoutePlugin = async (api, { authKeys, catalog }) => {
  api.get(
    '/.well-known/jwks.json',
    {
      config: { access: 'public' },
      schema: {
        summary: 'The public keys that verify user tokens',
        tags: ['meta'],
        response: { 200: Type.Object({ keys: Type.Array(Type.Object({}, { additionalProperties: true })) }) },
      },
    },
    () => authKeys.jwks(),
  );

  for (const folder of ['', 'blocks/']) {
    api.get(
      `/icons/${folder}:file`,
      {
        config: { access: 'public' },
        schema: {
          summary: folder ? 'A block type’s icon' : 'An integration’s icon',
          tags: ['meta'],
          params: Type.Object({ file: Type.String() }),
          response: { 200: Image },
        },
      },
      async (request, reply) => serveIcon(catalog, folder, request.params.file, reply),
    );
  }

  api.get(
    '/openapi.json',
    {
      config: { access: 'public' },
      schema: {
        summary: 'This OpenAPI 3.1 document',
        tags: ['meta'],
        response: { 200: Type.Object({}, { additionalProperties: true }) },
      },
    },
    async (request) => request.server.swagger(),
  );
};

export default meta;

/**
 * For a load balancer: `/healthz` says the process answers, `/readyz` that it can reach its
 * database. Marked `probe`: they live beside the service interface, not in its route table.
 */
export const probes: RoutePlugin = async (app, { store, lifecycle }) => {
  const Status = Type.Object({ status: Type.String() });
  app.get(
    '/healthz',
    {
      // Answers under pressure too: an overloaded process is alive, not one to restart.
      config: { access: 'public', probe: true, pressureHandler: () => undefined },
      schema: { summary: 'The process is up', tags: ['meta'], response: { 200: Status } },
    },
    async () => ({ status: 'ok' }),
  );
  app.get(
    '/readyz',
    {
      config: { access: 'public', probe: true },
      schema: { summary: 'The database is reachable', tags: ['meta'], response: { 200: Status } },
    },
    async (request) => {
      if (lifecycle.stopping) {
        // The load balancer takes this instance out while it still answers what is sent to it.
        throw new HttpProblem(
          503,
          'not-ready',
          'Not ready',
          'The service is stopping; send requests to another instance.',
        );
      }
      try {
        await store.ping();
      } catch (error) {
        request.log.warn({ err: error }, 'database unreachable');
        throw new HttpProblem(
          503,
          'not-ready',
          'Not ready',
          'The service cannot reach its database. It answers again once the database does.',
        );
      }
      return { status: 'ready' };
    },
  );
};

function serveIcon(catalog: Catalog, folder: string, file: string, reply: FastifyReply): FastifyReply {
  const type = ICON_TYPES[file.slice(file.lastIndexOf('.'))];
  // basename() keeps a request inside the icons folder whatever it names.
  const path = join(catalog.iconsDir, folder, basename(file));
  if (!type || !existsSync(path)) throw notFound(`No icon ${folder}${file}.`);
  return reply
    .headers({
      'Content-Type': type,
      'Cache-Control': 'public, max-age=86400',
      'X-Content-Type-Options': 'nosniff',
      // SVGs are images here, never documents that run script.
      'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
      'Cross-Origin-Resource-Policy': 'cross-origin',
    })
    .send(createReadStream(path));
}
