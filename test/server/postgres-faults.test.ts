import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Cluster, startCluster } from '../../scripts/pg-cluster.mjs';
import { BACKEND } from './backend.js';
import { assertProblem, sample, TestService } from './support.js';

// PostgreSQL going away and coming back, on a cluster of this test's own (stopping the suite's
// shared one would fail every other test). Runs in the PostgreSQL pass of the suite.
const skip = BACKEND === 'postgres' ? false : 'runs in the PostgreSQL pass';

describe('PostgreSQL stopped and started again', { skip }, () => {
  let cluster: Cluster;
  let forge: TestService;
  before(async () => {
    cluster = await startCluster();
    forge = await TestService.start({ db: cluster.url });
  });
  after(async () => {
    await forge?.close();
    cluster?.remove();
  });

  test('answers 503 problem documents while it is down, then recovers by itself with nothing lost', {
    timeout: 120_000,
  }, async () => {
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
