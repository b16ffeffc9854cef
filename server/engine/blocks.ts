import type { ErrorKind, VariableValues } from 'forge-embed/client';
import { type CatalogBlock, currentValue } from '../catalog/catalog.js';
import { asNumber } from '../shared/number.js';
import type { Tracing } from '../trace.js';
import { isPlainObject } from '../validate.js';
import { evaluate, evaluateText, type Scope } from './expressions.js';
import {
  type AttemptOutcome,
  type AttemptRecord,
  DEFAULT_HTTP_RETRY,
  type HttpRetryPolicy,
  nextRetry,
  waitUnlessAborted,
} from './http-retry.js';
import { type AppAccess, absoluteUrl, mayCarryCredential } from './placement.js';

/**
 * The block types an execution runs (documented in docs/executions.md). Each turns its
 * parameters, with expressions evaluated, into an output object; a failure is a BlockFailure
 * whose message becomes the error log entry's `error`.
 */

export class BlockFailure extends Error {
  /** What the user can do about it (ErrorKind): recorded with the error log entry. */
  readonly kind: ErrorKind;
  /** More of what happened, shown beside `error` in the block's output (an HTTP block's attempts). */
  readonly detail: Record<string, unknown> | undefined;

  constructor(message: string, kind: ErrorKind = 'internal', detail?: Record<string, unknown>) {
    super(message);
    this.kind = kind;
    this.detail = detail;
  }
}

/** What started the execution: a POST to the workflow's webhook URL, or its cron schedule. */
export type Trigger = { kind: 'webhook'; body: Record<string, unknown> } | { kind: 'schedule'; at: Date };

export interface BlockContext {
  block: CatalogBlock;
  scope: Scope;
  trigger: Trigger;
  /** This user's values for the block when it is a variables block. */
  values: VariableValues | undefined;
  /**
   * The block's integration: its API base URL and the user's credential, placed as its `auth`
   * says (server/engine/placement.ts). Undefined for a block of no integration.
   */
  access: AppAccess | undefined;
  /**
   * After the app refused the credential with a 401: a fresh one (an OAuth token refreshed), or
   * undefined when there is none to try. Called at most once per request.
   */
  renewAccess?: () => Promise<AppAccess | undefined>;
  signal: AbortSignal;
  httpTimeoutMs: number;
  /** When an HTTP block tries again (server/engine/http-retry.ts); unset fields keep their default. */
  httpRetry?: Partial<HttpRetryPolicy>;
  /** When tracing is on: each HTTP call is a client span, and the app gets its `traceparent`. */
  tracing?: Tracing;
}

export interface BlockOutcome {
  output: Record<string, unknown>;
  /** A condition that did not hold: the execution finishes without the remaining blocks. */
  stop?: boolean;
}

type BlockRunner = (context: BlockContext) => BlockOutcome | Promise<BlockOutcome>;

export const TRIGGER_TYPES = ['webhook', 'schedule'] as const;

const RUNNERS: Record<string, BlockRunner> = {
  webhook: ({ trigger }) => ({ output: trigger.kind === 'webhook' ? trigger.body : {} }),
  schedule: ({ trigger, block }) => ({
    output: {
      scheduledAt: trigger.kind === 'schedule' ? trigger.at.toISOString() : null,
      cron: block.parameters.cron ?? null,
      // Saturday or Sunday in UTC, the schedules' time zone: what a "weekends too" setting tests.
      weekend: trigger.kind === 'schedule' ? trigger.at.getUTCDay() % 6 === 0 : null,
    },
  }),
  variables: ({ block, values }) => ({
    output: Object.fromEntries((block.parameters.variables ?? []).map((v) => [v.name, currentValue(v, values)])),
  }),
  transform: ({ block, scope }) => {
    const output = evaluate(block.parameters.output, scope);
    if (!isPlainObject(output)) {
      throw new BlockFailure(
        `The transform "${block.name}" must produce an object; its "output" parameter gave ${JSON.stringify(output) ?? 'nothing'}.`,
      );
    }
    return { output };
  },
  condition: ({ block, scope }) => {
    const { operator } = block.parameters;
    const left = evaluate(block.parameters.left, scope);
    const right = evaluate(block.parameters.right, scope);
    const passed = compare(block.name, left, String(operator), right);
    return { output: { passed, left, operator, right } as Record<string, unknown>, stop: !passed };
  },
  fail: ({ block, scope }) => {
    const message = evaluate(block.parameters.message ?? '', scope);
    throw new BlockFailure(String(message).trim() || `The block "${block.name}" failed on purpose.`);
  },
  http: runHttp,
};

