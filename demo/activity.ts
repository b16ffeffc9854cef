import {
  type Block,
  type ChildWorkflow,
  type ErrorLogEntry,
  type ExecutionLogEntry,
  ForgeApiError,
  type ForgeClient,
} from '../src/api/index.js';
import type { ErrorInbox } from './error-inbox.js';
import { SAMPLE_EVENTS, type SampleEvents } from './samples.js';
import type { DemoUser } from './seed.js';

/**
 * The demo backend's view of a signed-in user's workflow runs, read with the API key (which
 * never reaches the page): recent executions with the blocks they went through, their error log
 * entries, and whether each error reached the host's error webhook. Also sends test events to a
 * workflow's webhook URL, which stays on the server: it is the workflow's only credential.
 */

/** Runs shown per workflow. */
export const RUNS_SHOWN = 5;
/** How long a test event that failed waits for its error to reach the demo's error webhook. */
const DELIVERY_WAIT_MS = 3000;
/** Block outputs are the user's data and can be large (an HTTP answer, up to 256 KB). */
const MAX_OUTPUT_CHARS = 1500;

export interface ActivityView {
  workflows: WorkflowActivity[];
  errorWebhook: {
    url: string | null;
    /** Whether the service delivers to this demo's receiver. */
    isDemoReceiver: boolean;
    /** Error entries of this user's workflows the receiver got. */
    received: number;
    pending: number;
    lastError: string | null;
  };
}

export interface WorkflowActivity {
  workflowId: string;
  name: string;
  active: boolean;
  icons: Array<{ src: string; name: string }>;
  trigger: { kind: 'webhook'; event: string | null } | { kind: 'schedule'; name: string; cron: string } | null;
  /** Null when the demo has no sample event for it (or it runs on a schedule). */
  testEvent: { noun: string; failingWhy: string } | null;
  runs: RunView[];
  /** Whether the workflow ran more often than the runs shown. */
  hasOlderRuns: boolean;
  /** Entries in the workflow's whole error log, also of runs older than those shown. */
  errorCount: number;
}

export interface RunView {
  executionId: string;
  startedAt: string;
  durationMs: number;
  /** `stopped`: finished early because a condition did not pass. */
  outcome: 'finished' | 'stopped' | 'failed';
  steps: Array<{ name: string; type: string; status: 'done' | 'failed' | 'not-run'; output: string | null }>;
  error: {
    message: string;
    blockName: string;
    blockType: string;
    loggedAt: string;
    /** When the demo's error webhook received the entry; null if it has not. */
    deliveredAt: string | null;
  } | null;
}

export interface TestEventResult {
  executionId: string;
  finished: boolean;
  /** What was sent: "a Stripe payment", "a Stripe payment whose amount arrives as text (…)". */
  sent: string;
}

/** A failure to show the visitor as is, with the HTTP status the demo backend answers. */
export class ActivityError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class Activity {
  readonly #admin: ForgeClient;
  readonly #inbox: ErrorInbox;
  readonly #receiverUrl: string;
  /** Whether the service's error webhook is the demo's receiver, as last seen. */
  #deliversHere = false;
  /** Which good sample each workflow sends next, so successive test events differ. */
  readonly #turns = new Map<string, number>();

  constructor(options: { admin: ForgeClient; inbox: ErrorInbox; receiverUrl: string }) {
    this.#admin = options.admin;
    this.#inbox = options.inbox;
    this.#receiverUrl = options.receiverUrl;
  }

  /** Points the service's error webhook at the demo's receiver, as a host does once in its setup. */
  async registerErrorWebhook(): Promise<void> {
    const settings = await this.#admin.updateSettings({ errorWebhookUrl: this.#receiverUrl });
    this.#deliversHere = settings.errorWebhookUrl === this.#receiverUrl;
  }

