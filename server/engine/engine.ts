import { randomBytes, randomUUID } from 'node:crypto';
import type { BlockResult, ErrorKind, ErrorLogEntry, ExecutionLogEntry, VariableValue } from 'forge-embed/client';
import { type Catalog, type CatalogBlock, type CatalogWorkflow, currentValue } from '../catalog/catalog.js';
import { type Clock, systemClock } from '../clock.js';
import { type Logger, silentLogger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { SecretBox } from '../secrets.js';
import type { ChildRow, Store } from '../store/store.js';
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
  /** This process among the instances that share the database; claims name it. */
  instanceId: string;
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
}

/** Scheduled runs of one tick that run at the same time, so one slow workflow does not hold up the rest. */
const TICK_CONCURRENCY = 4;

const MINUTE = 60_000;

/**
 * How far back a scheduler that fell behind (a stalled event loop, a suspended machine, a test
 * clock that jumped) still runs the minutes it missed; older ones are skipped and logged.
 */
export const CATCH_UP_MINUTES = 60;

/** How soon a minute whose tick broke is tried again. */
const RETRY_FAILED_TICK_MS = 5_000;

/** Claims of minutes older than this are deleted: no scheduler ticks them any more. */
const CLAIMS_KEPT_MINUTES = 24 * 60;

/**
 * Runs child workflows: on a webhook (`runWebhook`) or on their schedule block's cron (`tick`,
 * called every minute by the scheduler, or by a test with the minute it wants). Every run is
 * stored as an execution log entry; a failed one also gets an error log entry, which goes to
 * the host's delivery channels.
 */
export class Engine {
  private readonly options: EngineOptions;
  private readonly clock: Clock;
  private readonly schedules = new Map<string, CronSchedule>();
  private readonly shutdown = new AbortController();
  private readonly running = new Set<Promise<unknown>>();
  private readonly logger: Logger;
  private timer: NodeJS.Timeout | undefined;
  private stopWatchingClock: () => void = () => {};
  /** The scheduler's minutes whose tick is running, and those waiting to be tried again. */
  private readonly ticking = new Set<number>();
  private readonly failedMinutes = new Set<number>();
  /** The next minute the scheduler has not started yet (undefined: no scheduler). */
  private nextMinute: number | undefined;

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
   * Runs the scheduler: a tick for every minute from the one it starts in until `stop()`. Minutes
   * before the start are not run (a restart does not replay an outage); a minute this process
   * missed while running is run late, up to CATCH_UP_MINUTES back.
   */
  startScheduler(): void {
    if (this.shutdown.signal.aborted) return;
    const clock = this.clock;
    this.nextMinute = Math.floor(clock.now() / MINUTE) * MINUTE;
    // Minutes whose tick broke (the database, not a workflow: those become error entries); tried
    // again while they are within the catch-up window. Claims make a second try run only what the
    // first did not.
    const failed = this.failedMinutes;
    const check = () => {
      clearTimeout(this.timer);
      if (this.shutdown.signal.aborted) return;
      const now = clock.now();
      const oldest = Math.floor(now / MINUTE) * MINUTE - (CATCH_UP_MINUTES - 1) * MINUTE;
      let nextMinute = this.nextMinute!;
      if (nextMinute < oldest) {
        this.logger.warn(
          { component: 'scheduler' },
          `scheduler: minutes from ${new Date(nextMinute).toISOString()} to ${new Date(oldest - MINUTE).toISOString()} were missed by over ${CATCH_UP_MINUTES} minutes and are skipped`,
        );
        nextMinute = oldest;
      }
      const minutes = [...failed].filter((minute) => minute >= oldest);
      failed.clear();
      for (; nextMinute <= now; nextMinute += MINUTE) minutes.push(nextMinute);
      this.nextMinute = nextMinute;
      // Each minute's tick runs on its own, so a slow one does not hold up the next.
      for (const minute of minutes) {
        this.ticking.add(minute);
        this.tick(new Date(minute))
          .catch((error: unknown) => {
            this.logger.error(
              { component: 'scheduler', err: error, minute: new Date(minute).toISOString() },
              'scheduler: a minute could not run; it is tried again shortly',
            );
            failed.add(minute);
            if (!this.shutdown.signal.aborted) setTimeout(check, RETRY_FAILED_TICK_MS).unref();
          })
          .finally(() => this.ticking.delete(minute));
      }
      this.timer = setTimeout(check, Math.max(0, nextMinute - clock.now()));
      this.timer.unref();
    };
    this.stopWatchingClock = clock.onJump(check);
    check();
  }

