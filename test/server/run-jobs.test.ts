/**
 * Runs that survive faults (issue 27): every run is a job on a durable queue (pg-boss on
 * PostgreSQL, a table on SQLite). A webhook call is stored, answered 202, then run by a worker;
 * `Prefer: wait` waits for it; an `Idempotency-Key` repeat starts nothing; a bad header is a 400
 * that stores nothing. Minutes missed while no instance ran are run once each when one starts,
 * up to an hour back, older ones skipped and counted. A graceful stop gives a run that did not
 * finish in its grace back to the queue, and the next instance stores it once. Real service,
 * real database (both backends), real HTTP.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { fromKysely, PgBoss } from 'pg-boss';
import { generateApiKey } from '../../server/auth.js';
import type { Clock } from '../../server/clock.js';
import { silentLogger } from '../../server/log.js';
import { jobId } from '../../server/store/jobs.js';
import { PgBossJobQueue } from '../../server/store/pg-boss-queue.js';
import { Store } from '../../server/store/store.js';
import { testDatabase } from './backend.js';
import {
  BALANCE,
  type Harness,
  hookOf,
  newUser,
  PAYMENTS,
  post,
  REFUSE,
  startHarness,
  until,
} from './engine-support.js';

const MINUTE = 60_000;

/** A clock the test sets; the scheduler looks again whenever it is set. */
function testClock(start: number) {
  let now = start;
  const listeners = new Set<() => void>();
  const clock: Clock & { set(time: number): void } = {
    now: () => now,
    onJump(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    set(time) {
      now = time;
      for (const listener of listeners) listener();
    },
  };
  return clock;
}

async function executionsOf(h: Harness, childId: string): Promise<Array<{ executionId: string; finished: boolean }>> {
  const answer = await h.api('GET', `/workflow/${childId}/logs?limit=30`);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.data;
}

describe('a webhook call is stored, answered, then run', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  test('202 {executionId} at once; the run is stored under that id', async () => {
    const user = await newUser(h);
    const child = await user.install(REFUSE);
    const answer = await post(await hookOf(h, child));
    assert.equal(answer.status, 202, JSON.stringify(answer.body));
    assert.deepEqual(Object.keys(answer.body), ['executionId']);
    await until(async () => (await executionsOf(h, child)).length === 1, 'the run is stored');
    assert.equal((await executionsOf(h, child))[0]!.executionId, answer.body.executionId);
  });

  test('Prefer: wait answers 200 {executionId, finished} when the run ends in time', async () => {
    const user = await newUser(h);
    const child = await user.install(PAYMENTS);
    const answer = await post(
      await hookOf(h, child),
      { Prefer: 'respond-async, wait=20' },
      { amount: 150, customer: { name: 'B' } },
    );
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.headers.get('preference-applied'), 'wait=20');
    assert.equal(answer.body.finished, true);
    const [stored] = await executionsOf(h, child);
    assert.equal(stored!.executionId, answer.body.executionId);
  });

  test('on PostgreSQL the accepting instance with room takes the job in the transaction that adds it (issue 27, item 9)', {
    skip: !process.env.FORGE_TEST_POSTGRES && 'PostgreSQL only: SQLite has no creation time to compare',
  }, async () => {
    const user = await newUser(h);
    const child = await user.install(PAYMENTS);
    const answer = await post(await hookOf(h, child), { Prefer: 'wait=20' }, { amount: 150, customer: { name: 'B' } });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    // pg-boss stamps a job's creation and its start with the transaction's clock (job_now()):
    // they are the same instant only when one transaction added and took the job, not when a
    // fetch took it after.
    const { rows } = await sql<{ state: string; takenWhenAdded: boolean; retries: number }>`
      SELECT state, started_on = created_on AS "takenWhenAdded", retry_count AS retries
      FROM pgboss.job WHERE data->>'executionId' = ${answer.body.executionId}`.execute(h.service.store.db);
    assert.deepEqual(rows, [{ state: 'completed', takenWhenAdded: true, retries: 0 }]);
  });

  const postgresOnly = { skip: !process.env.FORGE_TEST_POSTGRES && 'PostgreSQL only: pg-boss' };
  const data = { kind: 'webhook', workflowId: 'w', executionId: 'e', body: { amount: 1 } } as const;

  /**
   * The service's queue and pg-boss's own client on a database of their own, with no service on
   * it (no worker fetches its jobs); answers pgboss.job's rows of `ids` after `work`, each without
   * its id, to compare column by column.
   */
  async function bossRows(
    ids: string[],
    work: (store: Store, queue: PgBossJobQueue, boss: PgBoss) => Promise<void>,
  ): Promise<Record<string, unknown>[]> {
    const { db, drop } = await testDatabase();
    const store = await Store.open(db);
    const queue = await PgBossJobQueue.open(db, silentLogger);
    const boss = new PgBoss({ connectionString: db, supervise: false, schedule: false });
    await boss.start();
    try {
      await work(store, queue, boss);
      const { rows } = await sql<{ id: string; row: Record<string, unknown> }>`
        SELECT id, to_jsonb(j) - 'id' AS row FROM pgboss.job j WHERE id IN (${sql.join(ids)})`.execute(store.db);
      return ids.map((id) => rows.find((row) => row.id === id)!.row);
    } finally {
      await boss.stop({ graceful: false });
      await queue.close();
      await store.close();
      await drop?.();
    }
  }

  // Each pair is made in one transaction, so that pg-boss's clock (job_now(), the transaction's
  // start) is the same instant in both rows.
  test(
    "on PostgreSQL a job added taken is the row pg-boss's own send and fetch make (issue 27, item 9)",
    postgresOnly,
    async () => {
      const [viaSend, viaAddTaken] = [jobId('send and fetch'), jobId('added taken')];
      const [sent, added] = await bossRows([viaSend, viaAddTaken], (store, queue, boss) =>
        store.transaction(async (tx) => {
          await boss.send('forge-runs', data, { id: viaSend, db: fromKysely(tx.db) });
          const fetched = await boss.fetch('forge-runs', { batchSize: 5, db: fromKysely(tx.db) });
          assert.deepEqual(
            fetched.map((job) => job.id),
            [viaSend],
          );
          const taken = await queue.addTaken({ id: viaAddTaken, data }, tx);
          assert.deepEqual(taken, { id: viaAddTaken, data, attempt: 1 });
        }),
      );
      assert.equal(added?.state, 'active');
      assert.deepEqual(added, sent);
    },
  );

  test(
    "on PostgreSQL a job marked done with its run is the row pg-boss's own complete makes (issue 27, item 9)",
    postgresOnly,
    async () => {
      const [viaComplete, viaStore] = [jobId('completed by pg-boss'), jobId('completed with its run')];
      const [completed, stored] = await bossRows([viaComplete, viaStore], async (store, queue, boss) => {
        await store.transaction(async (tx) => {
          for (const id of [viaComplete, viaStore]) await boss.send('forge-runs', data, { id, db: fromKysely(tx.db) });
          const fetched = await boss.fetch('forge-runs', { batchSize: 5, db: fromKysely(tx.db) });
          assert.equal(fetched.length, 2);
        });
        await store.transaction(async (tx) => {
          await boss.complete('forge-runs', viaComplete, undefined, { db: fromKysely(tx.db) });
          // The guard a run's store is written after (Logs.insertExecutionAfter), on its own.
          const guard = queue.completion([viaStore]);
          const { rows } = await tx.db.executeQuery(CompiledQuery.raw(guard.sql, guard.parameters));
          assert.equal(rows.length, 1);
        });
      });
      assert.equal(stored?.state, 'completed');
      assert.deepEqual(stored, completed);
    },
  );

  test(
    'on PostgreSQL jobs added taken at the same time outside a transaction are one statement, each row as one added alone (issue 27, item 9)',
    postgresOnly,
    async () => {
      const [alone, ...together] = ['alone', 'together 1', 'together 2', 'together 3'].map((name) => jobId(name));
      const rows = await bossRows([alone!, ...together], async (store, queue) => {
        await queue.addTaken({ id: alone!, data }, store);
        // Asked for in one turn, one of them an id that is there already: it alone is refused.
        const added = await Promise.allSettled(
          [...together, alone!].map((id) => queue.addTaken({ id, data }, store, { commitWithoutFlushWait: true })),
        );
        assert.deepEqual(
          added.map((a) => (a.status === 'fulfilled' ? a.value : (a.reason as Error).message)),
          [...together.map((id) => ({ id, data, attempt: 1 })), `The job ${alone} is in the queue already.`],
        );
        const { rows: writers } = await sql<{ writer: string }>`
          SELECT DISTINCT xmin::text AS writer FROM pgboss.job WHERE id IN (${sql.join(together)})`.execute(store.db);
        assert.equal(writers.length, 1, 'one transaction added them');
      });
      // The same columns as the one added alone, but for the instants (each transaction's job_now()).
      const instants = ['created_on', 'start_after', 'started_on', 'heartbeat_on', 'keep_until'];
      const without = (row: Record<string, unknown>) =>
        Object.fromEntries(Object.entries(row).filter(([column]) => !instants.includes(column)));
      for (const row of rows.slice(1)) {
        assert.deepEqual(without(row), without(rows[0]!));
        assert.equal(row.created_on, row.started_on);
      }
    },
  );

  test(
    'on PostgreSQL runs stored at the same time are one statement: each stored only if its job was still taken and its workflow is there (issue 27, item 9)',
    postgresOnly,
    async () => {
      const ids = ['kept 1', 'kept 2', 'done elsewhere', 'workflow gone', 'kept 3'].map((name) => jobId(name));
      const rows = await bossRows(ids, async (store, queue) => {
        const userId = await store.users.create('Ada', 'ada@example.com');
        const [kept, other, gone] = [
          await store.children.create(userId, 'parent-1', {}),
          await store.children.create(userId, 'parent-2', {}),
          await store.children.create(userId, 'parent-3', {}),
        ];
        for (const id of ids) await queue.addTaken({ id, data }, store);
        // Another instance took and finished this job after this one's lease ran out.
        await sql`UPDATE pgboss.job SET state = 'completed' WHERE id = ${ids[2]}`.execute(store.db);
        await sql`DELETE FROM workflows WHERE id = ${gone.id}`.execute(store.db);
        const workflows = [kept.id, kept.id, kept.id, gone.id, other.id];
        const runs = ids.map((jobId, i) => ({
          workflowId: workflows[i]!,
          jobId,
          entry: {
            executionId: `run-${i}`,
            startedAt: `2026-11-27T0${i < 2 ? 7 : 8}:00:00.000Z`,
            stoppedAt: '2026-11-27T08:00:01.000Z',
            finished: i !== 1,
            results: [
              {
                blockId: 'b',
                startedAt: 's',
                stoppedAt: 't',
                data: [[{ json: { n: i, quote: '"{,}\\' }, id: `item-${i}` }]],
              },
            ],
          },
          completion: (ids: string[]) => queue.completion(ids),
        }));
        // Asked for in one turn: one statement, so one transaction wrote every stored run.
        const answers = await Promise.all(runs.map((run) => store.logs.storeRunAfter(run)));
        assert.deepEqual(answers, [
          { guarded: true, stored: true },
          { guarded: true, stored: true },
          { guarded: false, stored: false },
          { guarded: true, stored: false },
          { guarded: true, stored: true },
        ]);
        const { rows: executions } = await sql<{ id: string; writer: string; finished: number; results: string }>`
          SELECT id, xmin::text AS writer, finished, results FROM executions ORDER BY id`.execute(store.db);
        assert.deepEqual(
          executions.map(({ id, finished }) => [id, finished]),
          [
            ['run-0', 1],
            ['run-1', 0],
            ['run-4', 1],
          ],
        );
        assert.equal(new Set(executions.map((row) => row.writer)).size, 1, 'one transaction wrote them');
        assert.deepEqual(JSON.parse(executions[2]!.results), runs[4]!.entry.results);
        const { rows: hours } = await sql<{ workflow_id: string; hour: string; executions: number }>`
          SELECT workflow_id, hour, executions FROM execution_hours ORDER BY workflow_id, hour`.execute(store.db);
        assert.deepEqual(
          hours,
          [
            { workflow_id: kept.id, hour: '2026-11-27T07', executions: 2 },
            { workflow_id: other.id, hour: '2026-11-27T08', executions: 1 },
          ].sort((a, b) => (a.workflow_id < b.workflow_id ? -1 : 1)),
        );
        assert.equal((await store.logs.getChildWithLogsVersion(kept.id))?.logsVersion, 2);
        assert.equal((await store.logs.getChildWithLogsVersion(other.id))?.logsVersion, 1);
      });
      assert.deepEqual(
        rows.map((row) => row.state),
        ['completed', 'completed', 'completed', 'completed', 'completed'],
      );
    },
  );

  test('an Idempotency-Key repeat answers the first executionId and starts nothing', async () => {
    const user = await newUser(h);
    const child = await user.install(REFUSE);
    const url = await hookOf(h, child);
    const first = await post(url, { 'Idempotency-Key': 'order-17', Prefer: 'wait=20' });
    const again = await post(url, { 'Idempotency-Key': 'order-17' });
    const racing = await Promise.all([1, 2, 3].map(() => post(url, { 'Idempotency-Key': 'order-18' })));
    assert.equal(first.status, 200);
    assert.equal(again.status, 202);
    assert.equal(again.body.executionId, first.body.executionId);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(new Set(racing.map((r) => r.body.executionId)).size, 1, 'one key, one execution, however sent');
    const other = await post(url, { 'Idempotency-Key': 'order-19', Prefer: 'wait=20' });
    assert.notEqual(other.body.executionId, first.body.executionId, 'another key is another run');
    await until(async () => (await executionsOf(h, child)).length === 3, 'three runs: order-17, -18 and -19');
    // The same key on another workflow's webhook is that workflow's own.
    const elsewhere = await user.install(PAYMENTS);
    const there = await post(await hookOf(h, elsewhere), { 'Idempotency-Key': 'order-17' });
    assert.notEqual(there.body.executionId, first.body.executionId);
  });

  test('a malformed Prefer or Idempotency-Key is a 400 that names it, and stores nothing', async () => {
    const user = await newUser(h);
    const child = await user.install(REFUSE);
    const url = await hookOf(h, child);
    for (const [headers, name] of [
      [{ Prefer: 'wait=soon' }, 'Prefer'],
      [{ Prefer: 'wait=-1' }, 'Prefer'],
      [{ Prefer: 'wait=1.5' }, 'Prefer'],
      [{ Prefer: '=10' }, 'Prefer'],
      [{ 'Idempotency-Key': 'has space' }, 'Idempotency-Key'],
      [{ 'Idempotency-Key': 'x'.repeat(256) }, 'Idempotency-Key'],
      [{ 'Idempotency-Key': 'clé' }, 'Idempotency-Key'],
    ] as const) {
      const answer = await post(url, headers);
      assert.equal(answer.status, 400, `${JSON.stringify(headers)}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.headers.get('content-type'), 'application/problem+json; charset=utf-8');
      assert.match(answer.body.detail, new RegExp(`The ${name} header is malformed`), JSON.stringify(answer.body));
    }
    // An empty Idempotency-Key is refused too (fetch sends an empty header as is).
    assert.equal((await post(url, { 'Idempotency-Key': '' })).status, 400);
    // A preference the service does not know is ignored, as RFC 7240 asks.
    assert.equal((await post(url, { Prefer: 'handling=lenient' })).status, 202);
    await until(async () => (await executionsOf(h, child)).length === 1, 'only the last call ran');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal((await executionsOf(h, child)).length, 1, 'the refused calls stored nothing');
  });

  test('a webhook of a switched-off workflow is a 409 that stores nothing, even with a key', async () => {
    const user = await newUser(h);
    const child = await user.install(REFUSE);
    const url = await hookOf(h, child);
    assert.equal((await h.api('PUT', `/workflow/${child}/deactivate`, undefined, user.token)).status, 200);
    assert.equal((await post(url, { 'Idempotency-Key': 'k1' })).status, 409);
    assert.equal((await h.api('PUT', `/workflow/${child}/activate`, undefined, user.token)).status, 200);
    // The refused call did not take the key: it starts a run now.
    const answer = await post(url, { 'Idempotency-Key': 'k1', Prefer: 'wait=20' });
    assert.equal(answer.status, 200);
    assert.equal((await executionsOf(h, child)).length, 1);
  });
});

describe('minutes missed while no instance ran', () => {
  const start = Date.UTC(2026, 2, 2, 12, 0, 10);
  const clock = testClock(start);
  const db = join(mkdtempSync(join(tmpdir(), 'forge-catch-up-')), 'forge.db');
  // One key for the three starts (a generated one is not told again on the next).
  const apiKey = generateApiKey();

  test('run once each when one starts again, up to an hour back; older ones are skipped and counted', async () => {
    let h = await startHarness({ db, apiKey, clock, scheduler: true });
    const user = await newUser(h);
    const child = await user.install(BALANCE);
    await h.close();

    // Down from 12:00 to 12:46: 12:15, 12:30 and 12:45 are due (every 15 minutes).
    clock.set(start + 46 * MINUTE);
    h = await startHarness({ db, apiKey, clock, scheduler: true });
    await until(async () => (await executionsOf(h, child)).length === 3, '12:15, 12:30 and 12:45 ran');
    await h.close();

    // Down from 12:46 to 14:20: 12:47…13:20 are over an hour old (skipped), 13:30…14:15 run.
    clock.set(start + (2 * 60 + 20) * MINUTE);
    h = await startHarness({ db, apiKey, clock, scheduler: true });
    try {
      await until(async () => (await executionsOf(h, child)).length === 7, '13:30, 13:45, 14:00 and 14:15 ran');
      const metrics = await (
        await fetch(`${h.service.url}/metrics`, { headers: { Authorization: `Bearer ${h.service.apiKey}` } })
      ).text();
      assert.match(metrics, /^forge_scheduler_minutes_skipped_total 34$/m);
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal((await executionsOf(h, child)).length, 7, 'no minute ran twice');
    } finally {
      await h.close();
    }
  });
});

describe('a graceful stop', () => {
  let slow: Server;
  let reached: () => void;
  const reachedApi = new Promise<void>((resolve) => (reached = resolve));
  before(async () => {
    // An app that never answers: the run waits on it until the stop cuts it short.
    slow = createServer(() => reached());
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  });
  after(() => {
    slow.closeAllConnections();
    slow.close();
  });

  test('gives a run that did not finish in its grace back to the queue; the next instance stores it once', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'forge-stop-')), 'forge.db');
    const apiKey = generateApiKey();
    const first = await startHarness({
      db,
      apiKey,
      stopGraceMs: 200,
      sandboxUrl: `http://127.0.0.1:${(slow.address() as AddressInfo).port}`,
    });
    const user = await newUser(first);
    const child = await user.install(PAYMENTS);
    const accepted = await post(await hookOf(first, child), {}, { amount: 500, customer: { name: 'Ada' } });
    assert.equal(accepted.status, 202);
    await reachedApi;
    await first.close();

    const second = await startHarness({ db, apiKey });
    try {
      await until(async () => (await executionsOf(second, child)).length === 1, 'the run was taken up');
      const [run] = await executionsOf(second, child);
      assert.equal(run!.executionId, accepted.body.executionId, 'under the id the sender was given');
      assert.equal(run!.finished, true);
      const errors = await second.api('GET', `/workflow/${child}/errors`, undefined, user.token);
      assert.deepEqual(errors.body.errors, [], 'the stop was not recorded as a failure');
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal((await executionsOf(second, child)).length, 1, 'stored once');
    } finally {
      await second.close();
    }
  });
});
