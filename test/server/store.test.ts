import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { sql } from 'kysely';
import { Store } from '../../server/store/store.js';
import { BACKEND, sqliteOnly, testDatabase } from './backend.js';

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
      const userId = await store.users.create('Ada', 'ada@example.com');
      const child = await store.children.create(userId, 'parent', {});
      // Every pooled connection prepares `SELECT * FROM workflows …`, then the table changes
      // under it, as when another instance migrates the database.
      await Promise.all(Array.from({ length: 10 }, () => store.children.get(child.id)));
      await sql`ALTER TABLE workflows ADD COLUMN added_later text`.execute(store.db);
      const found = await Promise.all(Array.from({ length: 10 }, () => store.children.get(child.id)));
      assert.deepEqual(
        found.map((c) => c?.id),
        Array.from({ length: 10 }, () => child.id),
      );
    }),
);

test('a transaction hands its work a whole store, bound to it: writes of several parts commit or roll back together', () =>
  withStore(async (store) => {
    const userId = await store.users.create('Ada', 'ada@example.com');
    await assert.rejects(
      store.transaction(async (tx) => {
        assert.ok(tx instanceof Store);
        assert.notEqual(tx, store);
        const child = await tx.children.create(userId, 'parent', {});
        await tx.settings.set('note', 'kept only with the child');
        assert.equal((await tx.children.get(child.id))?.id, child.id);
        throw new Error('undo');
      }),
      /undo/,
    );
    assert.deepEqual(await store.children.list(userId), []);
    assert.equal(await store.settings.get('note'), undefined);
    const childId = await store.transaction(async (tx) => {
      const child = await tx.children.create(userId, 'parent', {});
      await tx.settings.set('note', 'kept');
      // Inside a transaction, a nested one runs in it.
      await tx.transaction(async (inner) => assert.equal(inner, tx));
      return child.id;
    });
    assert.equal((await store.children.get(childId))?.userId, userId);
    assert.equal(await store.settings.get('note'), 'kept');
  }));

test('a child is read with a page of its log, and without one when the page is past the end', () =>
  withStore(async (store) => {
    const userId = await store.users.create('Ada', 'ada@example.com');
    const child = await store.children.create(userId, 'parent', {});
    const other = await store.children.create(userId, 'other', {});
    const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString();
    const entry = (minute: number) => ({
      executionId: `run-${minute}`,
      startedAt: at(minute),
      stoppedAt: at(minute),
      finished: minute % 2 === 0,
      results: [],
    });
    await store.logs.insertExecutions(
      child.id,
      Array.from({ length: 5 }, (_, minute) => entry(minute)),
    );
    await store.logs.insertExecution(other.id, entry(10));
    const ids = async (page: number, order: 'asc' | 'desc') =>
      (await store.logs.getChildWithExecutions(child.id, page, 2, order))?.executions.map((e) => e.executionId);
    assert.deepEqual(await ids(1, 'desc'), ['run-4', 'run-3']);
    assert.deepEqual(await ids(3, 'desc'), ['run-0']);
    assert.deepEqual(await ids(2, 'asc'), ['run-2', 'run-3']);
    assert.deepEqual(await ids(4, 'asc'), []);
    const read = await store.logs.getChildWithExecutions(child.id, 1, 1, 'desc');
    assert.equal(read?.child.id, child.id);
    assert.deepEqual(read?.executions, [
      { executionId: 'run-4', startedAt: at(4), stoppedAt: at(4), finished: true, resultsJson: '[]' },
    ]);
    assert.equal(await store.logs.getChildWithExecutions('no-such-child', 1, 2, 'desc'), undefined);
  }));