  /**
   * The scheduler's backlog (the metrics): minutes due whose tick has not finished here, whether
   * running, waiting for a retry, or not started (a lagging event loop held the timer back), and
   * the oldest of them.
   */
  schedulerBacklog(): { minutes: number; oldestMinute: number | undefined } {
    const pending = new Set([...this.ticking, ...this.failedMinutes]);
    if (this.nextMinute !== undefined && !this.shutdown.signal.aborted) {
      for (let minute = this.nextMinute; minute <= this.clock.now(); minute += MINUTE) pending.add(minute);
    }
    return { minutes: pending.size, oldestMinute: pending.size ? Math.min(...pending) : undefined };
  }

  /** Runs in progress in this instance. */
  runsInProgress(): number {
    return this.running.size;
  }

  /** Stops the scheduler and waits for the runs in progress, cutting short their HTTP calls. */
  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.stopWatchingClock();
    this.shutdown.abort();
    await Promise.allSettled([...this.running]);
  }

  /**
   * Runs every active child whose parent's schedule is due in the minute of `at`, each only if
   * this instance claims that (child, minute) in the database: of several instances ticking the
   * same minute, one runs each child. Whether a child is active is read again just before it
   * runs, so a deactivation stops it at once.
   */
  async tick(at: Date = new Date(this.clock.now())): Promise<ExecutionOutcome[]> {
    const { store, instanceId } = this.options;
    const minute = Math.floor(at.getTime() / MINUTE) * MINUTE;
    const due: ChildRow[] = [];
    for (const parentId of await store.children.listParentsWithActive()) {
      if (this.schedules.get(parentId)?.matches(at)) due.push(...(await store.children.listActiveOf(parentId)));
    }
    const outcomes: ExecutionOutcome[] = [];
    let claimedElsewhere = 0;
    const next = async (): Promise<void> => {
      const candidate = due.shift();
      if (!candidate || this.shutdown.signal.aborted) return;
      const child = await store.children.get(candidate.id);
      if (child?.active) {
        if (await store.scheduleClaims.claim(child.id, minute, instanceId))
          outcomes.push(await this.run(child, { kind: 'schedule', at }));
        else claimedElsewhere++;
      }
      return next();
    };
    const dueCount = due.length;
    await Promise.all(Array.from({ length: TICK_CONCURRENCY }, next));
    if (dueCount > 0) {
      this.logger.info(
        { component: 'scheduler' },
        `scheduler: minute ${new Date(minute).toISOString()}: ran ${outcomes.length} of ${dueCount} due${claimedElsewhere ? ` (${claimedElsewhere} claimed by another instance)` : ''}`,
      );
    }
    if (minute % (60 * MINUTE) === 0) await store.scheduleClaims.dropBefore(minute - CLAIMS_KEPT_MINUTES * MINUTE);
    return outcomes;
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
  run(child: ChildRow, trigger: Trigger): Promise<ExecutionOutcome> {
    const run = traced(
      this.options.tracing,
      `run ${child.parentId}`,
      {
        attributes: { 'forge.workflow_id': child.id, 'forge.parent_id': child.parentId, 'forge.trigger': trigger.kind },
      },
      (span) => this.execute(child, trigger, span),
    );
    this.running.add(run);
    return run.finally(() => this.running.delete(run));
  }

  private async execute(child: ChildRow, trigger: Trigger, span: SpanHandle): Promise<ExecutionOutcome> {
    const { store, catalog, delivery, connections, tracing } = this.options;
    const parent = catalog.get(child.parentId)!;
    const executionId = newExecutionId();
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
    const error = await store.transaction(async (tx) => {
      // The user may have been deleted (or the workflow removed) while this ran: its logs went with it.
      if (!(await tx.logs.insertExecution(child.id, execution))) return undefined;
      if (!failure) return undefined;
      const entry = await tx.logs.insertError({
        workflowId: child.id,
        executionId,
        blockId: failure.block.id,
        blockType: failure.block.type,
        error: failure.message,
        kind: failure.kind,
      });
      await delivery.enqueue(entry, tx);
      return entry;
    });
    if (error) {
      delivery.kick();
      runLogger.warn(
        { blockId: error.blockId, kind: error.kind, trigger: trigger.kind },
        `execution failed: ${error.error}`,
      );
    }
    return { workflowId: child.id, execution, ...(error ? { error } : {}) };
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
