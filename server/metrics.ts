import { Counter, collectDefaultMetrics, Gauge, Histogram, type Metric, Registry } from 'prom-client';
import { type Clock, systemClock } from './clock.js';
import type { Store } from './store/store.js';

/**
 * The service's Prometheus metrics (prom-client), served as text on GET /metrics with the API
 * key. One registry per service, so several services in one process (the tests) do not mix
 * their counts. docs/operations.md says what each one means.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly requestDuration = new RequestDurations(this.registry);

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

  readonly minutesSkipped = new Counter({
    name: 'forge_scheduler_minutes_skipped_total',
    help: 'Scheduled minutes not run because no instance ran for longer than the catch-up window (an hour) after them.',
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

/** One method, route and status: its counts per bucket (not cumulative; the last is over the top bound). */
interface DurationSeries {
  labels: { method: string; route: string; status: number };
  counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * `forge_http_request_duration_seconds`: the request duration histogram, observed for every
 * request. prom-client's `Histogram.observe` cost 0.7–1.6 µs a call alone, and its hook 5.4 µs
 * a request in the service under load (issue 28's 5% budget; docs/design-notes.md): it makes a
 * key string from the labels and finds the series by it, and a bucket by a number-keyed
 * property, each time; a child from `labels()` does the same. This keeps each series where three
 * map lookups find it (method, route pattern, status: strings and a number the service already
 * holds) and counts it in an array: 0.13–0.19 µs alone, 1.7 µs for the hook. It is registered in the
 * service's prom-client registry as a metric that prom-client formats when scraped, with the
 * values prom-client's Histogram gives (`getForPromString`, `get`), so /metrics reads the same.
 */
class RequestDurations {
  readonly name = 'forge_http_request_duration_seconds';
  readonly help = 'Time from a request to its answer, by method, route (the pattern, not the path) and status.';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly labelNames = ['method', 'route', 'status'];
  private readonly bounds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
  /** By method, then route, then status. */
  private found = new Map<string, Map<string, Map<number, DurationSeries>>>();
  /** In the order first observed, as prom-client lists them. */
  private series: DurationSeries[] = [];

  constructor(registry: Registry) {
    // prom-client's registry reads a metric's name, help, type and values (getForPromString or get);
    // its TypeScript types name only its own metric classes.
    registry.registerMetric(this as unknown as Metric);
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    let byRoute = this.found.get(method);
    if (!byRoute) this.found.set(method, (byRoute = new Map()));
    let byStatus = byRoute.get(route);
    if (!byStatus) byRoute.set(route, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (!series) {
      series = {
        labels: { method, route, status },
        counts: new Float64Array(this.bounds.length + 1),
        sum: 0,
        count: 0,
      };
      byStatus.set(status, series);
      this.series.push(series);
    }
    let bucket = 0;
    while (bucket < this.bounds.length && seconds > this.bounds[bucket]!) bucket++;
    series.counts[bucket]! += 1;
    series.sum += seconds;
    series.count += 1;
  }

  /** The values as prom-client's Histogram lists them for the text format: the series' labels as shared labels. */
  async getForPromString() {
    const name = this.name;
    const values = this.series.flatMap(({ labels, counts, sum, count }) => {
      let below = 0;
      return [
        ...this.bounds.map((le, i) => {
          below += counts[i]!;
          return { labels: { le }, sharedLabels: labels, value: below, metricName: `${name}_bucket`, exemplar: null };
        }),
        { labels: { le: '+Inf' }, sharedLabels: labels, value: count, metricName: `${name}_bucket`, exemplar: null },
        { labels: {}, sharedLabels: labels, value: sum, metricName: `${name}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels: labels, value: count, metricName: `${name}_count`, exemplar: undefined },
      ];
    });
    return { name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The same with each value's labels whole (getMetricsAsJSON). */
  async get() {
    const data = await this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ sharedLabels, labels, ...value }) => ({
        ...value,
        labels: { ...labels, ...sharedLabels },
      })),
    };
  }

  reset(): void {
    this.found = new Map();
    this.series = [];
  }
}
