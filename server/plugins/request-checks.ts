import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { type AuthOptions, callerIdentifier } from './auth.js';
import { type CorsOptions, embedCors } from './cors.js';
import { encodedBody, unreadableUrl } from './request-guards.js';

export interface RequestChecksOptions extends AuthOptions, CorsOptions {}

/**
 * What every request passes before its route reads it, in this order, in one `onRequest` hook:
 * CORS (first, so that a page on an allowed origin can read any refusal it gets), the URL guards
 * (a 414 or a NUL needs no credential), the credential check, then the body's encoding (a
 * refused caller learns nothing about the body it sent). One synchronous hook rather than three
 * `onRequest` hooks and a `preParsing` one: each hook phase Fastify runs makes its closures and
 * each hook is a call through its runner, for every request (issue 29's `/healthz` budget); it
 * goes asynchronous only where a credential must be read. Registered before the routes and the
 * not-found handler, which take the hooks in place when they are registered.
 */
async function requestChecks(app: FastifyInstance, options: RequestChecksOptions): Promise<void> {
  const handleCors = embedCors(app, options);
  const identifyCaller = callerIdentifier(options);
  const afterCors = (request: FastifyRequest, done: (error?: Error) => void) => {
    const refused = unreadableUrl(request);
    if (refused) return done(refused);
    const identifying = identifyCaller(request);
    if (identifying === undefined) return done(encodedBody(request));
    if (identifying instanceof Error) return done(identifying);
    identifying.then(() => done(encodedBody(request)), done);
  };
  app.addHook('onRequest', function checkRequest(request, reply, done) {
    // Without an Origin, CORS's whole answer is `Vary: Origin`, set as the library sets it (cors.ts).
    if (!request.headers.origin) {
      reply.header('Vary', 'Origin');
      return afterCors(request, done);
    }
    // The library's hook answers a preflight itself and then does not call back.
    (handleCors as (...args: Parameters<onRequestHookHandler>) => void).call(this, request, reply, (error) =>
      error ? done(error) : afterCors(request, done),
    );
  });
}

export default fp(requestChecks, {
  name: 'forge-request-checks',
  fastify: '5.x',
  dependencies: ['forge-route-table', 'forge-request-guards', 'forge-auth'],
});
