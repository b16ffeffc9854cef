/**
 * Issue 27, item 9 on PostgreSQL: a webhook caller who waits for the run (`Prefer: wait`), whose
 * job the accepting instance takes, is accepted with `synchronous_commit` off; every answer that
 * promises the run without being the stored run (a 202 after a wait that timed out) comes only
 * once that acceptance is flushed (docs/design-notes.md). Real service, real PostgreSQL, real HTTP.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { type Harness, hookOf, newUser, PAYMENTS, post, startHarness, until } from './engine-support.js';

/** Runs `statement` on the test's PostgreSQL server over a connection of its own. */
async function serverSql(statement: string): Promise<void> {
  const client = new pg.Client(process.env.FORGE_TEST_POSTGRES);
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

describe('on PostgreSQL a waiting caller is accepted without a flush of its own (issue 27, item 9)', {
  skip: !process.env.FORGE_TEST_POSTGRES && 'PostgreSQL only: SQLite commits as before',
}, () => {
  let h: Harness;
  let app: Server;
  const held: Array<() => void> = [];
  before(async () => {
    // The app the run calls answers only when the test lets it, so a wait can time out.
    app = createServer((_request, response) =>
      held.push(() => response.writeHead(200, { 'Content-Type': 'application/json' }).end('{}')),
    );
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    // The test cluster runs without durability (scripts/pg-cluster.mjs); the service's sessions
    // get PostgreSQL's default, synchronous commits, as in production.
    await serverSql('ALTER ROLE CURRENT_USER SET synchronous_commit = on');
    h = await startHarness({ sandboxUrl: `http://127.0.0.1:${(app.address() as AddressInfo).port}` });
    // Every job pg-boss adds, seen from inside the transaction that adds it: that transaction's
    // synchronous_commit, its id, and where the WAL was when it added the job.
    await sql`CREATE TABLE test_job_adds (execution_id text, sync text, xid text, lsn pg_lsn)`.execute(
      h.service.store.db,
    );
    await sql`CREATE FUNCTION test_job_added() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        INSERT INTO test_job_adds VALUES (NEW.data->>'executionId', current_setting('synchronous_commit'),
          pg_current_xact_id()::text, pg_current_wal_insert_lsn());
        RETURN NULL; END $$`.execute(h.service.store.db);
    await sql`CREATE TRIGGER test_job_added AFTER INSERT ON pgboss.job FOR EACH ROW EXECUTE FUNCTION test_job_added()`.execute(
      h.service.store.db,
    );
    await sql`CREATE EXTENSION IF NOT EXISTS pg_walinspect`.execute(h.service.store.db);
  });
  after(async () => {
    for (const answer of held.splice(0)) answer();
    await sql`ALTER SYSTEM RESET wal_writer_delay`.execute(h.service.store.db);
    await sql`SELECT pg_reload_conf()`.execute(h.service.store.db);
    await h.close();
    await serverSql('ALTER ROLE CURRENT_USER RESET synchronous_commit');
    app.closeAllConnections();
    app.close();
  });

  const addedFor = async (executionId: string) =>
    (
      await sql<{ sync: string; xid: string; lsn: string }>`
        SELECT sync, xid, lsn FROM test_job_adds WHERE execution_id = ${executionId}`.execute(h.service.store.db)
    ).rows;

  test('only the accepting transaction of a caller who waits commits with synchronous_commit off', async () => {
    const user = await newUser(h);
    const child = await user.install(PAYMENTS);
    const hook = await hookOf(h, child);
    const waiting = post(hook, { Prefer: 'wait=20' }, { amount: 150, customer: { name: 'B' } });
    await until(async () => held.length === 1, 'the waiting call runs');
    held.shift()!();
    const waited = await waiting;
    assert.equal(waited.status, 200, JSON.stringify(waited.body));
    const notWaiting = await post(hook, {}, { amount: 150, customer: { name: 'B' } });
    assert.equal(notWaiting.status, 202, JSON.stringify(notWaiting.body));
    await until(async () => held.length === 1, 'the other call runs');
    held.shift()!();
    assert.deepEqual(
      (await addedFor(waited.body.executionId)).map((add) => add.sync),
      ['off'],
    );
    assert.deepEqual(
      (await addedFor(notWaiting.body.executionId)).map((add) => add.sync),
      ['on'],
    );
  });

  test('callers who wait beyond the runs an instance takes from the queue run at once, taken as added', async () => {
    const user = await newUser(h);
    const child = await user.install(PAYMENTS);
    const hook = await hookOf(h, child);
    // More than the eight runs an instance takes from the queue at once (RUN_CONCURRENCY): each
    // caller holds its request anyway, and its job is added taken rather than queued and fetched.
    const calls = Array.from({ length: 12 }, () =>
      post(hook, { Prefer: 'wait=20' }, { amount: 150, customer: { name: 'B' } }),
    );
    await until(async () => held.length === 12, 'all twelve runs call the app at once');
    for (const release of held.splice(0)) release();
    const answers = await Promise.all(calls);
    assert.deepEqual(
      answers.map((answer) => answer.status),
      Array.from({ length: 12 }, () => 200),
    );
    // Created and started at one instant (pg-boss's job_now()): one transaction added and took it.
    const { rows } = await sql<{ taken: number; jobs: number }>`
      SELECT count(*) FILTER (WHERE started_on = created_on)::int AS taken, count(*)::int AS jobs
      FROM pgboss.job WHERE data->>'workflowId' = ${child}`.execute(h.service.store.db);
    assert.deepEqual(rows, [{ taken: 12, jobs: 12 }]);
  });

  test('a wait that times out answers 202 only once the accepting commit is flushed', async () => {
    // The WAL writer would flush the commit within its 200 ms by itself; at 10 s it is the answer's
    // own flush that has to.
    await sql`ALTER SYSTEM SET wal_writer_delay = '10s'`.execute(h.service.store.db);
    await sql`SELECT pg_reload_conf()`.execute(h.service.store.db);
    const user = await newUser(h);
    const child = await user.install(PAYMENTS);
    const answer = await post(await hookOf(h, child), { Prefer: 'wait=1' }, { amount: 150, customer: { name: 'B' } });
    // Where the flushed WAL ends as the 202 arrives, before anything else is written.
    const { rows } = await sql<{ flushed: string }>`SELECT pg_current_wal_flush_lsn()::text AS flushed`.execute(
      h.service.store.db,
    );
    const flushed = rows[0]!.flushed;
    assert.equal(answer.status, 202, JSON.stringify(answer.body));
    const [added] = await addedFor(answer.body.executionId);
    assert.equal(added?.sync, 'off', 'the call was accepted without waiting for its flush');
    const reached = await sql<{ past: boolean }>`SELECT ${flushed}::pg_lsn >= ${added!.lsn}::pg_lsn AS past`.execute(
      h.service.store.db,
    );
    assert.equal(reached.rows[0]!.past, true, `the WAL flushed (up to ${flushed}) reaches the accepting transaction`);
    // The accepting transaction's commit record lies in the WAL flushed by the time of the answer.
    const commits = await sql<{ commit: string }>`
      SELECT start_lsn::text AS commit FROM pg_get_wal_records_info(${added!.lsn}::pg_lsn, ${flushed}::pg_lsn)
      WHERE resource_manager = 'Transaction' AND record_type LIKE 'COMMIT%' AND xid::text = ${added!.xid}`.execute(
      h.service.store.db,
    );
    assert.equal(commits.rows.length, 1, `the accepting commit (xid ${added!.xid}) is flushed (up to ${flushed})`);
    for (const release of held.splice(0)) release();
  });
});
