import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { badRequest, HttpProblem, MAX_URL_LENGTH, unsupportedMediaType } from '../http.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../json-depth.js';

/**
 * What a request must be before any route reads it, checked before its credential: a URL of
 * sane length with no NUL, an uncompressed body, and JSON that is UTF-8 and not absurdly deep.
 */
async function requestGuards(app: FastifyInstance): Promise<void> {
  // A callback, not an async function: every request passes here, and nearly all pass (issue 29).
  app.addHook('onRequest', function refuseUnreadableUrls(request, _reply, done) {
    if (request.url.length > MAX_URL_LENGTH) {
      return done(
        new HttpProblem(
          414,
          'uri-too-long',
          'URI too long',
          `The request URL is longer than ${MAX_URL_LENGTH} characters. Send large values in a JSON body instead.`,
        ),
      );
    }
    // No id, token or value of the service holds a NUL character, and PostgreSQL cannot even
    // compare text with one: refused alike on both backends.
    if (request.url.includes('%00')) {
      return done(
        badRequest('The URL holds a NUL character (%00), which no id, token or value of the service contains.'),
      );
    }
    done();
  });
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const encoding = request.headers['content-encoding'];
    if (encoding && encoding.toLowerCase() !== 'identity') {
      return done(
        unsupportedMediaType(
          `The body is sent with Content-Encoding "${encoding}"; the service reads only uncompressed JSON. Send it without a Content-Encoding.`,
        ),
      );
    }
    done(null, payload);
  });

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
