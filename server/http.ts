import type { ErrorObject } from 'ajv';
import type { FastifyError, FastifyReply } from 'fastify';
import type { FieldError, ProblemDocument } from 'forge-embed/client';
import { ConflictError, DomainError, InvalidInputError, NotFoundError } from './errors.js';
import type { Verdict } from './rate-limit.js';

/** Bodies above this are refused with 413: the largest legitimate body is a few KB. */
export const MAX_BODY_BYTES = 100 * 1024;

/** Longer request targets are refused with 414; Node refuses header blocks over 16 KB with 431. */
export const MAX_URL_LENGTH = 8 * 1024;

const SLASH = 47;

/** The URL's path as the client sent it: origin-form up to its query, the path of an absolute URL, or the target itself (`*`). */
export function requestPath(url: string): string {
  if (url.charCodeAt(0) === SLASH) return url.slice(0, pathEnd(url));
  // Absolute-form (`http://host/path`), which the router reads by its path; no WHATWG parse,
  // which would resolve `..` segments the router does not.
  const scheme = url.indexOf('://');
  if (scheme === -1) return url;
  const start = url.indexOf('/', scheme + 3);
  return start === -1 ? '/' : requestPath(url.slice(start));
}

/** Where an origin-form URL's path ends: at its query or fragment, or at its end. */
function pathEnd(url: string): number {
  const query = url.indexOf('?');
  const fragment = url.indexOf('#');
  if (query === -1) return fragment === -1 ? url.length : fragment;
  return fragment === -1 || query < fragment ? query : fragment;
}

/** `//` in the path, or a `/` ending it (but `/` alone): checked on every request, so without a regular expression or a copy. */
export function hasEmptySegment(url: string): boolean {
  if (url.charCodeAt(0) !== SLASH) return false;
  const end = pathEnd(url);
  if (end > 1 && url.charCodeAt(end - 1) === SLASH) return true;
  const double = url.indexOf('//');
  return double !== -1 && double < end;
}

const PROBLEM_BASE = 'https://forge-embed.dev/problems/';

/**
 * An error that becomes an RFC 9457 problem document. `detail` always tells the caller what
 * to change; `slug` names the kind of problem in `type`. Only route handlers and the HTTP layer
 * throw these; domain modules throw the errors of server/errors.ts.
 */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly slug: string,
    readonly title: string,
    readonly detail: string,
    readonly errors?: FieldError[],
    readonly headers: Record<string, string> = {},
    readonly extensions: Record<string, unknown> = {},
  ) {
    super(detail);
  }

  toJSON(): ProblemDocument {
    return {
      type: PROBLEM_BASE + this.slug,
      title: this.title,
      status: this.status,
      detail: this.detail,
      ...(this.errors ? { errors: this.errors } : {}),
      ...this.extensions,
    };
  }
}

export const badRequest = (detail: string, errors?: FieldError[]) =>
  new HttpProblem(400, errors ? 'validation' : 'bad-request', 'Bad request', detail, errors);

export const unauthorized = (detail: string) =>
  new HttpProblem(401, 'unauthorized', 'Unauthorized', detail, undefined, {
    'WWW-Authenticate': 'Bearer realm="forge"',
  });

export const forbidden = (detail: string) => new HttpProblem(403, 'forbidden', 'Forbidden', detail);

export const notFound = (detail: string) => new HttpProblem(404, 'not-found', 'Not found', detail);

export const conflict = (detail: string, extensions: Record<string, unknown> = {}) =>
  new HttpProblem(409, 'conflict', 'Conflict', detail, undefined, {}, extensions);

/** The 429 for a spent rate limit: `what` says what was done too often; Retry-After says when to come back. */
export function rateLimited(verdict: Verdict, what: string): void {
  if (verdict.allowed) return;
  const seconds = verdict.retryAfterSeconds;
  throw new HttpProblem(
    429,
    'rate-limited',
    'Too many requests',
    `${what} Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`,
    undefined,
    { 'Retry-After': String(seconds) },
  );
}