  async read(user: DemoUser): Promise<ActivityView> {
    const [{ workflows }, settings] = await Promise.all([this.#admin.getUser(user.forgeId), this.#admin.getSettings()]);
    const activities = await Promise.all(workflows.map((w) => this.#readWorkflow(w._id)));
    this.#deliversHere = settings.errorWebhookUrl === this.#receiverUrl;
    return {
      workflows: activities,
      errorWebhook: {
        url: settings.errorWebhookUrl,
        isDemoReceiver: this.#deliversHere,
        received: this.#inbox.countFor(new Set(workflows.map((w) => w._id))),
        pending: settings.deliveries.webhook.pending,
        lastError: settings.deliveries.webhook.lastError,
      },
    };
  }

  async sendTestEvent(user: DemoUser, workflowId: string, failing: boolean): Promise<TestEventResult> {
    const child = await this.#ownWorkflow(user, workflowId);
    const events = SAMPLE_EVENTS[child.parentId];
    if (!child.webhookUrl) {
      throw new ActivityError(
        409,
        `"${child.name}" runs on a schedule, not on events; its runs show here when they are due.`,
      );
    }
    if (!events) throw new ActivityError(409, `The demo has no sample event for "${child.name}".`);
    const payload = failing ? events.failing.payload() : this.#nextSample(workflowId, events.samples);
    let response: Response;
    try {
      // Waits for the run (`Prefer: wait`), so the panel can say at once how it went.
      response = await fetch(child.webhookUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Prefer: 'wait=30' },
        body: JSON.stringify(payload),
      });
    } catch (error) {
      throw new ActivityError(502, `Could not reach the workflow's webhook (${(error as Error).message}).`);
    }
    const answer = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (response.status === 409) {
      throw new ActivityError(
        409,
        `"${child.name}" is switched off, so its webhook starts nothing. Switch it on in the list, then send again.`,
      );
    }
    if (!response.ok) {
      const reason = typeof answer.detail === 'string' ? answer.detail : `it answered ${response.status}`;
      throw new ActivityError(502, `The webhook did not take the event: ${reason}`);
    }
    const result = {
      executionId: String(answer.executionId),
      finished: answer.finished === true,
      sent: failing ? `${events.noun} ${events.failing.why}` : events.noun,
    };
    // The service delivers the error entry on its own; waiting a moment lets the refreshed panel
    // show it delivered. If it takes longer, the panel says it is not delivered yet.
    if (!result.finished && this.#deliversHere) await this.#inbox.waitFor(result.executionId, DELIVERY_WAIT_MS);
    return result;
  }

  #nextSample(workflowId: string, samples: SampleEvents['samples']): Record<string, unknown> {
    const turn = this.#turns.get(workflowId) ?? 0;
    this.#turns.set(workflowId, turn + 1);
    return samples[turn % samples.length]!();
  }

  /** The user's own child workflow; another user's answers as a missing one. */
  async #ownWorkflow(user: DemoUser, workflowId: string): Promise<ChildWorkflow> {
    const notFound = new ActivityError(404, 'You have no such workflow. Reload the page to see your workflows.');
    try {
      const child = await this.#admin.getWorkflow(workflowId);
      if (child.userId !== user.forgeId) throw notFound;
      return child;
    } catch (error) {
      if (error instanceof ForgeApiError && error.status === 404) throw notFound;
      throw error;
    }
  }

  async #readWorkflow(workflowId: string): Promise<WorkflowActivity> {
    const [child, logs, errors] = await Promise.all([
      this.#admin.getWorkflow(workflowId),
      // One more than shown tells whether there are older runs.
      this.#admin.getWorkflowLogs(workflowId, { limit: RUNS_SHOWN + 1 }),
      this.#admin.getWorkflowErrors(workflowId),
    ]);
    const trigger = child.blocks.find((b) => b.type === 'webhook' || b.type === 'schedule');
    const events = SAMPLE_EVENTS[child.parentId];
    const errorsByRun = new Map(errors.map((e) => [e.executionId, e]));
    return {
      workflowId,
      name: child.name,
      active: child.active,
      icons: child.integrations.map((i) => ({ src: i.icon, name: i.displayName })),
      trigger: !trigger
        ? null
        : trigger.type === 'webhook'
          ? { kind: 'webhook', event: typeof trigger.parameters.event === 'string' ? trigger.parameters.event : null }
          : { kind: 'schedule', name: trigger.name, cron: String(trigger.parameters.cron) },
      testEvent:
        child.webhookUrl && events ? { noun: events.noun, failingWhy: `${events.noun} ${events.failing.why}` } : null,
      runs: logs.slice(0, RUNS_SHOWN).map((run) => this.#runView(run, child.blocks, errorsByRun.get(run.executionId))),
      hasOlderRuns: logs.length > RUNS_SHOWN,
      errorCount: errors.length,
    };
  }

  #runView(run: ExecutionLogEntry, blocks: Block[], error: ErrorLogEntry | undefined): RunView {
    const results = new Map(run.results.map((r) => [r.blockId, r]));
    const failedBlockId = run.finished ? null : run.results.at(-1)?.blockId;
    const stopped = run.finished && run.results.length < blocks.length;
    const failedBlock = blocks.find((b) => b.id === (error?.blockId ?? failedBlockId));
    return {
      executionId: run.executionId,
      startedAt: run.startedAt,
      durationMs: Date.parse(run.stoppedAt) - Date.parse(run.startedAt),
      outcome: !run.finished ? 'failed' : stopped ? 'stopped' : 'finished',
      steps: blocks.map((block) => {
        const result = results.get(block.id);
        return {
          name: block.name,
          type: block.type,
          status: !result ? 'not-run' : block.id === failedBlockId ? 'failed' : 'done',
          output: result ? outputText(result.data[0]?.[0]?.json) : null,
        };
      }),
      error: error
        ? {
            message: error.error,
            blockName: failedBlock?.name ?? error.blockId,
            blockType: error.blockType,
            loggedAt: error.createdAt,
            deliveredAt: this.#inbox.receivedAt(run.executionId),
          }
        : null,
    };
  }
}

function outputText(json: unknown): string | null {
  if (json === undefined) return null;
  const text = JSON.stringify(json, null, 2);
  return text.length > MAX_OUTPUT_CHARS ? `${text.slice(0, MAX_OUTPUT_CHARS)}\n…` : text;
}
