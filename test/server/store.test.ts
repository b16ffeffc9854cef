import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { Store } from '../../server/store/store.js';
import { BACKEND, testDatabase } from './backend.js';

/** A store on a clean database for `work`, closed and dropped after. */
async function withStore(work: (store: Store) => Promise<void>): Promise<void> {
  const { db, drop } = await testDatabase();
  const store = await Store.open(db);
  try {
    await work(store);
  } finally {
    await store.close();
    await drop?.();
  }
}

test(
  'a statement prepared before a column was added still answers after it',
  { skip: BACKEND === 'sqlite' ? 'statements are prepared per PostgreSQL connection' : false },
  () =>
    withStore(async (store) => {
      const userId = await store.createUser('Ada', 'ada@example.com');
      const child = await store.createChild(userId, 'parent', {});
      // Every pooled connection prepares `SELECT * FROM workflows …`, then the table changes
      // under it, as when another instance migrates the database.
      await Promise.all(Array.from({ length: 10 }, () => store.getChild(child.id)));
      await sql`ALTER TABLE workflows ADD COLUMN added_later text`.execute(store.db);
      const found = await Promise.all(Array.from({ length: 10 }, () => store.getChild(child.id)));
      assert.deepEqual(
        found.map((c) => c?.id),
        Array.from({ length: 10 }, () => child.id),
      );
    }),
);
