import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { type Clock, systemClock } from './clock.js';
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
    help: 'Attempts to deliver an error log entry to the host, by channel (webhook, eventBus) and outcome (delivered, failed, dead-lettered: failed its last allowed attempt, lease-lost: another instance had taken it over).',
    labelNames: ['channel', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly tokenRefreshes = new Counter({
    name: 'forge_token_refreshes_total',
    help: 'OAuth token refreshes, by integration and outcome: refreshed (the provider gave a new token), reused (another run or instance had just refreshed it), failed (a network error, timeout or 5xx: the refresh token is kept), broken (the provider refused the grant).',
    labelNames: ['integration', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly connectionsBroken = new Counter({
    name: 'forge_connections_broken_total',
    help: "Users' connections marked broken, by integration: the provider refused the grant (invalid_grant, invalid_client), so only connecting again helps.",
    labelNames: ['integration'] as const,
    registers: [this.registry],
  });

  /** The engine's runs and scheduler backlog, read at scrape time: set once the engine exists. */
  engine:
    | { schedulerBacklog(): { minutes: number; oldestMinute: number | undefined }; runsInProgress(): number }
    | undefined;

  constructor(store: Store, clock: Clock = systemClock) {
    collectDefaultMetrics({ register: this.registry });
    const metrics = this;
    const registers = [this.registry];
    // The pool's use: registered before the gauges that query the database: prom-client starts every collect at
    // once, in this order, so the pool is read before the scrape's own query takes a connection.
    const pool = store.poolUse;
    new Gauge({
      name: 'forge_db_connections_in_use',
      help: 'Database connections the service holds now (a query or transaction in progress). PostgreSQL: of the pool (forge_db_connections_max); SQLite: its one connection.',
      registers,
      collect() {
        this.set(pool?.inUse ?? 0);
      },
    });
    new Gauge({
      name: 'forge_db_connections_waiting',
      help: 'Queries waiting for a database connection: the pool is exhausted (PostgreSQL), or a transaction holds the one connection (SQLite).',
      registers,
      collect() {
        this.set(pool?.waiting ?? 0);
      },
    });
    new Gauge({
      name: 'forge_db_connections_max',
      help: 'Database connections the service opens at most: --db-pool-size on PostgreSQL, 1 on SQLite.',
      registers,
      collect() {
        this.set(pool?.size ?? 0);
      },
    });
    // The queues are read when scraped, not kept up to date on each change. The outbox is the
    // service's job queue: one delivery per error entry and channel.
    // One query per scrape for both outbox gauges: the first collected reads, the second reuses it.
    let queue: ReturnType<Store['deliveries']['queue']> | undefined;
    const channelOf = async (channel: string) => (await queue)?.find((row) => row.channel === channel);
    new Gauge({
      name: 'forge_delivery_queue_pending',
      help: 'Error deliveries waiting in the outbox (due, backing off or being attempted), by channel.',
      labelNames: ['channel'] as const,
      registers,
      async collect() {
        queue = store.deliveries.queue();
        for (const channel of DELIVERY_CHANNELS) this.set({ channel }, (await channelOf(channel))?.pending ?? 0);
      },
    });
    new Gauge({
      name: 'forge_delivery_queue_oldest_age_seconds',
      help: 'How long ago the error entry of the oldest delivery still waiting in the outbox was recorded, by channel (0: none waits).',
      labelNames: ['channel'] as const,
      registers,
      async collect() {
        queue ??= store.deliveries.queue();
        for (const channel of DELIVERY_CHANNELS) {
          const oldestAt = (await channelOf(channel))?.oldestAt;
          this.set({ channel }, oldestAt ? Math.max(0, (clock.now() - Date.parse(oldestAt)) / 1000) : 0);
        }
        queue = undefined;
      },
    });
    new Gauge({
      name: 'forge_scheduler_minutes_pending',
      help: 'Scheduled minutes due whose tick has not finished in this instance: running, waiting to be tried again after the database failed, or not started yet because the event loop lagged.',
      registers,
      collect() {
        this.set(metrics.engine?.schedulerBacklog().minutes ?? 0);
      },
    });
    new Gauge({
      name: 'forge_scheduler_oldest_pending_minute_age_seconds',
      help: 'How far behind the scheduler is: seconds since the oldest of those minutes began (0: none is pending).',
      registers,
      collect() {
        const oldest = metrics.engine?.schedulerBacklog().oldestMinute;
        this.set(oldest === undefined ? 0 : Math.max(0, (clock.now() - oldest) / 1000));
      },
    });
    new Gauge({
      name: 'forge_runs_in_progress',
      help: 'Workflow runs in progress in this instance (webhook and scheduled).',
      registers,
      collect() {
        this.set(metrics.engine?.runsInProgress() ?? 0);
      },
    });
  }
}

const DELIVERY_CHANNELS = ['webhook', 'eventBus'];
