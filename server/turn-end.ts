import type { FastifyReply } from 'fastify';

/**
 * The end of a turn of the event loop: what the service does once the sockets that were ready
 * in the turn have been read (`setImmediate` runs after the poll phase). The store's batches
 * start there (turn-batch.ts, write-batch.ts, commit-group.ts), and the turn's answers are
 * written there, after them, with the answers their work makes.
 */

/** An onSend hook's `done`: hands the payload on to Fastify, which writes the answer. */
type Done = (error: null, payload: unknown) => void;

/** Replies, their `done` and payload, in threes, in the order they were answered. */
let waiting: unknown[] = [];
/** The turn's write of the waiting answers, armed by the first of them. */
let waitingWrite: NodeJS.Immediate | undefined;

/**
 * Runs `work` at the end of this turn, before the answers waiting to be written: those its work
 * makes (a read or a commit on SQLite settles in the microtasks right after it) go out with them
 * instead of a turn later.
 */
export function atTurnEnd(work: () => void): void {
  setImmediate(work);
  if (waitingWrite) {
    clearImmediate(waitingWrite);
    waitingWrite = setImmediate(writeWaiting);
  }
}

/**
 * Hands an answer to Fastify at the end of this turn, with every other answer made in the turn,
 * in order.
 *
 * Why: on one machine (the load generator of `npm run bench`, a proxy beside the service) the
 * kernel wakes the reader of each answer written while it sleeps, in the writer's own time: a
 * fifth to a third of the CPU of a user-token read was that wake-up, paid again for each answer
 * that came out while the reader had gone back to sleep. Written together, the answers of a turn
 * find it awake after the first (issue 29; docs/design-notes.md). An answer waits at most for the
 * requests that arrived with it; alone, for the rest of its turn. Its bytes do not change.
 */
export function writeAtTurnEnd(reply: FastifyReply, done: Done, payload: unknown): void {
  waiting.push(reply, done, payload);
  waitingWrite ??= setImmediate(writeWaiting);
}

function writeWaiting(): void {
  waitingWrite = undefined;
  const written = waiting;
  waiting = [];
  for (let i = 0; i < written.length; i += 3) {
    const reply = written[i] as FastifyReply;
    try {
      (written[i + 1] as Done)(null, written[i + 2]);
    } catch (error) {
      // Fastify's write threw (it does not, short of a bug): that answer is lost, never the
      // others, and its client sees the connection end rather than wait.
      reply.log.error({ err: error }, 'answer could not be written');
      reply.raw.destroy();
    }
  }
}
