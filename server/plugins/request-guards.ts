import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import {
  badRequest,
  HttpProblem,
  hasEmptySegment,
  MAX_URL_LENGTH,
  notFound,
  requestPath,
  unsupportedMediaType,
} from '../http.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../json-depth.js';

/**
 * What a request must be before any route reads it: a URL of sane length with no NUL and no
 * empty path segment (checked before its credential, by the request checks: request-checks.ts),
 * an uncompressed body (checked after its credential, where a preParsing hook checked it before
 * issue 29), and JSON that is UTF-8 and not absurdly deep (the body parser registered here).
 */
export function unreadableUrl(request: FastifyRequest): HttpProblem | undefined {
  if (request.url.length > MAX_URL_LENGTH) {
    return new HttpProblem(
      414,
      'uri-too-long',
      'URI too long',
      `The request URL is longer than ${MAX_URL_LENGTH} characters. Send large values in a JSON body instead.`,
    );
  }
  // No id, token or value of the service holds a NUL character, and PostgreSQL cannot even
  // compare text with one: refused alike on both backends.
  if (request.url.includes('%00')) {
    return badRequest('The URL holds a NUL character (%00), which no id, token or value of the service contains.');
  }
  // `/workflow/` would reach `/workflow/:workflowId` with an empty id and be told "No workflow ."
  if (hasEmptySegment(request.url)) {
    const path = requestPath(request.url);
    const meant = path.replace(/\/{2,}/g, '/').replace(/(.)\/$/, '$1');
    return notFound(
      `No endpoint ${request.method} ${path}: no path of the service has an empty segment (two slashes together, or one at the end). Did you mean ${request.method} ${meant}?`,
    );
  }
  return undefined;
}

/** A body sent compressed: the service reads only uncompressed JSON. */
export function encodedBody(request: FastifyRequest): HttpProblem | undefined {
  const encoding = request.headers['content-encoding'];
  if (encoding && encoding.toLowerCase() !== 'identity') {
    return unsupportedMediaType(
      `The body is sent with Content-Encoding "${encoding}"; the service reads only uncompressed JSON. Send it without a Content-Encoding.`,
    );
  }
  return undefined;
}

/** The body parser: JSON (any `+json` type) as UTF-8, refused when it nests absurdly deep. */
async function requestGuards(app: FastifyInstance): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(/^application\/([\w.-]+\+)?json\s*(;|$)/i, { parseAs: 'buffer' }, (_request, body, done) => {
    try {
      done(null, parseJson(body as Buffer));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}

function parseJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new HttpProblem(
      400,
      'bad-request',
      'Bad request',
      'The body is not valid UTF-8. Send JSON encoded as UTF-8, as RFC 8259 requires.',
    );
  }
  if (nestsDeeperThan(text)) {
    throw badRequest(`The body nests objects and arrays more than ${MAX_JSON_DEPTH} deep. Send a flatter JSON body.`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HttpProblem(
      400,
      'bad-request',
      'Bad request',
      `The body is not valid JSON (${(error as Error).message}). Send a JSON object.`,
    );
  }
}

export default fp(requestGuards, { name: 'forge-request-guards', fastify: '5.x' });