test("children and their logs versions asked for in one turn each answer their own row, and the next turn's read sees a run stored since", () =>
  withStore(async (store) => {
    const ada = await store.users.create('Ada', 'ada@example.com');
    const grace = await store.users.create('Grace', 'grace@example.com');
    const adas = await store.children.create(ada, 'parent', {});
    const graces = await store.children.create(grace, 'parent', {});
    const run = (id: string) => ({
      executionId: id,
      startedAt: '2026-01-01T00:00:00.000Z',
      stoppedAt: '2026-01-01T00:00:00.000Z',
      finished: true,
      results: [],
    });
    await store.logs.insertExecution(graces.id, run('grace-1'));
    // Asked for in one turn: on PostgreSQL one statement answers them all (TurnBatch).
    const asked = [adas.id, graces.id, 'no-such-child', graces.id, adas.id];
    const read = () => Promise.all(asked.map((id) => store.logs.getChildWithLogsVersion(id)));
    const owners = (heads: Awaited<ReturnType<typeof read>>) =>
      heads.map((head) => head && { id: head.child.id, userId: head.child.userId, version: head.logsVersion });
    assert.deepEqual(owners(await read()), [
      { id: adas.id, userId: ada, version: 0 },
      { id: graces.id, userId: grace, version: 1 },
      undefined,
      { id: graces.id, userId: grace, version: 1 },
      { id: adas.id, userId: ada, version: 0 },
    ]);
    await store.logs.insertExecution(adas.id, run('ada-1'));
    assert.deepEqual(
      owners(await read()).map((head) => head?.version),
      [1, 1, undefined, 1, 1],
    );
  }));

test('a read for update is offered only on a store bound to a transaction', () =>
  withStore(async (store) => {
    const userId = await store.users.create('Ada', 'ada@example.com');
    const child = await store.children.create(userId, 'parent', {});
    // Checked by the compiler (npm run typecheck): outside a transaction there is nothing to lock for.
    const outside = () =>
      // @ts-expect-error: getForUpdate needs `this` to be a ChildRepository over a Transaction.
      store.children.getForUpdate(child.id);
    assert.equal(typeof outside, 'function');
    const locked = await store.transaction((tx) => tx.children.getForUpdate(child.id));
    assert.equal(locked?.id, child.id);
  }));

test('shared transactions begun together commit once, and each is answered only after that commit', {
  skip: sqliteOnly,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'forge-shared-'));
  const file = join(dir, 'forge.db');
  const store = await Store.open(file);
  // Another connection to the file sees only what was committed.
  const reader = new DatabaseSync(file, { readOnly: true });
  const committed = () => (reader.prepare('SELECT count(*) AS n FROM settings').get() as { n: number }).n;
  try {
    const before = committed();
    const seenByOthers: number[] = [];
    await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        store.sharedTransaction(async (tx) => {
          seenByOthers.push(committed() - before);
          await tx.settings.set(`shared-${i}`, 'written');
        }),
      ),
    );
    // Had each had a commit of its own, the later ones would have seen the earlier ones' rows.
    assert.deepEqual(seenByOthers, [0, 0, 0, 0, 0]);
    assert.equal(committed() - before, 5);
  } finally {
    reader.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test(
  'on PostgreSQL, shared transactions given an order commit once, run in their order (issue 27, item 9)',
  {
    skip: BACKEND === 'sqlite' ? 'SQLite shares every one: the test above' : false,
  },
  () =>
    withStore(async (store) => {
      // The store's other pooled connections see only what was committed.
      const committed = async () =>
        Number(
          (await sql<{ n: string }>`SELECT count(*) AS n FROM settings WHERE key LIKE 'ordered-%'`.execute(store.db))
            .rows[0]!.n,
        );
      const seenByOthers: number[] = [];
      const ran: string[] = [];
      await Promise.all(
        ['e', 'c', 'a', 'd', 'b'].map((name) =>
          store.sharedTransaction(async (tx) => {
            ran.push(name);
            seenByOthers.push(await committed());
            await tx.settings.set(`ordered-${name}`, 'written');
          }, name),
        ),
      );
      // Had each had a commit of its own, some would have seen others' rows.
      assert.deepEqual(seenByOthers, [0, 0, 0, 0, 0]);
      assert.equal(await committed(), 5);
      // In their order, whatever order they came in: every group takes shared rows in one order.
      assert.deepEqual(ran, ['a', 'b', 'c', 'd', 'e']);
    }),
);

test('a shared transaction that throws rolls back its own writes only, and gets its own error', () =>
  withStore(async (store) => {
    const results = await Promise.allSettled(
      ['kept-1', 'undone', 'kept-2'].map((name) =>
        store.sharedTransaction(async (tx) => {
          await tx.settings.set(name, 'written');
          if (name === 'undone') throw new Error(`${name} failed`);
          return name;
        }),
      ),
    );
    assert.deepEqual(
      results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)),
      ['kept-1', 'undone failed', 'kept-2'],
    );
    assert.equal(await store.settings.get('kept-1'), 'written');
    assert.equal(await store.settings.get('undone'), undefined);
    assert.equal(await store.settings.get('kept-2'), 'written');
    // Inside a transaction, a shared one runs in it.
    await store.transaction(async (tx) => tx.sharedTransaction(async (inner) => assert.equal(inner, tx)));
  }));

