import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { Migrator } from 'kysely/migration';
import { MIGRATIONS } from '../../server/store/schema.js';
import { sqliteKysely } from '../../server/store/sqlite.js';
import { Store } from '../../server/store/store.js';
import { emptyDatabase, sqliteOnly } from './backend.js';
import { TestService } from './support.js';

/**
 * The schema as the service wrote it before its migrations were versioned by name: each step
 * counted in SQLite's `user_version` (verbatim from the earlier server/store/schema.ts).
 */
const UNNAMED_STEPS = [
  `CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE users (id TEXT PRIMARY KEY, email TEXT NOT NULL UNIQUE, full_name TEXT NOT NULL, created_at TEXT NOT NULL);
  CREATE TABLE workflows (
    id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, parent_id TEXT NOT NULL,
    active INTEGER NOT NULL, variables TEXT NOT NULL, webhook_token TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, UNIQUE (user_id, parent_id));
  CREATE TABLE credentials (
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, integration TEXT NOT NULL, secret TEXT NOT NULL,
    connected_at TEXT NOT NULL, PRIMARY KEY (user_id, integration));
  CREATE TABLE executions (
    id TEXT PRIMARY KEY, workflow_id TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    started_at TEXT NOT NULL, stopped_at TEXT NOT NULL, finished INTEGER NOT NULL, results TEXT NOT NULL);
  CREATE INDEX executions_by_workflow ON executions (workflow_id, started_at, id);
  CREATE TABLE error_logs (
    id TEXT PRIMARY KEY, workflow_id TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    execution_id TEXT NOT NULL, block_id TEXT NOT NULL, block_type TEXT NOT NULL, error TEXT NOT NULL,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, version INTEGER NOT NULL DEFAULT 0);
  CREATE INDEX error_logs_by_workflow ON error_logs (workflow_id, created_at);
  CREATE TABLE oauth_states (
    state TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, integration TEXT NOT NULL,
    opener_origin TEXT NOT NULL, code TEXT, expires_at INTEGER NOT NULL);`,
  `CREATE INDEX workflows_by_parent ON workflows (parent_id, active);
  CREATE TABLE deliveries (
    error_id TEXT NOT NULL REFERENCES error_logs(id) ON DELETE CASCADE, channel TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0, due_at INTEGER NOT NULL, last_error TEXT, PRIMARY KEY (error_id, channel));
  CREATE INDEX deliveries_by_due ON deliveries (due_at);`,
  `ALTER TABLE oauth_states ADD COLUMN opened INTEGER NOT NULL DEFAULT 0;
  CREATE TABLE oauth_grants (
    confirmation_hash TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    integration TEXT NOT NULL, opener_origin TEXT NOT NULL, grant_secret TEXT NOT NULL, expires_at INTEGER NOT NULL);`,
];