export function runnerFor(type: string): BlockRunner {
  const runner = RUNNERS[type];
  if (runner) return runner;
  return ({ block }) => {
    throw new BlockFailure(
      `The block "${block.name}" has the type "${type}", which this service does not run; the block types are ${Object.keys(RUNNERS).join(', ')}.`,
    );
  };
}

export const OPERATORS = ['==', '!=', '>', '>=', '<', '<=', 'contains'] as const;

function compare(name: string, left: unknown, operator: string, right: unknown): boolean {
  const l = asNumber(left);
  const r = asNumber(right);
  switch (operator) {
    case '==':
    case '!=': {
      const equal = l !== undefined && r !== undefined ? l === r : textOf(left) === textOf(right);
      return operator === '==' ? equal : !equal;
    }
    case '>':
    case '>=':
    case '<':
    case '<=': {
      if (l === undefined || r === undefined) {
        const which = l === undefined ? `left is ${JSON.stringify(left)}` : `right is ${JSON.stringify(right)}`;
        throw new BlockFailure(`The condition "${name}" compares numbers with ${operator}, but its ${which}.`);
      }
      if (operator === '>') return l > r;
      if (operator === '>=') return l >= r;
      if (operator === '<') return l < r;
      return l <= r;
    }
    case 'contains':
      return Array.isArray(left)
        ? left.some((item) => textOf(item) === textOf(right))
        : textOf(left).includes(textOf(right));
    default:
      throw new BlockFailure(
        `The condition "${name}" has the operator ${JSON.stringify(operator)}; the operators are ${OPERATORS.join(' ')}.`,
      );
  }
}

const textOf = (value: unknown) =>
  typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);

/**
 * Whether a URL's path, as written, has a segment that URL parsers read as "." or "..": those
 * include "%2e" spellings, and "\\" separates segments like "/" does. A value inserted into a
 * path is percent-encoded, but no encoding keeps ".." from walking up, so the run stops instead.
 */
