import type { DatabaseConnection, Dialect } from 'kysely';

/**
 * How the service uses its database connections, for the metrics (issue 28): connections it
 * holds now (a query or a transaction in progress) and queries waiting for one. Counted where
 * Kysely takes and gives back a connection, so it reads the same on both backends: PostgreSQL's
 * pool (at most `size` connections), and SQLite's one connection, which a transaction holds
 * until it ends while other queries wait.
 */
export class PoolUse {
  inUse = 0;
  /** Those in line for SQLite's one connection (the lock below). */
  queued = 0;
  private waitingInPool: (() => number) | undefined;

  constructor(
    /** Connections at most: the pool's size on PostgreSQL, 1 on SQLite. */
    readonly size: number,
  ) {}

  /** Queries waiting for a connection: pg's own count of those the pool makes wait, or SQLite's line. */
  get waiting(): number {
    return this.waitingInPool ? this.waitingInPool() : this.queued;
  }

  /** Reads the waiting from the pool itself (pg's `waitingCount`): only it knows who has to wait. */
  readWaitingFrom(pool: { readonly waitingCount: number }): void {
    this.waitingInPool = () => pool.waitingCount;
  }

  /** `dialect` with its driver counting into this. */
  counting(dialect: Dialect): Dialect {
    // A dialect of one connection (SQLite) is serialised by Kysely itself, before the driver is
    // asked, where nothing can count who waits: the same one-at-a-time lock is taken here instead.
    const single = dialect.createAdapter().supportsMultipleConnections === false;
    const lock = single ? new CountedLock(this) : undefined;
    return {
      createAdapter: () => {
        const adapter = dialect.createAdapter();
        return lock ? Object.create(adapter, { supportsMultipleConnections: { value: true } }) : adapter;
      },
      createIntrospector: (db) => dialect.createIntrospector(db),
      createQueryCompiler: () => dialect.createQueryCompiler(),
      createDriver: () => {
        const driver = dialect.createDriver();
        const acquire = driver.acquireConnection.bind(driver);
        const release = driver.releaseConnection.bind(driver);
        driver.acquireConnection = async () => {
          if (lock) await lock.obtain();
          let connection: DatabaseConnection;
          try {
            connection = await acquire();
          } catch (error) {
            lock?.release();
            throw error;
          }
          this.inUse++;
          return connection;
        };
        driver.releaseConnection = async (connection) => {
          this.inUse--;
          try {
            await release(connection);
          } finally {
            lock?.release();
          }
        };
        return driver;
      },
    };
  }
}

/** One holder at a time, first come first served; those in line are counted as waiting. */
class CountedLock {
  private held = false;
  private readonly line: Array<() => void> = [];

  constructor(private readonly use: PoolUse) {}

  async obtain(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return;
    }
    this.use.queued++;
    // Handed over by `release` with the lock still held, so no one can take it in between.
    await new Promise<void>((resolve) => this.line.push(resolve));
    this.use.queued--;
  }

  release(): void {
    const next = this.line.shift();
    if (next) next();
    else this.held = false;
  }
}
