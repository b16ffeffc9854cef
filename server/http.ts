import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FieldError, ProblemDocument } from '../src/api/types.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.js';
import type { Verdict } from './rate-limit.js';

/** Bodies above this are refused with 413: the largest legitimate body is a few KB. */
export const MAX_BODY_BYTES = 100 * 1024;

const PROBLEM_BASE = 'https://forge-embed.dev/problems/';

/**
 * An error that becomes an RFC 9457 problem document. `detail` always tells the caller what
 * to change; `slug` names the kind of problem in `type`.
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

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    ...headers,
  });
  res.end(text);
}

export function sendProblem(res: ServerResponse, problem: HttpProblem): void {
  const text = JSON.stringify(problem.toJSON());
  res.writeHead(problem.status, {
    'Content-Type': 'application/problem+json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    ...problem.headers,
  });
  res.end(text);
}

export function sendHtml(
  res: ServerResponse,
  status: number,
  html: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': Buffer.byteLength(html),
    'Cache-Control': 'no-store',
    // The service's own pages (consent, OAuth callback) run only their inline script, and no
    // other page may frame them (a framed consent page could be clicked through unseen).
    'Content-Security-Policy':
      "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'",
    'X-Frame-Options': 'DENY',
    // Their URLs carry the OAuth state and code: never pass them on to another site.
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  });
  res.end(html);
}

/**
 * Reads a JSON body. No body (or an empty one) is `undefined`; a body that is not declared as
 * JSON is 415, one that does not parse or nests too deep is 400, one above MAX_BODY_BYTES is 413.
 */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw tooLarge();
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new HttpProblem(
      415,
      'unsupported-media-type',
      'Unsupported media type',
      `The body must be JSON sent with "Content-Type: application/json"; got "${type || 'no Content-Type'}".`,
    );
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (nestsDeeperThan(text)) {
    throw badRequest(`The body nests objects and arrays more than ${MAX_JSON_DEPTH} deep. Send a flatter JSON body.`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw badRequest(`The body is not valid JSON (${(error as Error).message}). Send a JSON object.`);
  }
}

/**
 * The 413 closes the connection: the rest of the refused body may still be on the wire, and a
 * client that sent the next request on the same connection would have it reset.
 */
function tooLarge(): HttpProblem {
  return new HttpProblem(
    413,
    'payload-too-large',
    'Payload too large',
    `The body is larger than ${MAX_BODY_BYTES} bytes. Send a smaller JSON body.`,
    undefined,
    { Connection: 'close' },
  );
}

/**
 * The origin a request reached the service at, from its Host header, for the URLs the service
 * hands out (icons, the OAuth popup's pages). A Host that is not a plain `host[:port]` gives
 * undefined: it must not become part of a URL, nor make building one throw.
 */
export function originOfHost(host: string | undefined): string | undefined {
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
