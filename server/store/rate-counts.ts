import type { Connection } from './connection.js';

/** Hits counted per key and window (server/rate-limit.ts). */
export class RateCountRepository {
  constructor(private readonly connection: Connection) {}

  /** Counts one hit in a window; answers the window's count, this hit included. */
  async countHit(key: string, windowStart: number): Promise<number> {
    const row = await this.connection.db
      .insertInto('rate_counts')
      .values({ key, window_start: windowStart, count: 1 })
      .onConflict((oc) =>
        oc.columns(['key', 'window_start']).doUpdateSet({ count: (eb) => eb('rate_counts.count', '+', 1) }),
      )
      .returning('count')
      .executeTakeFirstOrThrow();
    return row.count;
  }

  async dropBefore(windowStart: number): Promise<void> {
    await this.connection.db.deleteFrom('rate_counts').where('window_start', '<', windowStart).execute();
  }
}
