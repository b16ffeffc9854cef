import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Delivery } from '../engine/delivery.js';
import type { Engine } from '../engine/engine.js';
import type { OptionsReader } from '../engine/options.js';
import type { JobQueue } from '../store/jobs.js';
import type { Store } from '../store/store.js';

export interface ShutdownOptions {
  store: Store;
  engine: Engine;
  delivery: Delivery;
  jobs: JobQueue;
  /** Its connections to the apps are let go. */
  options: OptionsReader;
  /** How long runs in progress get to finish (Engine.stop). */
  stopGraceMs?: number;
  /** Set once the server closes: answers then say `Connection: close` (problems.ts's onSend hook). */
  closing: ClosingState;
}

export interface ClosingState {
  closing: boolean;
}

/**
 * What `app.close()` stops once the server has answered the requests in flight: the scheduler
 * and the runs in progress (given their grace, then handed back to the queue), error deliveries,
 * the job queue, the connections to apps kept for settings' choices, then the database they use. Fastify runs onClose
 * hooks last-added first, so the store's is added first.
 */
async function shutdown(
  app: FastifyInstance,
  { store, engine, delivery, jobs, options, stopGraceMs, closing }: ShutdownOptions,
): Promise<void> {
  // Node's server.close() closes the connections that are idle when it is called and then waits
  // for the rest; a keep-alive connection whose request was still in flight would stay open for
  // Fastify's keep-alive timeout (72 s) after its answer, holding the shutdown that long. An
  // answer sent while closing says `Connection: close` (set by the answers' one onSend hook,
  // problems.ts), so its connection ends with it.
  app.addHook('preClose', async () => {
    closing.closing = true;
  });
  app.addHook('onClose', () => store.close());
  app.addHook('onClose', () => jobs.close());
  app.addHook('onClose', () => delivery.stop());
  app.addHook('onClose', () => engine.stop(stopGraceMs));
  app.addHook('onClose', () => options.close());
}

export default fp(shutdown, { name: 'forge-shutdown', fastify: '5.x' });