/** A database as the earlier service left it after `steps` steps, with one user's data in it. */
function earlierDatabase(path: string, steps: number) {
  const db = new DatabaseSync(path);
  for (const step of UNNAMED_STEPS.slice(0, steps)) db.exec(step);
  db.exec(`PRAGMA user_version = ${steps}`);
  const at = '2026-01-01T00:00:00.000Z';
  db.prepare('INSERT INTO users VALUES (?, ?, ?, ?)').run('u1', 'kept@example.com', 'Kept User', at);
  db.prepare('INSERT INTO workflows VALUES (?, ?, ?, 1, ?, ?, ?, ?)').run(
    'w1',
    'u1',
    'parent-1',
    '{"b":{"x":1}}',
    'token-1',
    at,
    at,
  );
  db.prepare('INSERT INTO executions VALUES (?, ?, ?, ?, 0, ?)').run('e1', 'w1', at, at, '[]');
  db.prepare(
    'INSERT INTO error_logs (id, workflow_id, execution_id, block_id, block_type, error, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  ).run('r1', 'w1', 'e1', 'b', 'http', 'kept error', at, at);
  db.close();
}

/** Every table's columns, keys and indexes, as SQLite describes them, with the Migrator's own tables left out. */
function shape(path: string) {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const tables = (
      db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'kysely%' ORDER BY name")
        .all() as Array<{
        name: string;
      }>
    ).map((t) => t.name);
    return Object.fromEntries(
      tables.map((table) => [
        table,
        {
          columns: db
            .prepare(`SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY cid`)
            .all(table)
            // bigint and INTEGER have the same (integer) affinity in SQLite.
            .map((c) => ({
              ...(c as object),
              type: /INT/i.test((c as { type: string }).type) ? 'INTEGER' : (c as { type: string }).type.toUpperCase(),
            })),
          foreignKeys: db
            .prepare('SELECT "table", "from", "to", on_delete FROM pragma_foreign_key_list(?) ORDER BY "from"')
            .all(table),
          indexes: (
            db.prepare('SELECT name, "unique", origin FROM pragma_index_list(?)').all(table) as Array<{
              name: string;
              unique: number;
              origin: string;
            }>
          )
            .map((index) => ({
              // SQLite names the indexes behind UNIQUE and PRIMARY KEY constraints itself.
              name: index.origin === 'c' ? index.name : index.origin,
              unique: index.unique,
              columns: (
                db.prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno').all(index.name) as Array<{
                  name: string;
                }>
              ).map((c) => c.name),
            }))
            .sort((a, b) => `${a.name}${a.columns}`.localeCompare(`${b.name}${b.columns}`)),
        },
      ]),
    );
  } finally {
    db.close();
  }
}

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'forge-migrations-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('migrations', () => {
  test('an empty database gets every migration, recorded by name; opening it again applies nothing', async () => {
    const location = await emptyDatabase(dir);
    const first = await Store.open(location);
    await first.close();
    assert.deepEqual(first.migrated, Object.keys(MIGRATIONS));
    const again = await Store.open(location);
    try {
      assert.deepEqual(again.migrated, []);
      const recorded = await again.db
        .selectFrom('kysely_migration' as never)
        .select('name' as never)
        .orderBy('name' as never)
        .execute();
      assert.deepEqual(
        recorded.map((row) => (row as { name: string }).name),
        Object.keys(MIGRATIONS),
      );
    } finally {
      await again.close();
    }
  });

  test('the first three migrations make the schema the earlier service made', { skip: sqliteOnly }, async () => {
    const three = join(dir, 'three-steps.db');
    const db = sqliteKysely(three);
    const migrator = new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS } });
    assert.equal((await migrator.migrateTo(Object.keys(MIGRATIONS)[UNNAMED_STEPS.length - 1]!)).error, undefined);
    await db.destroy();
    const earlier = join(dir, 'earlier-complete.db');
    earlierDatabase(earlier, UNNAMED_STEPS.length);
    assert.deepEqual(shape(three), shape(earlier));
  });

  test('the migration count is kept where the earlier service looks for it', { skip: sqliteOnly }, async () => {
    const fresh = join(dir, 'fresh.db');
    await (await Store.open(fresh)).close();
    const db = new DatabaseSync(fresh, { readOnly: true });
    assert.equal(db.prepare('PRAGMA user_version').get()?.user_version, Object.keys(MIGRATIONS).length);
    db.close();
  });

  for (const steps of [UNNAMED_STEPS.length, 2]) {
    test(`a database of the earlier service (${steps} steps) is adopted and brought forward without losing a row`, {
      skip: sqliteOnly,
    }, async () => {
      const path = join(dir, `earlier-${steps}.db`);
      earlierDatabase(path, steps);
      const forge = await TestService.start({ db: path });
      try {
        const users = await forge.asHost('GET', '/user');
        assert.deepEqual(users.body.data, [{ _id: 'u1', email: 'kept@example.com', fullName: 'Kept User' }]);
        const logs = await forge.asHost('GET', '/workflow/w1/logs');
        assert.deepEqual(
          logs.body.data.map((e: { executionId: string }) => e.executionId),
          ['e1'],
        );
        const errors = await forge.asHost('GET', '/workflow/w1/errors');
        assert.deepEqual(
          errors.body.errors.map((e: { error: string }) => e.error),
          ['kept error'],
        );
        // The steps it lacked were applied: an OAuth flow (step 3) starts and is recorded.
        assert.ok(await forge.store.oauth.createState('u1', 'slack', 'https://app.example', 60_000));
      } finally {
        await forge.close();
      }
      const store = await Store.open(path);
      await store.close();
      assert.deepEqual(shape(path), shape(join(dir, 'fresh.db')));
    });
  }
});
