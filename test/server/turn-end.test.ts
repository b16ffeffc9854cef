/**
 * The answers of a turn of the event loop are written together at its end (server/turn-end.ts):
 * each still reaches its own caller, in order, and the answers that the store's end-of-turn work
 * makes go out in that same turn.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import type { FastifyReply } from 'fastify';
import { atTurnEnd, writeAtTurnEnd } from '../../server/turn-end.js';
import { API, sample, TestService } from './support.js';

let forge: TestService;
before(async () => {
  forge = await TestService.start();
});
after(() => forge.close());

test('requests that arrive together each get their own answer', async () => {
  const users = await Promise.all(Array.from({ length: 10 }, (_, i) => forge.newUser(`Caller ${i}`)));
  // Each user's own row and modal setup, all sent at once on connections of their own.
  const answers = await Promise.all(
    users.flatMap(({ userId, token }) => [
      forge.asUser(token, 'GET', `/user/${userId}`),
      forge.asUser(token, 'GET', `/setup?workflowId=${sample.parent.workflowId}`),
    ]),
  );
  users.forEach(({ userId }, i) => {
    const [user, setup] = [answers[2 * i]!, answers[2 * i + 1]!];
    assert.equal(user.status, 200, user.text);
    assert.equal(user.body._id, userId);
    assert.equal(user.body.fullName, `Caller ${i}`);
    assert.equal(setup.status, 200, setup.text);
    assert.deepEqual(
      setup.body.workflows.map((w: { workflowId: string }) => w.workflowId),
      [sample.parent.workflowId],
    );
  });
});

test('pipelined requests on one connection are answered in the order sent', async () => {
  const users = await Promise.all(Array.from({ length: 5 }, (_, i) => forge.newUser(`Piped ${i}`)));
  const { hostname, port } = new URL(forge.url);
  const socket = connect(Number(port), hostname);
  // Every request written before any answer is read: the service reads them in one turn.
  socket.write(
    users
      .map(
        ({ userId, token }) =>
          `GET ${API}/user/${userId} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${token}\r\n\r\n`,
      )
      .join(''),
  );
  const bodies = await readAnswers(socket, users.length);
  socket.destroy();
  assert.deepEqual(
    bodies.map((body) => JSON.parse(body)._id),
    users.map(({ userId }) => userId),
  );
});

test("an answer made by the store's end-of-turn work is written in that turn, not the next", async () => {
  const written: string[] = [];
  const reply = { log: { error() {} }, raw: { destroy() {} } } as unknown as FastifyReply;
  const done = (_error: null, payload: unknown) => written.push(payload as string);
  let seenNextTurn: string[] | undefined;
  // A request answered while the turn's sockets are read, then one that waits on a batch of the
  // store (a read or commit started at the turn's end, whose result settles in a microtask).
  writeAtTurnEnd(reply, done, 'answered at once');
  atTurnEnd(() => {
    // Queued while the turn's end runs: Node runs it in the next turn.
    setImmediate(() => (seenNextTurn = [...written]));
    void Promise.resolve().then(() => writeAtTurnEnd(reply, done, 'answered by the batch'));
  });
  assert.deepEqual(written, [], 'nothing is written before the turn ends');
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(seenNextTurn, ['answered at once', 'answered by the batch']);
});

/** The bodies of `count` HTTP/1.1 answers with a Content-Length, read from the socket in order. */
function readAnswers(socket: ReturnType<typeof connect>, count: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const bodies: string[] = [];
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        const headEnd = buffered.indexOf('\r\n\r\n');
        if (headEnd === -1) return;
        const head = buffered.subarray(0, headEnd).toString('latin1');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1]);
        assert.ok(head.startsWith('HTTP/1.1 200'), head);
        if (buffered.length < headEnd + 4 + length) return;
        bodies.push(buffered.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8'));
        buffered = buffered.subarray(headEnd + 4 + length);
        if (bodies.length === count) return resolve(bodies);
      }
    });
  });
}
