import type { StoreClass } from './base.js';

/** Hits counted per key and window (server/rate-limit.ts). */
export function withRateCounts<Base extends StoreClass>(base: Base) {
  return class RateCountQueries extends base {
    /** Counts one hit in a window; answers the window's count, this hit included. */
    async countHit(key: string, windowStart: number): Promise<number> {
      const row = await this.db
        .insertInto('rate_counts')
        .values({ key, window_start: windowStart, count: 1 })
        .onConflict((oc) =>
          oc.columns(['key', 'window_start']).doUpdateSet({ count: (eb) => eb('rate_counts.count', '+', 1) }),
        )
        .returning('count')
        .executeTakeFirstOrThrow();
      return row.count;
    }

    async dropRateCountsBefore(windowStart: number): Promise<void> {
      await this.db.deleteFrom('rate_counts').where('window_start', '<', windowStart).execute();
    }
  };
}
