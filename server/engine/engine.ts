import { randomBytes, randomUUID } from 'node:crypto';
import type { BlockResult, ErrorKind, ErrorLogEntry, ExecutionLogEntry, VariableValue } from 'forge-embed/client';
import { type Catalog, type CatalogBlock, type CatalogWorkflow, currentValue } from '../catalog/catalog.js';
import { type Clock, systemClock } from '../clock.js';
import { type Logger, silentLogger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { SecretBox } from '../secrets.js';
import { type Job, type JobData, type JobQueue, jobId, LEASE_RENEW_MS } from '../store/jobs.js';
import { hourOf } from '../store/logs.js';
import type { ChildRow, Store, StoreTransaction } from '../store/store.js';
import { type SpanHandle, type Tracing, traced } from '../trace.js';
import { BlockFailure, runnerFor, TRIGGER_TYPES, type Trigger } from './blocks.js';
import type { Connections } from './connections.js';
import { type CronSchedule, CronSyntaxError, parseCron } from './cron.js';
import type { Delivery } from './delivery.js';
import { ExpressionError, type Scope } from './expressions.js';
import type { HttpRetryPolicy } from './http-retry.js';

export interface EngineOptions {
  store: Store;
  catalog: Catalog;
  secrets: SecretBox;
  delivery: Delivery;
  /** The users' connections to apps: credentials placed, OAuth tokens kept fresh. */
  connections: Connections;
  /** The values of `{{env.<NAME>}}` in block parameters. */
  env: Record<string, string>;
  /** How long an HTTP block waits for an answer. Default 10 s. */
  httpTimeoutMs?: number;
  /** When an HTTP block tries a request again (server/engine/http-retry.ts); unset fields keep their default. */
  httpRetry?: Partial<HttpRetryPolicy>;
  /** What "now" is for the scheduler. Default: the system clock. */
  clock?: Clock;
  /** The durable queue every run is a job on (server/store/jobs.ts). */
  jobs: JobQueue;
  /** The service log (server/log.ts); default none. */
  logger?: Logger;
  /** Counts runs and times blocks (server/metrics.ts); default none. */
  metrics?: Metrics;
  /** Spans for runs, blocks and HTTP calls (server/trace.ts); default none. */
  tracing?: Tracing;
}

/** What an execution ended as: its log entry, and its error log entry when it failed. */
export interface ExecutionOutcome {
  /** The child workflow that ran. */
  workflowId: string;
  execution: ExecutionLogEntry;
  error?: ErrorLogEntry;
  /** False when the execution was not stored: its workflow was deleted while it ran. */
  stored: boolean;
}

/** Run jobs one instance runs at the same time, so one slow workflow does not hold up the rest. */
const RUN_CONCURRENCY = 8;

/**
 * Runs an instance may have at once when the calls beyond RUN_CONCURRENCY are callers waiting for
 * their run (`Prefer: wait`): each holds its request open anyway, as every webhook call did before
 * the queue, so it runs at once on the instance that accepted it, its job added taken, rather than
 * queued behind the room and fetched by a transaction of its own (issue 27, item 9: under the
 * bench's 10 connections two thirds of the calls took that path, 2.4 WAL flushes a call).
 */
const RUN_CONCURRENCY_WITH_WAITING = 4 * RUN_CONCURRENCY;

/** How often an idle instance looks for jobs that other instances added (its own it starts at once). */
const POLL_MS = 500;

const MINUTE = 60_000;

/**
 * Minutes missed while no instance was running (or whose scheduler fell behind: a stalled event
 * loop, a suspended machine, a test clock that jumped) still run, each once, up to this far back;
 * older ones are skipped, logged and counted (forge_scheduler_minutes_skipped_total).
 */
export const CATCH_UP_MINUTES = 60;

/** How long runs in progress get to finish when the service stops (ServiceOptions.stopGraceMs). */
export const DEFAULT_STOP_GRACE_MS = 10_000;

/** How soon a minute whose jobs could not be added is tried again. */
const RETRY_FAILED_TICK_MS = 5_000;

/** How soon a run whose attempt broke on the database is tried again. */
const RETRY_FAILED_RUN_MS = 2_000;

/**
 * A run taken this many times without being stored (its instance died each time, or the database
 * went away each time) is not tried again: it is stored as a failed execution with an error entry.
 */
export const MAX_RUN_ATTEMPTS = 10;

/** The setting that holds the last minute whose jobs were added, so a restart catches up from it. */
const SCHEDULED_THROUGH = 'scheduler.scheduledThrough';

/** How long an Idempotency-Key stands for the execution it started. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;

/** A run's result was stored elsewhere: another instance took its job after this one lost the lease. */
class JobLost extends Error {}
/** A run cut short by a stop: its job goes back to the queue, nothing is stored. */
class RunAbandoned extends Error {}

/**
 * Runs child workflows. Every run is a job on the queue (server/store/jobs.ts): a due minute of
 * a scheduled child (added by each instance's scheduler; its id keeps it to one job) or an
 * accepted webhook call. Any instance's worker takes it, runs it and stores it as an execution
 * log entry in the transaction that marks the job done; a failed run also gets an error log
 * entry, which goes to the host's delivery channels.
 */
export class Engine {
  private readonly options: EngineOptions;
  private readonly clock: Clock;
  private readonly schedules = new Map<string, CronSchedule>();
  /** Aborted when runs in progress are given up (the end of a stop's grace): cuts their HTTP calls. */
  private readonly shutdown = new AbortController();
  /** No new jobs are taken and no new minutes added once this is set. */
  private stopping = false;
  /** Webhook calls being accepted with a run this instance takes at once (acceptWebhook). */
  private accepting = 0;
  private readonly running = new Set<Promise<unknown>>();
  /** The jobs this instance runs: each one's whole handling (its run, storing it, or giving it back). */
  private readonly jobRuns = new Set<Promise<unknown>>();
  private readonly runningJobs = new Map<string, Job>();
  private readonly logger: Logger;
  private timer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private stopWatchingClock: () => void = () => {};
  /** The scheduler's minutes whose jobs are being added, and those waiting to be tried again. */
  private readonly ticking = new Set<number>();
  private readonly failedMinutes = new Set<number>();
  /** The next minute the scheduler has not added yet (undefined: no scheduler). */
  private nextMinute: number | undefined;
  private stopped: Promise<void> | undefined;
  /** Settles once the scheduler read which minutes no instance added before it started. */
  private caughtUp: Promise<void> | undefined;
  private pumping = false;
  private pumpAgain = false;
  /**
   * Whether jobs may wait that this instance could take when one of its runs ends: it added jobs
   * without taking them, or its last take filled all its room. Otherwise a run's end looks for
   * none, which was one more statement and round trip per run (issue 27, item 9); jobs that other
   * instances add, or that come due again, are found by the look every POLL_MS.
   */
  private jobsMayWait = true;
  private takeFailing = false;
  /** Who waits for a job (tick) or an execution (a webhook sender that asked to wait) run here. */
  private readonly jobWaiters = new Map<string, (outcome: ExecutionOutcome | undefined) => void>();
  /** Called with the run's outcome once stored here, or with none when its run here ended without one. */
  private readonly executionWaiters = new Map<string, Set<(outcome: ExecutionOutcome | undefined) => void>>();

  constructor(options: EngineOptions) {
    this.options = options;
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    // A catalog with a bad cron fails on start, not silently at the minute it should have run.
    const problems: string[] = [];
    for (const workflow of options.catalog.all()) {
      const block = scheduleBlock(workflow);
      if (!block) continue;
      try {
        this.schedules.set(workflow.workflowId, parseCron(String(block.parameters.cron ?? '')));
      } catch (error) {
        if (!(error instanceof CronSyntaxError)) throw error;
        problems.push(`workflow ${workflow.workflowId}, block "${block.name}": ${error.message}`);
      }
    }
    if (problems.length > 0) throw new Error(`The catalog has schedules that cannot run:\n  ${problems.join('\n  ')}`);
  }

  /**
   * Starts taking run jobs from the queue: those added here at once, those other instances added
   * within POLL_MS. The leases of the jobs this instance runs are renewed while they run.
   */
  startWorker(): void {
    if (this.stopping || this.pollTimer) return;
    this.pollTimer = setInterval(() => void this.pump(), POLL_MS);
    this.pollTimer.unref();
    this.renewTimer = setInterval(() => {
      this.options.jobs
        .renew([...this.runningJobs.values()])
        .catch((error: unknown) => this.logger.warn({ component: 'worker', err: error }, 'worker: leases not renewed'));
    }, LEASE_RENEW_MS);
    this.renewTimer.unref();
    void this.pump();
  }

  /**
   * Runs the scheduler: adds the jobs of every minute from the one it starts in until `stop()`,
   * and of the minutes no instance added while none ran (from the last one added, up to
   * CATCH_UP_MINUTES back; older ones are skipped, logged and counted).
   */
  startScheduler(): void {
    if (this.stopping) return;
    const clock = this.clock;
    const startMinute = Math.floor(clock.now() / MINUTE) * MINUTE;
    this.nextMinute = startMinute;
    // Minutes whose jobs could not be added (the database went away) are tried again while they
    // are within the catch-up window; a job's id keeps a second try from adding it twice.
    const failed = this.failedMinutes;
    const check = () => {
      clearTimeout(this.timer);
      if (this.stopping) return;
      const now = clock.now();
      const oldest = Math.floor(now / MINUTE) * MINUTE - (CATCH_UP_MINUTES - 1) * MINUTE;
      let nextMinute = this.nextMinute!;
      if (nextMinute < oldest) {
        this.skipped(nextMinute, oldest);
        nextMinute = oldest;
      }
      const minutes = [...failed].filter((minute) => minute >= oldest);
      failed.clear();
      for (; nextMinute <= now; nextMinute += MINUTE) minutes.push(nextMinute);
      this.nextMinute = nextMinute;
      for (const minute of minutes) this.addMinute(minute, check);
      this.timer = setTimeout(check, Math.max(0, nextMinute - clock.now()));
      this.timer.unref();
    };
    // The minutes between the last one any instance added and this start: no instance ran then.
    // Read before this start's own minutes are recorded (enqueueMinute waits for it).
    this.caughtUp = this.options.store.settings
      .get(SCHEDULED_THROUGH)
      .then((stored) => {
        if (stored === undefined || this.stopping) return;
        const oldest = Math.floor(clock.now() / MINUTE) * MINUTE - (CATCH_UP_MINUTES - 1) * MINUTE;
        let minute = Number(stored) + MINUTE;
        if (minute < oldest) {
          this.skipped(minute, oldest);
          minute = oldest;
        }
        for (; minute < startMinute; minute += MINUTE) this.addMinute(minute, check);
      })
      .catch((error: unknown) =>
        this.logger.error({ component: 'scheduler', err: error }, 'scheduler: the minutes missed could not be read'),
      );
    this.stopWatchingClock = clock.onJump(check);
    check();
  }

  /** Adds one minute's jobs in the background; a minute that fails is tried again shortly. */
  private addMinute(minute: number, retry: () => void): void {
    this.ticking.add(minute);
    this.enqueueMinute(minute)
      .then(() => this.pump())
      .catch((error: unknown) => {
        this.logger.error(
          { component: 'scheduler', err: error, minute: new Date(minute).toISOString() },
          'scheduler: a minute could not be added; it is tried again shortly',
        );
        this.failedMinutes.add(minute);
        if (!this.stopping) setTimeout(retry, RETRY_FAILED_TICK_MS).unref();
      })
      .finally(() => this.ticking.delete(minute));
  }

  /** Minutes from `from` to before `to` that are too old to run: logged and counted, not silently dropped. */
  private skipped(from: number, to: number): void {
    const minutes = Math.round((to - from) / MINUTE);
    this.options.metrics?.minutesSkipped.inc(minutes);
    this.logger.warn(
      { component: 'scheduler', skippedMinutes: minutes },
      `scheduler: minutes from ${new Date(from).toISOString()} to ${new Date(to - MINUTE).toISOString()} were missed by over ${CATCH_UP_MINUTES} minutes and are skipped`,
    );
  }

  /**
   * The scheduler's backlog (the metrics): minutes due whose jobs have not been added or run
   * here, whether being added, waiting for a retry, running, or not started (a lagging event loop
   * held the timer back), and the oldest of them.
   */
  schedulerBacklog(): { minutes: number; oldestMinute: number | undefined } {
    const pending = new Set([...this.ticking, ...this.failedMinutes]);
    for (const job of this.runningJobs.values()) if (job.data.kind === 'schedule') pending.add(job.data.minute);
    if (this.nextMinute !== undefined && !this.stopping) {
      for (let minute = this.nextMinute; minute <= this.clock.now(); minute += MINUTE) pending.add(minute);
    }
    return { minutes: pending.size, oldestMinute: pending.size ? Math.min(...pending) : undefined };
  }

  private runsExecution(executionId: string): boolean {
    for (const job of this.runningJobs.values())
      if (job.data.kind === 'webhook' && job.data.executionId === executionId) return true;
    return false;
  }

  /** Runs in progress in this instance. */
  runsInProgress(): number {
    return this.running.size;
  }

  /**
   * Stops: no new minutes are added and no new jobs taken; runs in progress get `graceMs` to
   * finish and be stored; those still running then are cut short and their jobs go back to the
   * queue for another instance (not stored as failed).
   */
  stop(graceMs = DEFAULT_STOP_GRACE_MS): Promise<void> {
    this.stopped ??= this.stopRuns(graceMs);
    return this.stopped;
  }

  private async stopRuns(graceMs: number): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    clearInterval(this.pollTimer);
    this.stopWatchingClock();
    let graceOver: NodeJS.Timeout | undefined;
    const settled = Promise.allSettled([...this.running, ...this.jobRuns]);
    await Promise.race([settled, new Promise((resolve) => (graceOver = setTimeout(resolve, graceMs)))]);
    clearTimeout(graceOver);
    this.shutdown.abort();
    await settled;
    clearInterval(this.renewTimer);
  }

  /**
   * Takes jobs while this instance has room for more runs, and starts each. Called when jobs were
   * added here, when a run ends while jobs may wait (jobsMayWait), and every POLL_MS.
   */
  private async pump(): Promise<void> {
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.pumpAgain = false;
        while (!this.stopping && this.runningJobs.size < RUN_CONCURRENCY) {
          const room = RUN_CONCURRENCY - this.runningJobs.size;
          // Cleared before the take: jobs added while it runs set it again.
          this.jobsMayWait = false;
          const jobs = await this.options.jobs.take(room);
          if (jobs.length === room) this.jobsMayWait = true;
          // Taken as the stop began: back to the queue at once.
          if (this.stopping) await this.options.jobs.release(jobs);
          else for (const job of jobs) this.startJob(job);
          if (jobs.length === 0) break;
        }
      } while (this.pumpAgain && !this.stopping);
      this.takeFailing = false;
    } catch (error) {
      this.jobsMayWait = true;
      // Said once per outage, not at every poll.
      if (!this.takeFailing)
        this.logger.warn({ component: 'worker', err: error }, 'worker: jobs could not be taken; trying again shortly');
      this.takeFailing = true;
    } finally {
      this.pumping = false;
    }
  }

  /** Runs a taken job; `child`, its workflow as the accepting request has just read it, spares reading it again. */
  private startJob(job: Job, child?: ChildRow): void {
    this.runningJobs.set(job.id, job);
    const run = this.runJob(job, child).then(
      (outcome) => {
        this.jobWaiters.get(job.id)?.(outcome);
        if (outcome)
          for (const waiter of this.executionWaiters.get(outcome.execution.executionId) ?? []) waiter(outcome);
      },
      (error: unknown) => this.logger.error({ component: 'worker', err: error, jobId: job.id }, 'worker: a job broke'),
    );
    this.jobRuns.add(run);
    void run.finally(() => {
      this.jobRuns.delete(run);
      this.runningJobs.delete(job.id);
      this.jobWaiters.delete(job.id);
      // A wait on this run looks in the database from now on (another instance may run it again).
      if (job.data.kind === 'webhook')
        for (const waiter of this.executionWaiters.get(job.data.executionId) ?? []) waiter(undefined);
      if (!this.stopping && this.jobsMayWait) void this.pump();
    });
  }

  /**
   * Runs one job and marks it done in the transaction that stores its execution. A job whose
   * workflow is gone, or (a scheduled minute) was switched off, is done without a run.
   */
  private async runJob(job: Job, known?: ChildRow): Promise<ExecutionOutcome | undefined> {
    const { store, jobs, catalog } = this.options;
    const data = job.data;
    try {
      const child = known ?? (await store.children.get(data.workflowId));
      const runnable =
        child &&
        catalog.get(child.parentId) &&
        (data.kind === 'webhook' || (child.active && this.schedules.has(child.parentId)));
      if (!runnable) {
        await store.transaction(async (tx) => {
          if (!(await jobs.complete(job, tx))) throw new JobLost();
        });
        return undefined;
      }
      const trigger: Trigger =
        data.kind === 'schedule'
          ? { kind: 'schedule', at: new Date(data.minute) }
          : { kind: 'webhook', body: data.body };
      const executionId = data.kind === 'webhook' ? data.executionId : undefined;
      if (job.attempt > MAX_RUN_ATTEMPTS) return await this.giveUp(child, trigger, job, executionId);
      const outcome = await this.run(child, trigger, { job, executionId });
      if (data.kind === 'schedule') {
        this.logger.info(
          { component: 'scheduler', workflowId: child.id },
          `scheduler: minute ${new Date(data.minute).toISOString()}: ran ${child.id}`,
        );
      }
      return outcome;
    } catch (error) {
      if (error instanceof JobLost) {
        this.logger.warn({ component: 'worker', jobId: job.id }, 'worker: another instance finished this job first');
        return undefined;
      }
      if (error instanceof RunAbandoned) {
        await jobs.release([job]).catch(() => {});
        this.logger.info(
          { component: 'worker', jobId: job.id },
          'worker: a run cut short by the stop goes back to the queue',
        );
        return undefined;
      }
      this.logger.error(
        { component: 'worker', err: error, jobId: job.id, attempt: job.attempt },
        'worker: a run could not be stored; it is tried again shortly',
      );
      // If even this fails, the lease runs out and another instance takes the job.
      await jobs.fail(job, (error as Error)?.message ?? String(error), RETRY_FAILED_RUN_MS).catch(() => {});
      return undefined;
    }
  }

  /** A job taken MAX_RUN_ATTEMPTS times that never got stored: a failed execution says so. */
  private async giveUp(child: ChildRow, trigger: Trigger, job: Job, executionId?: string): Promise<ExecutionOutcome> {
    const parent = this.options.catalog.get(child.parentId)!;
    const block = parent.blocks.find((b) => b.type === trigger.kind) ?? parent.blocks[0]!;
    const now = new Date().toISOString();
    const execution: ExecutionLogEntry = {
      executionId: executionId ?? newExecutionId(),
      startedAt: now,
      stoppedAt: now,
      finished: false,
      results: [],
    };
    const message = `The run was cut short ${job.attempt - 1} times (its service instance stopped, or the database went away) and is not tried again.`;
    const { stored, error } = await this.storeRun(child, execution, { block, message, kind: 'internal' }, job);
    return { workflowId: child.id, execution, stored, ...(error ? { error } : {}) };
  }

  /**
   * Adds a job for every active child whose parent's schedule is due in `minute`, unless another
   * instance (or an earlier try) added it already: its id is the child and the minute. Answers the
   * ids of the jobs added here.
   */
  private async enqueueMinute(minute: number, adding?: (ids: string[]) => void): Promise<string[]> {
    const { store, jobs } = this.options;
    const at = new Date(minute);
    const due: ChildRow[] = [];
    for (const parentId of await store.children.listParentsWithActive()) {
      if (this.schedules.get(parentId)?.matches(at)) due.push(...(await store.children.listActiveOf(parentId)));
    }
    const candidates = due.map((child) => ({
      id: jobId(`schedule:${child.id}:${minute}`),
      data: { kind: 'schedule' as const, workflowId: child.id, minute },
    }));
    adding?.(candidates.map((job) => job.id));
    await this.caughtUp;
    // A minute with nothing due (most of them) is one statement, not a transaction: a start that
    // catches up an hour adds sixty minutes at once.
    const added =
      candidates.length === 0
        ? await store.settings.raise(SCHEDULED_THROUGH, minute).then(() => [])
        : await store.transaction(async (tx) => {
            const ids = await jobs.add(candidates, tx);
            await tx.settings.raise(SCHEDULED_THROUGH, minute);
            return ids;
          });
    if (added.length > 0) this.jobsMayWait = true;
    this.logger.info(
      { component: 'scheduler' },
      `scheduler: minute ${at.toISOString()}: queued ${added.length} of ${due.length} due${due.length > added.length ? ' (the rest queued by another instance)' : ''}`,
    );
    if (minute % (60 * MINUTE) === 0) await store.webhookRequests.dropBefore(this.clock.now() - IDEMPOTENCY_WINDOW_MS);
    return added;
  }

  /**
   * Adds the jobs of every active child whose parent's schedule is due in the minute of `at`, and
   * waits for those that this instance runs (tests, and a service without the scheduler's timer).
   * Of several instances ticking the same minute, one adds each child's job; whether a child is
   * active is read again just before it runs, so a deactivation stops it at once.
   */
  async tick(at: Date = new Date(this.clock.now())): Promise<ExecutionOutcome[]> {
    const minute = Math.floor(at.getTime() / MINUTE) * MINUTE;
    const waits = new Map<string, Promise<ExecutionOutcome | undefined>>();
    // Waiting before the jobs exist: a worker may take one as soon as it is added.
    const added = await this.enqueueMinute(minute, (ids) => {
      for (const id of ids) waits.set(id, new Promise((resolve) => this.jobWaiters.set(id, resolve)));
    });
    for (const id of waits.keys()) if (!added.includes(id)) this.jobWaiters.delete(id);
    void this.pump();
    // Run here (an outcome), or by another instance that took the job first (none).
    const outcomes = await Promise.all(
      added.map((id) => {
        let settled = false;
        const here = waits.get(id)!.finally(() => (settled = true));
        return Promise.race([here, this.doneElsewhere(id, () => settled)]);
      }),
    );
    return outcomes.filter((outcome): outcome is ExecutionOutcome => outcome !== undefined);
  }

  /** Resolves (with nothing) once the job `id` is done, looking every 200 ms; for jobs another instance took. */
  private async doneElsewhere(id: string, settled: () => boolean): Promise<undefined> {
    while (!settled()) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      if (!this.runningJobs.has(id) && (await this.options.jobs.isDone(id).catch(() => false))) {
        // Give a local run that has just stored it the moment to hand its outcome over first.
        await new Promise((resolve) => setTimeout(resolve, 50));
        return undefined;
      }
    }
    return undefined;
  }

  /**
   * Accepts a webhook call: stores its job, which any instance's worker runs, and answers the
   * execution id it will be stored under. With an `idempotencyKey` seen for this child within
   * IDEMPOTENCY_WINDOW_MS, answers that call's execution id and adds nothing.
   *
   * A caller that waits for the run (`callerWaits`) and whose job this instance takes is accepted
   * without waiting for the WAL flush on PostgreSQL: the run's storing commit, synchronous and
   * later in the one WAL sequence, flushes it before the stored run is answered (issue 27, item
   * 9; docs/design-notes.md). Any other answer that promises the run (a `202`) must first call
   * `promisable()`, which flushes it; so must a replay's, whose first call may have been accepted
   * that way.
   */
  async acceptWebhook(
    child: ChildRow,
    body: Record<string, unknown>,
    idempotencyKey?: string,
    callerWaits = false,
  ): Promise<{ executionId: string; repeated: boolean; promisable: () => Promise<void> }> {
    const { store, jobs } = this.options;
    const executionId = newExecutionId();
    const trace: Record<string, string> = {};
    this.options.tracing?.inject({ set: (name, value) => (trace[name] = value) });
    const job = {
      id: jobId(`webhook:${executionId}`),
      data: { kind: 'webhook', workflowId: child.id, executionId, body, ...(trace.traceparent ? { trace } : {}) },
    } satisfies { id: string; data: JobData };
    // An instance with room runs what it accepted: the job is added taken, one write fewer.
    const hasRoom = () =>
      this.pollTimer !== undefined &&
      !this.stopping &&
      this.runningJobs.size + this.accepting <= (callerWaits ? RUN_CONCURRENCY_WITH_WAITING : RUN_CONCURRENCY);
    const addTaken = (db: Store) =>
      jobs
        .addTaken(job, db, { commitWithoutFlushWait: callerWaits })
        .then((taken) => ({ executionId, repeated: false, taken, lazy: callerWaits }));
    // Counted from before the transaction until the run starts, so calls accepted at the same
    // time do not all see room for one more.
    this.accepting++;
    const answer = await (idempotencyKey === undefined && hasRoom()
      ? // Nothing else to write: one statement (on PostgreSQL, no transaction around it).
        store.oneStatementWrite(addTaken)
      : store.sharedTransaction(async (tx) => {
          if (idempotencyKey !== undefined) {
            const now = this.clock.now();
            const holder = await tx.webhookRequests.claim(
              child.id,
              idempotencyKey,
              executionId,
              now,
              now - IDEMPOTENCY_WINDOW_MS,
            );
            if (holder !== executionId) return { executionId: holder, repeated: true };
          }
          if (hasRoom()) return addTaken(tx);
          await jobs.add([job], tx);
          return { executionId, repeated: false };
        })
    ).finally(() => this.accepting--);
    const flushed = async () => {};
    const flush = () => store.flushCommits();
    if (answer.repeated) return { ...answer, promisable: flush };
    if ('taken' in answer && answer.taken) this.startJob(answer.taken, child);
    else {
      this.jobsMayWait = true;
      void this.pump();
    }
    const lazy = 'lazy' in answer && answer.lazy;
    return { executionId: answer.executionId, repeated: false, promisable: lazy ? flush : flushed };
  }

  /**
   * Waits up to `ms` for the execution `executionId` to be stored, by this instance or another;
   * answers whether it finished, or undefined when it was not stored in time.
   */
  async waitForExecution(executionId: string, ms: number): Promise<{ finished: boolean } | undefined> {
    const deadline = Date.now() + ms;
    let notify = () => {};
    let storedHere: { finished: boolean } | undefined;
    const waiter = (outcome: ExecutionOutcome | undefined) => {
      if (outcome?.stored) storedHere = { finished: outcome.execution.finished };
      notify();
    };
    let waiters = this.executionWaiters.get(executionId);
    if (!waiters) this.executionWaiters.set(executionId, (waiters = new Set()));
    waiters.add(waiter);
    try {
      for (;;) {
        if (storedHere) return storedHere;
        // A run this instance has begun wakes this wait when it ends, with what it stored: the
        // database is not read while it runs (issue 27, item 9: under load, a look every 250 ms
        // was several reads a call). A run elsewhere is looked for in the database.
        const here = this.runsExecution(executionId);
        if (!here) {
          const stored = await this.options.store.logs.executionFinished(executionId);
          if (stored !== undefined) return { finished: stored };
        }
        const left = deadline - Date.now();
        // A stopping instance waits only for the runs it finishes itself.
        if (left <= 0 || (this.stopping && !here)) return undefined;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, here ? left : Math.min(left, 250));
          notify = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    } finally {
      waiters.delete(waiter);
      if (waiters.size === 0) this.executionWaiters.delete(executionId);
    }
  }

  /** When a parent's schedule is next due after `after`; undefined for one that starts on a webhook. */
  nextScheduledRun(parentId: string, after: Date): Date | undefined {
    return this.schedules.get(parentId)?.next(after);
  }

  /** The webhook's answer to a POST: the child it starts, or why it starts nothing. */
  async webhookTarget(
    token: string,
  ): Promise<{ child: ChildRow } | { refused: 'unknown' | 'inactive' | 'no-webhook' | 'parent-removed' }> {
    const child = await this.options.store.children.getByWebhookToken(token);
    if (!child) return { refused: 'unknown' };
    const parent = this.options.catalog.get(child.parentId);
    if (!parent) return { refused: 'parent-removed' };
    if (!parent.blocks.some((b) => b.type === 'webhook')) return { refused: 'no-webhook' };
    if (!child.active) return { refused: 'inactive' };
    return { child };
  }

  /** Runs one child workflow to its end and stores what happened. */
  run(child: ChildRow, trigger: Trigger, as: { job?: Job; executionId?: string } = {}): Promise<ExecutionOutcome> {
    const run = traced(
      this.options.tracing,
      `run ${child.parentId}`,
      {
        attributes: { 'forge.workflow_id': child.id, 'forge.parent_id': child.parentId, 'forge.trigger': trigger.kind },
        parent: as.job?.data.kind === 'webhook' ? as.job.data.trace : undefined,
      },
      (span) => this.execute(child, trigger, span, as),
    );
    this.running.add(run);
    return run.finally(() => this.running.delete(run));
  }

  private async execute(
    child: ChildRow,
    trigger: Trigger,
    span: SpanHandle,
    { job, executionId = newExecutionId() }: { job?: Job; executionId?: string },
  ): Promise<ExecutionOutcome> {
    const { catalog, connections, tracing } = this.options;
    const parent = catalog.get(child.parentId)!;
    span.setAttributes({ 'forge.execution_id': executionId });
    // What this run logs, it logs with its execution id (the connections' notes too).
    const runLogger = this.logger.child({ executionId, workflowId: child.id });
    const startedAt = new Date().toISOString();
    const scope = this.scopeFor(child, parent);
    const outputs = scope.outputs as Map<string, Record<string, unknown>>;
    const results: BlockResult[] = [];
    let failure: { block: CatalogBlock; message: string; kind: ErrorKind } | undefined;
    const metrics = this.options.metrics;
    metrics?.runsStarted.inc({ trigger: trigger.kind });
    for (const block of parent.blocks) {
      if (isTrigger(block) && block.type !== trigger.kind) continue;
      const blockStartedAt = new Date().toISOString();
      let output: Record<string, unknown>;
      let stop = false;
      try {
        ({ output, stop = false } = await traced(
          tracing,
          `block ${block.type}`,
          { attributes: { 'forge.block_id': block.id, 'forge.block_type': block.type } },
          async () =>
            runnerFor(block.type)({
              block,
              scope,
              trigger,
              values: child.variables[block.id],
              ...(await connections
                .forBlock(child.userId, block.integration, runLogger)
                .then(({ access, renew }) => ({ access, renewAccess: renew }))),
              signal: this.shutdown.signal,
              httpTimeoutMs: this.options.httpTimeoutMs ?? 10_000,
              httpRetry: this.options.httpRetry,
              tracing,
            }),
        ));
      } catch (error) {
        failure = { block, ...describeFailure(block, error) };
        if (!(error instanceof BlockFailure || error instanceof ExpressionError)) {
          // A fault of the service itself: the log gets the details, the entry says where to look.
          runLogger.error(
            { blockId: block.id, blockType: block.type, err: error },
            'a block failed inside the service',
          );
        }
        output = { error: failure.message, ...(error instanceof BlockFailure ? error.detail : undefined) };
      }
      outputs.set(block.id, output);
      metrics?.blockDuration.observe(
        { type: block.type, outcome: failure ? 'failed' : 'succeeded' },
        (Date.now() - Date.parse(blockStartedAt)) / 1000,
      );
      results.push({
        blockId: block.id,
        startedAt: blockStartedAt,
        stoppedAt: new Date().toISOString(),
        data: [[{ json: output, id: randomUUID() }]],
      });
      if (failure || stop) break;
    }
    metrics?.runsFinished.inc({ trigger: trigger.kind, outcome: failure ? 'failed' : 'succeeded' });
    if (failure) span.fail(`the block "${failure.block.name}" failed`);
    const execution: ExecutionLogEntry = {
      executionId,
      startedAt,
      stoppedAt: new Date().toISOString(),
      finished: !failure,
      results,
    };
    // A run cut short by a stop is not a failure of the workflow: its job goes back to the queue.
    if (job && this.shutdown.signal.aborted) throw new RunAbandoned();
    const { stored, error } = await this.storeRun(child, execution, failure, job);
    if (error) {
      runLogger.warn(
        { blockId: error.blockId, kind: error.kind, trigger: trigger.kind },
        `execution failed: ${error.error}`,
      );
    }
    return { workflowId: child.id, execution, stored, ...(error ? { error } : {}) };
  }

  /**
   * Stores a run: its execution, and its error entry (queued for the host's channels) when it
   * failed, in one transaction that also marks its job done. Answers whether it was stored, and
   * the error entry.
   */
  private async storeRun(
    child: ChildRow,
    execution: ExecutionLogEntry,
    failure: { block: CatalogBlock; message: string; kind: ErrorKind } | undefined,
    job: Job | undefined,
  ): Promise<{ stored: boolean; error?: ErrorLogEntry }> {
    const { store, delivery } = this.options;
    const storeIt = async (tx: StoreTransaction) => {
      // Another instance that took this job after its lease ran out stored it: this run is not stored.
      if (job && !(await this.options.jobs.complete(job, tx))) throw new JobLost();
      // The user may have been deleted (or the workflow removed) while this ran: its logs went with it.
      if (!(await tx.logs.insertExecution(child.id, execution))) return { stored: false };
      if (!failure) return { stored: true };
      const entry = await tx.logs.insertError({
        workflowId: child.id,
        executionId: execution.executionId,
        blockId: failure.block.id,
        blockType: failure.block.type,
        error: failure.message,
        kind: failure.kind,
      });
      await delivery.enqueue(entry, tx);
      return { stored: true, error: entry };
    };
    // The rows other runs' stores lock too, in the order shared transactions take them: the
    // workflow's (its logs version), then its hour's count.
    const order = `${child.id} ${hourOf(execution.startedAt)}`;
    const { jobs } = this.options;
    const stored =
      job && !failure && jobs.completion
        ? // On PostgreSQL a run that did not fail is one statement with its job marked done,
          // shared by the runs stored at the same time.
          await store.logs
            .storeRunAfter({
              workflowId: child.id,
              entry: execution,
              jobId: job.id,
              completion: (ids) => jobs.completion!(ids),
            })
            .then(({ guarded, stored }): { stored: boolean; error?: ErrorLogEntry } => {
              if (!guarded) throw new JobLost();
              return { stored };
            })
        : await store.sharedTransaction(storeIt, order);
    if (stored.error) delivery.kick();
    return stored;
  }

  private scopeFor(child: ChildRow, parent: CatalogWorkflow): Scope {
    // Built with fromEntries: a variable named "__proto__" must stay an own property.
    const vars: Record<string, VariableValue> = Object.fromEntries(
      parent.blocks.flatMap((block) =>
        (block.parameters.variables ?? []).map((v) => [v.name, currentValue(v, child.variables[block.id])]),
      ),
    );
    return {
      outputs: new Map(),
      blockNames: new Map(parent.blocks.map((b) => [b.id, b.name])),
      vars,
      env: this.options.env,
    };
  }
}

/** The error log entry's message and kind, decided here once rather than read back from the text. */
function describeFailure(block: CatalogBlock, error: unknown): { message: string; kind: ErrorKind } {
  if (error instanceof BlockFailure) return { message: error.message, kind: error.kind };
  if (error instanceof ExpressionError)
    return { message: `In the block "${block.name}": ${error.message}`, kind: error.kind };
  // A fault of the service itself: the run logs the details, the entry says where to look.
  return { message: `The block "${block.name}" failed inside the service; see the service log.`, kind: 'internal' };
}

let sequence = 0;

/**
 * 24 hex digits, like the service's other ids, that sort in the order the executions started:
 * milliseconds, then a counter (two runs can start in the same millisecond, and the logs break
 * the tie on the id), then randomness.
 */
function newExecutionId(): string {
  sequence = (sequence + 1) % 0x10000;
  return (
    Date.now().toString(16).padStart(12, '0') + sequence.toString(16).padStart(4, '0') + randomBytes(4).toString('hex')
  );
}

const isTrigger = (block: CatalogBlock) => (TRIGGER_TYPES as readonly string[]).includes(block.type);

const scheduleBlock = (workflow: CatalogWorkflow) => workflow.blocks.find((b) => b.type === 'schedule');
