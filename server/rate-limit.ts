/**
 * Rate limits where abuse is cheap: minting user tokens, writing credentials, starting OAuth
 * flows (per user) and sending webhooks (per workflow). Counted in fixed windows per action and
 * key, so a shared store can count across instances with one upsert per hit:
 *   INSERT INTO rate_counts (key, window_start, count) VALUES (?, ?, 1)
 *   ON CONFLICT (key, window_start) DO UPDATE SET count = rate_counts.count + 1 RETURNING count
 */

export const RATE_LIMITED_ACTIONS = ['token', 'credentials', 'oauth', 'webhook'] as const;
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
};

export type Verdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** Windows kept before old ones are swept; each key holds at most one. */
const SWEEP_ABOVE = 10_000;

export class RateLimiter {
  private readonly limits: Record<RateLimitedAction, RateLimit | false>;
  private readonly counts = new Map<string, { windowStart: number; count: number }>();

  constructor(
    limits: RateLimits = {},
    private readonly now: () => number = Date.now,
  ) {
    this.limits = { ...DEFAULT_RATE_LIMITS, ...limits };
  }

  /** Counts one use of `action` by `key`; answers whether it is within the limit. */
  hit(action: RateLimitedAction, key: string): Verdict {
    const limit = this.limits[action];
    if (!limit) return { allowed: true };
    const windowMs = limit.windowSeconds * 1000;
    const now = this.now();
    const windowStart = now - (now % windowMs);
    const id = `${action}:${key}`;
    const current = this.counts.get(id);
    const count = current?.windowStart === windowStart ? current.count + 1 : 1;
    if (!current && this.counts.size >= SWEEP_ABOVE) this.sweep(now);
    this.counts.set(id, { windowStart, count });
    if (count <= limit.limit) return { allowed: true };
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000)) };
  }

  private sweep(now: number): void {
    const longest = Math.max(...Object.values(this.limits).map((l) => (l ? l.windowSeconds * 1000 : 0)));
    for (const [id, { windowStart }] of this.counts) if (windowStart + longest <= now) this.counts.delete(id);
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
