import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { isPostgresUrl, Store } from '../../server/store/store.js';

/**
 * The database the service tests run on. `npm test` runs the suite twice: on SQLite, then with
 * FORGE_TEST_POSTGRES set to a throwaway PostgreSQL server it started (scripts/test.mjs).
 */
const SERVER = process.env.FORGE_TEST_POSTGRES;
export const BACKEND: 'sqlite' | 'postgres' = SERVER ? 'postgres' : 'sqlite';

/** For `test(name, { skip: sqliteOnly }, …)`: tests of the SQLite file itself (its bytes, modes, key file). */
export const sqliteOnly = BACKEND === 'postgres' ? 'checks the SQLite file itself' : false;

/** Every database is copied from this one, migrated once: much faster than migrating each. */
const TEMPLATE = 'forge_template';

const urlOf = (database: string) => {
  const url = new URL(SERVER!);
  url.pathname = `/${database}`;
  return url.toString();
};

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  // A client per call, ended at once: an open connection would keep the test process alive.
  const client = new pg.Client({ connectionString: SERVER });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

let template: Promise<void> | undefined;
function ensureTemplate(): Promise<void> {
  template ??= admin(async (client) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [TEMPLATE]);
    if (rowCount) return;
    await client.query(`CREATE DATABASE ${TEMPLATE}`);
    await (await Store.open(urlOf(TEMPLATE))).close();
  });
  return template;
}

async function createFrom(name: string): Promise<void> {
  await ensureTemplate();
  await admin(async (client) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE}`);
  });
}

/**
 * A database for one service. No `path`: a clean one (`:memory:` on SQLite, a new database on
 * PostgreSQL, which `drop` removes). A SQLite file path: that file, or on PostgreSQL the same
 * database for every start with that path, so restarts find what the last start saved.
 */
export async function testDatabase(path?: string): Promise<{ db: string; drop?: () => Promise<void> }> {
  if (!SERVER || (path && isPostgresUrl(path))) return { db: path ?? ':memory:' };
  if (path && path !== ':memory:') {
    const name = `file_${createHash('sha256').update(path).digest('hex').slice(0, 16)}`;
    await createFrom(name);
    return { db: urlOf(name) };
  }
  const name = `test_${randomBytes(8).toString('hex')}`;
  await createFrom(name);
  return {
    db: urlOf(name),
    drop: () => admin(async (client) => void (await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))),
  };
}

/** A database with nothing in it yet (not even the schema): a new file, or a new PostgreSQL database. */
export async function emptyDatabase(dir: string): Promise<string> {
  const name = `empty_${randomBytes(8).toString('hex')}`;
  if (!SERVER) return `${dir}/${name}.db`;
  await admin(async (client) => void (await client.query(`CREATE DATABASE ${name}`)));
  return urlOf(name);
}