export const unsupportedMediaType = (detail: string) =>
  new HttpProblem(415, 'unsupported-media-type', 'Unsupported media type', detail);

export const internalError = () =>
  new HttpProblem(
    500,
    'internal',
    'Internal error',
    'The service failed to answer. Try again; if it keeps failing, see the service log.',
  );

/** The database did not answer (PostgreSQL stopped or restarting): worth retrying, unlike a bug. */
export const databaseUnavailableProblem = () =>
  new HttpProblem(
    503,
    'database-unavailable',
    'Database unavailable',
    'The service cannot reach its database right now, so this request did not complete. Retry it in a few seconds.',
    undefined,
    { 'Retry-After': '5' },
  );

/**
 * The problem document for anything a request can throw: problems themselves, domain errors,
 * and the framework's own errors (schema validation, body limits, content types). Undefined
 * for what is none of these: a bug, answered as a 500 that leaks nothing.
 */
export function problemOf(error: unknown): HttpProblem | undefined {
  if (error instanceof HttpProblem) return error;
  if (error instanceof DomainError) return domainProblem(error);
  const framework = error as FastifyError & { validation?: ErrorObject[]; validationContext?: string };
  if (framework.validation) return validationProblem(framework.validation, framework.validationContext ?? 'body');
  switch (framework.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      // The rest of a refused body may still be on the wire: closing the connection keeps a
      // client's next request on it from being read as that body.
      return new HttpProblem(
        413,
        'payload-too-large',
        'Payload too large',
        `The body is larger than ${MAX_BODY_BYTES} bytes. Send a smaller JSON body.`,
        undefined,
        { Connection: 'close' },
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return unsupportedMediaType(
        'The body must be JSON sent with "Content-Type: application/json"; this request sent another type, or none.',
      );
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return badRequest('The Content-Length header does not match the body sent. Send the body whole.');
  }
  if (framework.statusCode && framework.statusCode >= 400 && framework.statusCode < 500) {
    return new HttpProblem(framework.statusCode, 'bad-request', 'Bad request', `${framework.message}.`);
  }
  return undefined;
}

function domainProblem(error: DomainError): HttpProblem {
  if (error instanceof NotFoundError) return notFound(error.message);
  if (error instanceof ConflictError) return conflict(error.message, error.extensions);
  if (error instanceof InvalidInputError) {
    if (error.kind) return new HttpProblem(400, error.kind, 'Bad request', error.message, error.errors);
    return badRequest(error.message, error.errors);
  }
  return badRequest(error.message);
}

/**
 * The 400 for a request its route's schema refuses: one field error per thing wrong (the
 * validator collects all of them), in the `body.x` / `query.x` / `params.x` form every other
 * 400 of the service uses. Messages come from the schema: a property's `description` says what
 * a pattern or a set of values means, `examples` show a whole body.
 */
function validationProblem(errors: ErrorObject[], context: string): HttpProblem {
  const part = context === 'querystring' ? 'query' : context;
  const root = errors.find((e) => e.instancePath === '' && e.keyword === 'type');
  if (root) {
    const example = (root.parentSchema as { examples?: unknown[] } | undefined)?.examples?.[0];
    const shown = example === undefined ? '' : `, for example ${JSON.stringify(example)}`;
    // The framework hands the validator null for a missing body as for a JSON null.
    return badRequest(
      root.data === null || root.data === undefined
        ? `A JSON body (an object) is required${shown}.`
        : `The ${part} must be a JSON object${shown}.`,
    );
  }
  const fields: FieldError[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    const field = fieldError(error, part);
    // A value that breaks two rules (a type and a bound) is named once.
    if (seen.has(field.path)) continue;
    seen.add(field.path);
    fields.push(field);
  }
  const detail = fields.map((e) => `${e.path}: ${e.message}`).join(' ');
  return badRequest(detail, fields);
}

function fieldError(error: ErrorObject, part: string): FieldError {
  const segments = error.instancePath.split('/').slice(1);
  const params = error.params as { missingProperty?: string; additionalProperty?: string };
  if (error.keyword === 'required') {
    const key = params.missingProperty!;
    return { path: [part, ...segments, key].join('.'), message: `${key} is required.` };
  }
  if (error.keyword === 'additionalProperties') {
    const known = Object.keys((error.parentSchema as { properties?: object })?.properties ?? {});
    return {
      path: [part, ...segments, params.additionalProperty!].join('.'),
      message: `Unknown field; expected only ${known.join(', ')}.`,
    };
  }
  // An array's item is named by the array and its index: "errorIds[0] must be …", not "0 must be …".
  const last = segments.at(-1);
  const key =
    last === undefined ? part : /^\d+$/.test(last) && segments.length > 1 ? `${segments.at(-2)}[${last}]` : last;
  const schema = (error.parentSchema ?? {}) as {
    type?: string;
    minimum?: number;
    maximum?: number;
    maxLength?: number;
    description?: string;
  };
  const path = [part, ...segments].join('.');
  const got = typeof error.data === 'string' ? `; got "${error.data}"` : '';
  if (schema.type === 'integer') {
    const range =
      schema.maximum === undefined ? `of at least ${schema.minimum}` : `from ${schema.minimum} to ${schema.maximum}`;
    return { path, message: `${key} must be a whole number ${range}${got}.` };
  }
  // `?integration=a&integration=b` reaches the schema as an array.
  if (error.keyword === 'type' && part === 'query' && Array.isArray(error.data)) {
    return { path, message: `${key} must be given once; this request gave it ${error.data.length} times.` };
  }
  if (error.keyword === 'type') return { path, message: `${key} must be a ${error.params.type}.` };
  if (error.keyword === 'maxLength') return { path, message: `${key} must be at most ${schema.maxLength} characters.` };
  if (schema.description) {
    // A rule written "Must be …" is the field's own sentence: "email must be an e-mail address …".
    const rule = schema.description;
    return { path, message: rule.startsWith('Must ') ? `${key} m${rule.slice(1)}` : `${key}: ${rule}` };
  }
  return { path, message: `${key} ${error.message}.` };
}

/**
 * The last Host `originOfHost` was given and its origin. A service is reached at one or a few
 * Hosts: keeping the last one's origin spares the URL parsed for every request that hands out a
 * URL (issue 29).
 */
let lastHost: { host: string | undefined; origin: string | undefined } = { host: undefined, origin: undefined };

/**
 * The origin a request reached the service at, from its Host header, for the URLs the service
 * hands out (icons, the OAuth popup's pages). A Host that is not a plain `host[:port]` gives
 * undefined: it must not become part of a URL, nor make building one throw.
 */
export function originOfHost(host: string | undefined): string | undefined {
  if (host !== lastHost.host) lastHost = { host, origin: parsedOriginOfHost(host) };
  return lastHost.origin;
}

function parsedOriginOfHost(host: string | undefined): string | undefined {
  if (!host || !/^([\w.-]+|\[[\da-f:.]+\])(:\d{1,5})?$/i.test(host)) return undefined;
  try {
    return new URL(`http://${host}`).origin;
  } catch {
    return undefined;
  }
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The headers of the service's own pages (consent, OAuth callback): they run only their inline
 * script, no other page may frame them (a framed consent page could be clicked through unseen),
 * and their URLs, which carry the OAuth state and code, are never passed on as a referrer.
 */
export const HTML_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Content-Security-Policy':
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
};

/** The popup's redirects tell nobody where it came from (their URLs carry the state and the code) and are never framed. */
export const REDIRECT_HEADERS = {
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
};

/**
 * Sends an answer that is already JSON text (GET logs' body, spliced from the stored results),
 * or those bytes in UTF-8 (an answer kept as sent, encoded once). The route's schema still
 * describes it, but its type is that of the parsed value, not of text.
 */
export function sendJsonText(reply: FastifyReply, json: string | Buffer): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}