test("a user's children and connections in one statement: each as its own read answers it, in its order, only the user's", () =>
  withStore(async (store) => {
    const userId = await store.users.create('Ada', 'ada@example.com');
    const otherId = await store.users.create('Grace', 'grace@example.com');
    assert.deepEqual(await store.childrenAndConnections(userId), { children: [], connections: [] });
    assert.deepEqual(await store.childrenAndConnections('no-such-user'), { children: [], connections: [] });
    const first = await store.children.create(userId, 'parent-b', { block: { channel: 'general' } });
    const second = await store.children.create(userId, 'parent-a', {});
    await store.children.create(otherId, 'parent-a', {});
    await store.credentials.save(userId, 'slack', 'sealed', 'Acme workspace');
    await store.credentials.save(userId, 'github', 'sealed');
    await store.credentials.save(otherId, 'hubspot', 'sealed');
    const { children, connections } = await store.childrenAndConnections(userId);
    assert.deepEqual(children, await store.children.list(userId));
    assert.deepEqual(connections, await store.credentials.list(userId));
    // Both of the user's, none of the other's; their order is the list's (creation time, then id:
    // two made in the same millisecond come in the order of their random ids).
    assert.deepEqual(children.map((c) => c.id).sort(), [first.id, second.id].sort());
    assert.deepEqual(children.find((c) => c.id === first.id)?.variables, { block: { channel: 'general' } });
    // The same fields in the same order as the list's: the answer's bytes are JSON.stringify's of them.
    assert.equal(
      JSON.stringify(connections.map(({ connectedAt: _, ...c }) => c)),
      '[{"integration":"github","status":"connected"},{"integration":"slack","status":"connected","account":"Acme workspace"}]',
    );
    await store.transaction(async (tx) => {
      await tx.credentials.save(userId, 'hubspot', 'sealed');
      const inside = await tx.childrenAndConnections(userId);
      assert.deepEqual(
        inside.connections.map((c) => c.integration),
        ['github', 'hubspot', 'slack'],
      );
    });
  }));

test("a read outside a transaction never sees another transaction's uncommitted writes, on SQLite's one connection too", () =>
  withStore(async (store) => {
    const userId = await store.users.create('Ada', 'ada@example.com');
    const user = await store.users.get(userId);
    let reads: Promise<unknown[]> | undefined;
    await assert.rejects(
      store.transaction(async (tx) => {
        // Read while the transaction is open (on SQLite, between its awaits, as another request
        // would), without waiting: what they answer must be what was committed.
        const addedId = await tx.users.create('Grace', 'grace@example.com');
        await tx.children.create(userId, 'parent', {});
        await tx.credentials.save(userId, 'slack', 'sealed');
        const beforeDelete = [
          store.users.get(addedId),
          store.children.list(userId),
          store.childrenAndConnections(userId),
        ];
        await tx.users.delete(userId);
        reads = Promise.all([...beforeDelete, store.users.get(userId)]);
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw new Error('undo');
      }),
      /undo/,
    );
    const [added, children, owned, kept] = (await reads)!;
    assert.equal(added, undefined);
    assert.deepEqual(children, []);
    assert.deepEqual(owned, { children: [], connections: [] });
    assert.deepEqual(kept, user);
  }));

