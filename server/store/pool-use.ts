import type { Dialect } from 'kysely';

/**
 * How the service uses its database connections, for the metrics (issue 28): connections it
 * holds now (a query or a transaction in progress) and queries waiting for one. Counted where
 * Kysely takes and gives back a connection, so it reads the same on both backends: PostgreSQL's
 * pool (at most `size` connections), and SQLite's one connection, which a transaction holds
 * until it ends while other queries wait.
 */
export class PoolUse {
  inUse = 0;
  waiting = 0;

  constructor(
    /** Connections at most: the pool's size on PostgreSQL, 1 on SQLite. */
    readonly size: number,
  ) {}

  /** `dialect` with its driver counting into this. */
  counting(dialect: Dialect): Dialect {
    return {
      createAdapter: () => dialect.createAdapter(),
      createIntrospector: (db) => dialect.createIntrospector(db),
      createQueryCompiler: () => dialect.createQueryCompiler(),
      createDriver: () => {
        const driver = dialect.createDriver();
        const acquire = driver.acquireConnection.bind(driver);
        const release = driver.releaseConnection.bind(driver);
        driver.acquireConnection = async () => {
          this.waiting++;
          try {
            const connection = await acquire();
            this.inUse++;
            return connection;
          } finally {
            this.waiting--;
          }
        };
        driver.releaseConnection = (connection) => {
          this.inUse--;
          return release(connection);
        };
        return driver;
      },
    };
  }
}
