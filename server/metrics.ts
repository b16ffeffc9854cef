import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Store } from './store/store.js';

/**
 * The service's Prometheus metrics (prom-client), served as text on GET /metrics with the API
 * key. One registry per service, so several services in one process (the tests) do not mix
 * their counts. docs/operations.md says what each one means.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly requestDuration = new Histogram({
    name: 'forge_http_request_duration_seconds',
    help: 'Time from a request to its answer, by method, route (the pattern, not the path) and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly runsStarted = new Counter({
    name: 'forge_runs_started_total',
    help: 'Workflow runs started, by trigger (webhook, schedule).',
    labelNames: ['trigger'] as const,
    registers: [this.registry],
  });

  readonly runsFinished = new Counter({
    name: 'forge_runs_finished_total',
    help: 'Workflow runs finished, by trigger and outcome (succeeded, failed).',
    labelNames: ['trigger', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly blockDuration = new Histogram({
    name: 'forge_block_duration_seconds',
    help: 'Time one block of a run took, by block type and outcome (succeeded, failed).',
    labelNames: ['type', 'outcome'] as const,
    buckets: [0.001, 0.005, 0.025, 0.1, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly deliveries = new Counter({
    name: 'forge_deliveries_total',
    help: 'Attempts to deliver an error log entry to the host, by channel (webhook, eventBus) and outcome (delivered, failed).',
    labelNames: ['channel', 'outcome'] as const,
    registers: [this.registry],
  });

  constructor(store: Store) {
    collectDefaultMetrics({ register: this.registry });
    // The outbox is the service's job queue: read when scraped, not kept up to date on each change.
    new Gauge({
      name: 'forge_delivery_queue_pending',
      help: 'Error deliveries waiting in the outbox (due or backing off), by channel.',
      labelNames: ['channel'] as const,
      registers: [this.registry],
      async collect() {
        for (const channel of ['webhook', 'eventBus']) {
          this.set({ channel }, (await store.deliveries.backlog(channel)).pending);
        }
      },
    });
  }
}
