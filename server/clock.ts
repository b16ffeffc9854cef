import { readFileSync, unwatchFile, watchFile } from 'node:fs';

/**
 * The service's "now" for the things that depend on it across instances: which scheduled minute
 * is due, token lifetimes, when a retired signing key may go, delivery leases and rate-limit
 * windows. In production it is the system clock.
 */
export interface Clock {
  now(): number;
  /**
   * Calls `listener` whenever this clock jumps rather than runs (only a test clock does), so the
   * scheduler and deliveries look again at once; answers the function that stops the calls.
   */
  onJump(listener: () => void): () => void;
}

export const systemClock: Clock = {
  now: Date.now,
  onJump: () => () => {},
};

/**
 * How far `clock` is ahead of the system clock, in ms: 0 for the system clock. What instances
 * share through the database (delivery due times and leases) is timed by the database's clock
 * moved by this, so that in production the database alone decides, and a test clock still moves it.
 */
export function shiftOf(clock: Clock): number {
  return clock === systemClock ? 0 : clock.now() - Date.now();
}

/**
 * A clock for tests that run the service as separate processes: "now" is the number (ms since
 * the epoch) written in `file`, read again at each call, so a test moves every process's time at
 * once by writing the file ("minute 12:00 passed"). Only the FORGE_TEST_CLOCK_FILE environment
 * variable of the process turns it on (server/main.ts); nothing reaches it over HTTP.
 */
export function fileClock(file: string): Clock {
  const read = () => {
    const value = Number(readFileSync(file, 'utf8').trim());
    if (!Number.isFinite(value)) throw new Error(`The test clock file ${file} must hold milliseconds since the epoch.`);
    return value;
  };
  read();
  const listeners = new Set<() => void>();
  let watching = false;
  return {
    now: read,
    onJump(listener) {
      listeners.add(listener);
      if (!watching) {
        watching = true;
        // Polling (not fs.watch): it sees every rewrite on every file system, within 20 ms.
        watchFile(file, { interval: 20, persistent: false }, () => {
          for (const l of listeners) l();
        });
      }
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && watching) {
          watching = false;
          unwatchFile(file);
        }
      };
    },
  };
}
