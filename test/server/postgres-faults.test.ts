import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Cluster, startCluster } from '../../scripts/pg-cluster.mjs';
import { BACKEND } from './backend.js';
import { assertProblem, sample, TestService } from './support.js';

// PostgreSQL going away and coming back, on a cluster of this test's own (stopping the suite's
// shared one would fail every other test). Runs in the PostgreSQL pass of the suite.
const skip = BACKEND === 'postgres' ? false : 'runs in the PostgreSQL pass';

/** A cluster of the describe's own and a service on it, for the tests of one describe. */
function serviceOnOwnCluster(options: { scheduler?: boolean } = {}) {
  const own = {} as { cluster: Cluster; forge: TestService };
  before(async () => {
    own.cluster = await startCluster();
    own.forge = await TestService.start({ db: own.cluster.url, ...options });
  });
  after(async () => {
    await own.forge?.close();
    own.cluster?.remove();
  });
  return own;
}

describe('PostgreSQL stopped and started again', { skip }, () => {
  const own = serviceOnOwnCluster();

  test('answers 503 problem documents while it is down, then recovers by itself with nothing lost', {
    timeout: 120_000,
  }, async () => {
    const { cluster, forge } = own;
    const saved = await forge.asHost('POST', '/user', { name: 'Before Stop', email: 'before-stop@example.com' });
    assert.equal(saved.status, 200, saved.text);
    const { userId, token, childId } = await forge.userWithChild();
    const patched = await forge.asUser(token, 'PATCH', `/workflow/${childId}/variables/${sample.variablesBlock.id}`, {
      [sample.number.name]: 77,
    });
    assert.equal(patched.status, 200, patched.text);

    cluster.stop();
    for (const [method, path] of [
      ['GET', '/user'],
      ['POST', '/user'],
      ['GET', `/workflow/${childId}`],
    ] as const) {
      const answer = await forge.asHost(
        method,
        path,
        method === 'POST' ? { name: 'During', email: 'during@example.com' } : undefined,
      );
      assertProblem(answer, 503, { detail: /cannot reach its database.*Retry/ });
      assert.equal(answer.headers.get('retry-after'), '5');
    }
    assertProblem(await forge.request('GET', `${forge.url}/readyz`), 503, { detail: /database/ });
    assert.equal((await fetch(`${forge.url}/healthz`)).status, 200, 'the process itself is still up');

    cluster.start();
    // The pool makes new connections on the next query; no restart of the service.
    assert.equal((await forge.request('GET', `${forge.url}/readyz`)).status, 200);
    const users = (await forge.asHost('GET', '/user')).body.data as Array<{ _id: string; email: string }>;
    assert.ok(users.some((u) => u._id === saved.body.userId && u.email === 'before-stop@example.com'));
    assert.ok(users.some((u) => u._id === userId));
    assert.ok(!users.some((u) => u.email === 'during@example.com'), 'a write answered 503 was saved');
    const child = await forge.asUser(token, 'GET', `/workflow/${childId}`);
    assert.equal(child.status, 200, child.text);
    assert.match(child.text, /77/);
    const after = await forge.asHost('POST', '/user', { name: 'After Start', email: 'after-start@example.com' });
    assert.equal(after.status, 200, after.text);
  });
});

describe('PostgreSQL restarted six times under load', { skip }, () => {
  // The minute scheduler and the delivery loop run too: their queries meet the outages as well.
  const own = serviceOnOwnCluster({ scheduler: true });

  test('the service stays up, answers only 2xx, 409 or 503 database-unavailable, and is ready as soon as it is back', {
    timeout: 240_000,
  }, async () => {
    const { cluster, forge } = own;
    const { token, userId } = await forge.newUser();
    for (const integration of sample.parent.integrations) await forge.connect(userId, integration);
    const statuses = new Map<number, number>();
    const others: string[] = [];
    let running = true;
    // Reads, writes and transactions (install and uninstall) at once, so the server's shutdown
    // meets connections that are idle in the pool, checked out between queries, and mid-query.
    const worker = async (n: number) => {
      for (let i = 0; running; i++) {
        const answer = await [
          () => forge.asHost('POST', '/user', { name: 'Load', email: `load-${n}-${i}@example.com` }),
          () => forge.asHost('GET', '/user'),
          async () => {
            const installed = await forge.asUser(token, 'POST', `/workflow/${sample.parent.workflowId}/install`, {});
            if (installed.status !== 201) return installed;
            return forge.asUser(token, 'DELETE', `/workflow/${installed.body.workflowId}`);
          },
          () => forge.asUser(token, 'GET', '/workflow-health'),
        ][i % 4]!().catch((error: Error) => ({ status: 0, text: error.message, body: undefined }));
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (![200, 201, 409, 503].includes(answer.status)) others.push(`${answer.status} ${answer.text.slice(0, 200)}`);
        if (answer.status === 503) assert.equal(answer.body?.type?.endsWith('database-unavailable'), true, answer.text);
      }
    };
    const load = Promise.all([1, 2, 3, 4, 5, 6].map(worker));
    for (let round = 0; round < 6; round++) {
      await new Promise((resolve) => setTimeout(resolve, 400));
      cluster.stop();
      await new Promise((resolve) => setTimeout(resolve, 300));
      assertProblem(await forge.request('GET', `${forge.url}/readyz`), 503, { detail: /database/ });
      cluster.start();
      // `pg_ctl -w start` returns once the server accepts connections: the next check is ready.
      assert.equal((await forge.request('GET', `${forge.url}/readyz`)).status, 200, `ready after restart ${round + 1}`);
    }
    running = false;
    await load;
    assert.deepEqual(others, [], `answers other than 2xx, 409 or 503: ${JSON.stringify([...statuses])}`);
    assert.ok((statuses.get(503) ?? 0) > 0, 'some requests met the database down');
    assert.ok((statuses.get(200) ?? 0) > 0);
    assert.equal((await fetch(`${forge.url}/healthz`)).status, 200);
  });
});