function hasDotSegment(urlText: string): boolean {
  const path = urlText.replace(/^[a-z][a-z\d+.-]*:\/\/[^/\\?#]*/i, '').split(/[?#]/)[0]!;
  return path.split(/[/\\]/).some((segment) => /^(\.|%2e){1,2}$/i.test(segment));
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** Only this much of a response is kept in the log: the log is for reading, not for archives. */
const MAX_RESPONSE_BYTES = 256 * 1024;

async function runHttp({
  block,
  scope,
  access,
  renewAccess,
  signal,
  httpTimeoutMs,
  httpRetry,
  tracing,
}: BlockContext): Promise<BlockOutcome> {
  const { parameters } = block;
  const method = String(parameters.method ?? 'GET').toUpperCase();
  if (!METHODS.includes(method)) {
    throw new BlockFailure(
      `The HTTP block "${block.name}" has the method ${method}; use one of ${METHODS.join(', ')}.`,
    );
  }
  const written = evaluateText(
    String(parameters.url ?? ''),
    access ? { ...scope, connection: access.connection } : scope,
    {
      encode: encodeURIComponent,
    },
  );
  const urlText = absoluteUrl(String(written), access?.baseUrl);
  if (urlText === undefined) {
    throw new BlockFailure(
      `The HTTP block "${block.name}" has the relative URL "${written}", but its integration has no api.baseUrl to append it to.`,
      'settings',
    );
  }
  if (hasDotSegment(String(urlText))) {
    throw new BlockFailure(
      `The HTTP block "${block.name}" would call "${urlText}", whose path has a "." or ".." segment; a value put into a URL path may not walk up it.`,
      'settings',
    );
  }
  let url: URL;
  try {
    url = new URL(String(urlText));
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new BlockFailure(
      `The HTTP block "${block.name}" has the URL "${urlText}", which is not an http(s) URL.`,
      'settings',
    );
  }
  const headers = new Headers();
  if (isPlainObject(parameters.headers)) {
    for (const [name, value] of Object.entries(parameters.headers)) headers.set(name, String(evaluate(value, scope)));
  }
  let body: string | undefined;
  if (parameters.body !== undefined && parameters.body !== null) {
    if (method === 'GET') throw new BlockFailure(`The HTTP block "${block.name}" sends a body with GET; use POST.`);
    const value = evaluate(parameters.body, scope);
    body = typeof value === 'string' ? value : JSON.stringify(value);
    if (typeof value !== 'string' && !headers.has('content-type')) headers.set('Content-Type', 'application/json');
  }
  // The query is left out: a credential placed there must not reach the log.
  const shown = `${method} ${url.origin}${url.pathname}`;
  const send = (credential: AppAccess | undefined) => {
    const sent = new URL(url);
    const sentHeaders = new Headers(headers);
    if (credential && mayCarryCredential(credential, url)) {
      for (const [name, value] of Object.entries(credential.headers))
        if (!sentHeaders.has(name)) sentHeaders.set(name, value);
      for (const [name, value] of Object.entries(credential.query)) sent.searchParams.set(name, value);
    }
    const call = () =>
      fetch(sent, {
        method,
        headers: sentHeaders,
        body,
        redirect: 'manual',
        signal: AbortSignal.any([signal, AbortSignal.timeout(httpTimeoutMs)]),
      });
    if (!tracing) return call();
    // The URL without its query, as the log shows it: a credential placed there stays out.
    const attributes = { 'http.request.method': method, 'url.full': `${url.origin}${url.pathname}` };
    return tracing.inSpan(`${method} ${url.host}`, { kind: 'client', attributes }, async (span) => {
      tracing.inject(sentHeaders);
      const response = await call();
      span.setAttributes({ 'http.response.status_code': response.status });
      if (response.status >= 400) span.fail(`${response.status} ${response.statusText}`);
      return response;
    });
  };
  const policy = { ...DEFAULT_HTTP_RETRY, ...httpRetry };
  const attempts: AttemptRecord[] = [];
  /** Every attempt is in the output once there was more than one; a single one is the block's own result. */
  const attemptsShown = () => (attempts.length > 1 ? { attempts } : undefined);
  const cutShort = () => new BlockFailure(`${shown} was cut short: the service stopped.`, 'internal', attemptsShown());
  let credential = access;
  let renewed = false;
  let response: Response;
  /** Why the last attempt was not tried again, when that is worth telling (it ends the error message). */
  let note = '';
  for (let attempt = 1; ; attempt++) {
    const startedAt = new Date().toISOString();
    let outcome: AttemptOutcome;
    let answer: Response | undefined;
    /** Why no answer came: the error code of a connection that failed, or the timeout. */
    let noAnswer = '';
    try {
      answer = await send(credential);
      // A token the app refuses may have expired early: refreshed once, the request is made once more.
      if (answer.status === 401 && !renewed && credential && renewAccess && mayCarryCredential(credential, url)) {
        renewed = true;
        const fresh = await renewAccess();
        if (fresh) {
          await answer.body?.cancel();
          credential = fresh;
          answer = await send(fresh);
        }
      }
      outcome = { status: answer.status, retryAfter: answer.headers.get('retry-after') };
    } catch (error) {
      if (error instanceof BlockFailure) throw error;
      if (signal.aborted) throw cutShort();
      const e = error as Error & { cause?: { code?: string } };
      const timedOut = e.name === 'TimeoutError';
      outcome = { failure: timedOut ? 'timeout' : 'connection' };
      noAnswer = timedOut ? `no answer within ${httpTimeoutMs / 1000} s` : (e.cause?.code ?? e.message);
    }
    const next = nextRetry(method, outcome, attempt, policy, Date.now());
    attempts.push({
      attempt,
      startedAt,
      ...('status' in outcome ? { status: outcome.status } : { error: noAnswer }),
      ...(next.retryInMs === undefined ? {} : { retryInMs: next.retryInMs }),
    });
    if (next.retryInMs === undefined) {
      note = next.why ? ` (${next.why})` : '';
      if (!('failure' in outcome)) {
        response = answer!;
        break;
      }
      throw new BlockFailure(
        outcome.failure === 'timeout'
          ? `${shown} did not answer within ${httpTimeoutMs / 1000} s${note}.`
          : `${shown} could not be reached (${noAnswer})${note}. Is the service at ${url.origin} running?`,
        'app',
        attemptsShown(),
      );
    }
    await answer?.body?.cancel().catch(() => {});
    try {
      await waitUnlessAborted(next.retryInMs, signal);
    } catch {
      throw cutShort();
    }
  }
  const text = await readAtMost(response, MAX_RESPONSE_BYTES, shown);
  const type = response.headers.get('content-type') ?? '';
  let responseBody: unknown = text;
  if (type.includes('json')) {
    try {
      responseBody = JSON.parse(text);
    } catch {
      // A body that says JSON but is not stays text, so the log shows what came back.
    }
  }
  if (!response.ok) {
    throw new BlockFailure(
      `${shown} answered ${response.status} ${response.statusText}: ${summary(responseBody)}${note}`,
      httpFailureKind(response.status, block, scope),
      attemptsShown(),
    );
  }
  return { output: { status: response.status, body: responseBody, ...attemptsShown() } };
}

/**
 * The start of an answer, up to `limit` bytes, read as it streams in: the rest is never read
 * (the connection is let go), so an app's 40 MB answer costs the service 256 KB, not 40 MB.
 */
async function readAtMost(response: Response, limit: number, shown: string): Promise<string> {
  if (!response.body) return '';
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  let text = '';
  let left = limit;
  try {
    while (left > 0) {
      const { done, value } = await reader.read();
      if (done) return text + decoder.decode();
      const kept = value.byteLength > left ? value.subarray(0, left) : value;
      left -= kept.byteLength;
      // `stream: true` holds back a character cut at the limit rather than showing it broken.
      text += decoder.decode(kept, { stream: true });
    }
    return text;
  } catch (error) {
    const { name } = error as Error;
    if (name === 'AbortError') throw new BlockFailure(`${shown} was cut short: the service stopped.`);
    if (name === 'TimeoutError') throw new BlockFailure(`${shown} did not finish its answer in time.`, 'app');
    throw new BlockFailure(`${shown} broke off its answer (${(error as Error).message}).`, 'app');
  } finally {
    reader.cancel().catch(() => {});
  }
}

/**
 * 401 and 403 are the app refusing the user's credential: reconnecting fixes them. Another
 * refusal of a request built from a setting the user left empty (an app's 404 for an empty
 * spreadsheet id) is the setting's; anything else is the app's.
 */
function httpFailureKind(status: number, block: CatalogBlock, scope: Scope): ErrorKind {
  if (status === 401 || status === 403) return 'connection';
  const used = JSON.stringify(block.parameters).matchAll(/\{\{\s*vars\.([^{}\s]+)\s*\}\}/g);
  return status < 500 && [...used].some(([, name]) => scope.vars[name!] === '') ? 'settings' : 'app';
}

/** A short account of an error response: its message when it has one, else its start. */
function summary(body: unknown): string {
  if (isPlainObject(body)) {
    const nested = isPlainObject(body.error) ? body.error.message : undefined;
    const message = body.message ?? body.detail ?? nested ?? body.error;
    if (typeof message === 'string' && message) return message;
  }
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text || '(no body)';
}
