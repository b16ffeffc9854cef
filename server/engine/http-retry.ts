import { setTimeout as sleep } from 'node:timers/promises';

/**
 * When an HTTP block tries a request again (issue 27, docs/executions.md#retries): what is safe
 * to repeat, how long to wait, and when to stop. A retry waits in the run's own process, holding
 * no database transaction (a run stores its execution in one transaction once it has ended).
 */
export interface HttpRetryPolicy {
  /** Attempts in all, the first included: 1 means no retries. */
  maxAttempts: number;
  /** The wait before the first retry; each later one doubles, up to `maxDelayMs`, and jitter takes up to half off. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** The longest `Retry-After` honoured: an app asking for a longer wait is not tried again. */
  maxRetryAfterMs: number;
}

/** At most 4 attempts over about 1 + 2 + 4 s of backoff, or up to 30 s per wait an app asks for. */
export const DEFAULT_HTTP_RETRY: HttpRetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 1_000,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 30_000,
};

/** The methods a server treats the same when sent twice (RFC 9110 §9.2.2), so a 5xx or a timeout may be tried again. */
const IDEMPOTENT = new Set(['GET', 'PUT', 'DELETE']);

/** What one attempt came to: an answer's status, or no answer (refused or broken connection, or timeout). */
export type AttemptOutcome = { status: number; retryAfter: string | null } | { failure: 'connection' | 'timeout' };

/** The attempt's line in the block's output (`attempts`), shown in the execution log. */
export interface AttemptRecord {
  attempt: number;
  startedAt: string;
  status?: number;
  /** Why no answer came: an error code such as ECONNRESET, or a timeout. */
  error?: string;
  /** The wait before the next attempt, when one follows. */
  retryInMs?: number;
}

/**
 * Whether to try again after attempt number `attempt`, and after how long: `retryInMs`, or
 * undefined with `why` when a retry was refused for a reason worth telling (a wait over the bound).
 * 429 and 503 say "not now" before the request did anything, and a connection that failed
 * before any answer may be retried whatever the method; another 5xx or a timeout may have
 * left the request half done, so only an idempotent method is sent again.
 */
export function nextRetry(
  method: string,
  outcome: AttemptOutcome,
  attempt: number,
  policy: HttpRetryPolicy,
  now: number,
  random: () => number = Math.random,
): { retryInMs: number } | { retryInMs?: undefined; why?: string } {
  if (!isRetryable(method, outcome)) return {};
  if (attempt >= policy.maxAttempts) return policy.maxAttempts > 1 ? { why: `gave up after ${attempt} attempts` } : {};
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  // Jitter spreads the retries of many runs that failed together, so they do not return together.
  const jittered = Math.round(backoff / 2 + (random() * backoff) / 2);
  const asked = 'status' in outcome ? retryAfterMs(outcome.retryAfter, now) : undefined;
  if (asked === undefined) return { retryInMs: jittered };
  if (asked > policy.maxRetryAfterMs) {
    return {
      why: `it asked to be tried again in ${Math.ceil(asked / 1000)} s, longer than the ${policy.maxRetryAfterMs / 1000} s an HTTP block waits`,
    };
  }
  return { retryInMs: Math.max(asked, jittered) };
}

function isRetryable(method: string, outcome: AttemptOutcome): boolean {
  if ('failure' in outcome) return outcome.failure === 'connection' || IDEMPOTENT.has(method);
  if (outcome.status === 429 || outcome.status === 503) return true;
  return outcome.status >= 500 && IDEMPOTENT.has(method);
}

const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /;

/**
 * A `Retry-After` header (RFC 9110 §10.2.3) in milliseconds from `now`: whole seconds, or an
 * HTTP date (a past one is 0). Undefined when there is none or it is neither; then the
 * backoff decides.
 */
export function retryAfterMs(header: string | null, now: number): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!HTTP_DATE.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Waits `ms`, or less when `signal` aborts (the service stopping): then it rejects with an AbortError. */
export function waitUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return sleep(ms, undefined, { signal });
}