test("every write to a user's workflows and connections moves the user's own_version, on its own and in a transaction; a stored run, another user's write and a rename do not", () =>
  withStore(async (store) => {
    const userId = await store.users.create('Ada', 'ada@example.com');
    const otherId = await store.users.create('Grace', 'grace@example.com');
    const versionOf = async (id: string) => (await store.users.getWithOwnVersion(id))?.ownVersion;
    /** Runs `write` and answers whether it moved the user's version (and never the other's). */
    const moves = async (write: () => Promise<unknown>) => {
      const [before, otherBefore] = [await versionOf(userId), await versionOf(otherId)];
      await write();
      assert.equal(await versionOf(otherId), otherBefore, "another user's version moved");
      return (await versionOf(userId))! > before!;
    };
    assert.equal(await versionOf(userId), 0);
    assert.deepEqual((await store.users.getWithOwnVersion(userId))?.user, await store.users.get(userId));
    assert.equal(await store.users.getWithOwnVersion('no-such-user'), undefined);
    let child = await store.children.create(userId, 'parent', {});
    assert.equal(await versionOf(userId), 1, 'install');
    const writes: Record<string, () => Promise<unknown>> = {
      switch: () => store.children.setActive(child.id, false),
      'switch everything off': async () => {
        await store.children.setActive(child.id, true);
        await store.children.deactivateAllOf(userId);
      },
      variables: () => store.children.setVariables(child.id, { block: { channel: 'general' } }),
      'webhook token': () => store.children.rotateWebhookToken(child.id),
      removal: () => store.children.delete(child.id),
      'install again': async () => {
        child = await store.children.create(userId, 'parent', {});
      },
      connection: () => store.credentials.save(userId, 'slack', 'sealed'),
      'connection again': () => store.credentials.save(userId, 'slack', 'sealed again', 'Acme workspace'),
      refresh: () => store.credentials.replaceSecret(userId, 'slack', 'refreshed'),
      breakage: () => store.credentials.markBroken(userId, 'slack'),
      'connection ended': () => store.credentials.delete(userId, 'slack'),
      'in a transaction': () =>
        store.transaction(async (tx) => {
          await tx.credentials.save(userId, 'github', 'sealed');
          await tx.children.setVariables(child.id, { block: { channel: 'random' } });
        }),
    };
    for (const [name, write] of Object.entries(writes)) assert.equal(await moves(write), true, name);
    const at = new Date().toISOString();
    const run = { executionId: 'run-1', startedAt: at, stoppedAt: at, finished: true, results: [] };
    assert.equal(await moves(() => store.logs.insertExecutions(child.id, [run])), false, 'a stored run');
    assert.equal(await moves(() => store.users.update(userId, 'Ada L.', 'ada@example.com')), false, 'a rename');
    const mine = await versionOf(userId);
    await store.children.create(otherId, 'parent', {});
    assert.deepEqual([await versionOf(userId), await versionOf(otherId)], [mine, 1], "another user's install");
    // A rolled back write moves nothing.
    await assert.rejects(
      moves(() =>
        store.transaction(async (tx) => {
          await tx.children.setActive(child.id, false);
          throw new Error('rolled back');
        }),
      ),
      /rolled back/,
    );
    assert.equal((await store.children.get(child.id))?.active, true);
    // The user goes with their workflows and connections, the triggers' writes to the user's row
    // included (a row that the same delete removes).
    await store.credentials.save(userId, 'hubspot', 'sealed');
    assert.equal(await store.users.delete(userId), true);
    assert.equal(await store.users.getWithOwnVersion(userId), undefined);
    assert.equal(await store.children.get(child.id), undefined);
    assert.deepEqual(await store.credentials.list(userId), []);
  }));
