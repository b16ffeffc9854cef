import { type Clock, systemClock } from './clock.js';
import type { Store } from './store/store.js';

/**
 * Rate limits where abuse is cheap: minting user tokens, writing credentials, starting OAuth
 * flows (per user), sending webhooks (per workflow) and creating users (per API key: each is
 * a row that stays). Counted in fixed windows per action and
 * key, in the database (`rate_counts`), one upsert per hit.
 */

export const RATE_LIMITED_ACTIONS = ['token', 'credentials', 'oauth', 'webhook', 'user'] as const;
export type RateLimitedAction = (typeof RATE_LIMITED_ACTIONS)[number];

export interface RateLimit {
  limit: number;
  windowSeconds: number;
}

/** `false` switches an action's limit off. */
export type RateLimits = Partial<Record<RateLimitedAction, RateLimit | false>>;

/** Generous: far above what a host's backend or a user in the modal does, far below a flood. */
export const DEFAULT_RATE_LIMITS: Record<RateLimitedAction, RateLimit> = {
  token: { limit: 120, windowSeconds: 60 },
  credentials: { limit: 30, windowSeconds: 60 },
  oauth: { limit: 30, windowSeconds: 60 },
  webhook: { limit: 600, windowSeconds: 60 },
  user: { limit: 600, windowSeconds: 60 },
};

export type Verdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** How often an instance deletes the counters of windows that have ended. */
const SWEEP_EVERY_MS = 60_000;

/**
 * Counts in the database, so every instance behind a load balancer counts the same hits: one
 * atomic upsert per hit.
 */
export class RateLimiter {
  private readonly limits: Record<RateLimitedAction, RateLimit | false>;
  private lastSweep = 0;

  constructor(
    private readonly store: Store,
    limits: RateLimits = {},
    private readonly clock: Clock = systemClock,
  ) {
    this.limits = { ...DEFAULT_RATE_LIMITS, ...limits };
  }

  /** Counts one use of `action` by `key`; answers whether it is within the limit. */
  async hit(action: RateLimitedAction, key: string): Promise<Verdict> {
    const limit = this.limits[action];
    if (!limit) return { allowed: true };
    const windowMs = limit.windowSeconds * 1000;
    const now = this.clock.now();
    const windowStart = now - (now % windowMs);
    const count = await this.store.rateCounts.countHit(`${action}:${key}`, windowStart);
    if (now - this.lastSweep >= SWEEP_EVERY_MS) await this.sweep(now);
    if (count <= limit.limit) return { allowed: true };
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000)) };
  }

  private async sweep(now: number): Promise<void> {
    this.lastSweep = now;
    const longest = Math.max(...Object.values(this.limits).map((l) => (l ? l.windowSeconds * 1000 : 0)));
    await this.store.rateCounts.dropBefore(now - longest);
  }
}

/** `token=120/60,webhook=off`: an action's limit per that many seconds, or off. */
export function parseRateLimits(text: string): RateLimits {
  const limits: RateLimits = {};
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const m = /^(\w+)=(?:(off)|([1-9]\d*)\/([1-9]\d*))$/.exec(part);
    const action = m?.[1] as RateLimitedAction | undefined;
    if (!m || !RATE_LIMITED_ACTIONS.includes(action!)) {
      throw new Error(
        `Rate limits are "action=limit/seconds" or "action=off", comma-separated, for ${RATE_LIMITED_ACTIONS.join(', ')}; got "${part}".`,
      );
    }
    limits[action!] = m[2] ? false : { limit: Number(m[3]), windowSeconds: Number(m[4]) };
  }
  return limits;
}
