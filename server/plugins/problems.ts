import type { FastifyInstance, FastifyReply, FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import {
  badRequest,
  databaseUnavailableProblem,
  HttpProblem,
  internalError,
  notFound,
  problemOf,
  requestPath,
} from '../http.js';

import type { Logger } from '../log.js';
import { databaseUnavailable } from '../store/store.js';
import { writeAtTurnEnd } from '../turn-end.js';
import { API_PREFIX, LOCAL_PROVIDER_PREFIX } from '../views.js';
import type { ClosingState } from './shutdown.js';

export interface ProblemsOptions {
  /**
   * Where an unexpected error goes when the service has no log (embedded without a log stream,
   * where the request's logger writes nothing): a JSON line on stderr, so that it is not lost.
   */
  unlogged: Logger | undefined;
  /** Whether the server is closing (shutdown.ts): then every answer says `Connection: close`. */
  closing: ClosingState;
}

/**
 * Every error is an RFC 9457 problem document: thrown by a hook or a handler, an unknown path
 * (404) or method (405). JSON answers are never cached. Registered before the routes, which
 * take the error handler and hooks that are in place when they are registered.
 */
async function problems(app: FastifyInstance, { unlogged, closing }: ProblemsOptions): Promise<void> {
  app.setErrorHandler((error, request, reply) => {
    let problem = problemOf(error);
    if (!problem && databaseUnavailable(error)) {
      request.log.warn({ err: error }, 'database unreachable');
      problem = databaseUnavailableProblem();
    }
    if (!problem) {
      // Never leak internals: the log gets the error, the caller a problem document.
      if (unlogged) unlogged.error({ err: error, reqId: request.id }, 'request failed');
      else request.log.error({ err: error }, 'request failed');
      problem = internalError();
    }
    return sendProblem(reply, problem);
  });

  app.setNotFoundHandler((request, reply) => {
    const pathname = requestPath(request.url);
    if (request.method === 'OPTIONS') return reply.code(204).send();
    const allowed = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => app.routeTable.accessOf(m, request.url));
    if (allowed.length > 0) {
      throw new HttpProblem(
        405,
        'method-not-allowed',
        'Method not allowed',
        `${pathname} answers ${allowed.join(', ')}, not ${request.method}.`,
        undefined,
        { Allow: allowed.join(', ') },
      );
    }
    throw notFound(
      pathname.startsWith(`${API_PREFIX}/`) || pathname.startsWith(`${LOCAL_PROVIDER_PREFIX}/`)
        ? `No endpoint ${request.method} ${pathname}. See the API section of the README for the endpoints.`
        : `No endpoint at ${pathname}. Every path of the service begins with ${API_PREFIX}.`,
    );
  });

  // The headers every answer gets once its own are set, and its write at the end of the turn, in
  // one hook (each onSend hook is a call through Fastify's runner for every request, issue 29).
  app.addHook('onSend', function answerHeaders(_request, reply, payload, done) {
    // While the server closes, the connection ends with its answer (shutdown.ts).
    if (closing.closing) reply.header('Connection', 'close');
    // JSON answers are never cached: they are one user's data or a credential.
    if (!reply.hasHeader('cache-control')) reply.header('Cache-Control', 'no-store');
    // Written with the turn's other answers (server/turn-end.ts).
    writeAtTurnEnd(reply, done, payload);
  });
}

function sendProblem(reply: FastifyReply, problem: HttpProblem): FastifyReply {
  return reply
    .code(problem.status)
    .headers({ 'Cache-Control': 'no-store', ...problem.headers })
    .type('application/problem+json; charset=utf-8')
    .send(problem.toJSON());
}

/**
 * A path that does not decode (`%E0%A4%A`), or a request target that is neither a path nor an
 * absolute URL (`*forge/2021-12/workflow`), never reaches a route; it still gets a problem document.
 */
export const frameworkErrors: FastifyServerOptions['frameworkErrors'] = (error, request, reply) => {
  sendProblem(
    reply as FastifyReply,
    error.code === 'FST_ERR_BAD_URL' ? badUrl(request.url) : (problemOf(error) ?? internalError()),
  );
};

/** What the router could not read: a path that does not decode, or a target that is not a path. */
function badUrl(url: string): HttpProblem {
  const path = requestPath(url);
  if (path.startsWith('/')) return badRequest(`The path ${path} is not correctly URL-encoded.`);
  return badRequest(
    `The request target ${path} does not begin with /. Send the path, for example GET ${API_PREFIX}/workflow.`,
  );
}

/** A request that cannot be parsed (over-long header block, bad framing) still gets a problem document. */
export const clientErrorHandler: FastifyServerOptions['clientErrorHandler'] = (error, socket) => {
  if (!socket.writable) return socket.destroy();
  const overflow = (error as NodeJS.ErrnoException).code === 'HPE_HEADER_OVERFLOW';
  const problem = overflow
    ? new HttpProblem(
        431,
        'request-header-fields-too-large',
        'Request header fields too large',
        'The request line and headers together are over 16 KB. Send a shorter URL or fewer, smaller headers.',
      )
    : new HttpProblem(400, 'bad-request', 'Bad request', 'The request is not valid HTTP/1.1; it was not read.');
  const body = JSON.stringify(problem.toJSON());
  socket.end(
    `HTTP/1.1 ${problem.status} ${problem.title}\r\nContent-Type: application/problem+json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
};

export default fp(problems, { name: 'forge-problems', fastify: '5.x', dependencies: ['forge-route-table'] });
