import { EventEmitter, once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** One error log entry the service delivered to the host's error webhook. */
export interface Delivery {
  errorId: string;
  workflowId: string;
  executionId: string;
  receivedAt: string;
}

/** A host keeps what its webhook received; the demo keeps the newest few hundred. */
const KEPT = 500;

/**
 * What the demo's error webhook (`POST /demo/error-webhook`) received, kept in a file beside
 * the demo's other state so "delivered" still shows after a restart. Delivery is at least
 * once, so an entry that arrives again (same `_id`) is recorded once.
 */
export class ErrorInbox {
  readonly #path: string;
  readonly #byExecution = new Map<string, Delivery>();
  readonly #arrivals = new EventEmitter();

  constructor(path: string) {
    this.#path = path;
    for (const delivery of readSaved(path)) this.#byExecution.set(delivery.executionId, delivery);
  }

  /** Records an error log entry; false when `entry` is not one. */
  receive(entry: unknown): boolean {
    if (!isErrorEntry(entry)) return false;
    if (this.#byExecution.has(entry.executionId)) return true;
    this.#byExecution.set(entry.executionId, {
      errorId: entry._id,
      workflowId: entry.workflowId,
      executionId: entry.executionId,
      receivedAt: new Date().toISOString(),
    });
    for (const oldest of [...this.#byExecution.keys()].slice(0, -KEPT)) this.#byExecution.delete(oldest);
    mkdirSync(dirname(this.#path), { recursive: true });
    writeFileSync(this.#path, `${JSON.stringify([...this.#byExecution.values()], null, 1)}\n`);
    this.#arrivals.emit(entry.executionId);
    return true;
  }

  /** When the error entry of `executionId` arrived, or null if it has not. */
  receivedAt(executionId: string): string | null {
    return this.#byExecution.get(executionId)?.receivedAt ?? null;
  }

  /** How many entries of these workflows arrived. */
  countFor(workflowIds: ReadonlySet<string>): number {
    let count = 0;
    for (const delivery of this.#byExecution.values()) if (workflowIds.has(delivery.workflowId)) count++;
    return count;
  }

  /** Resolves true once the entry of `executionId` is here, false after `timeoutMs` without it. */
  async waitFor(executionId: string, timeoutMs: number): Promise<boolean> {
    if (this.#byExecution.has(executionId)) return true;
    try {
      await once(this.#arrivals, executionId, { signal: AbortSignal.timeout(timeoutMs) });
      return true;
    } catch {
      return false;
    }
  }
}

/** What an earlier run received; a damaged file only costs the "delivered" marks, not the start. */
function readSaved(path: string): Delivery[] {
  if (!existsSync(path)) return [];
  try {
    const saved: unknown = JSON.parse(readFileSync(path, 'utf8'));
    return Array.isArray(saved) ? saved : [];
  } catch {
    console.warn(`demo: ${path} is not readable JSON; starting with an empty error webhook inbox.`);
    return [];
  }
}

function isErrorEntry(value: unknown): value is { _id: string; workflowId: string; executionId: string } {
  if (typeof value !== 'object' || value === null) return false;
  const { _id, workflowId, executionId } = value as Record<string, unknown>;
  return typeof _id === 'string' && typeof workflowId === 'string' && typeof executionId === 'string';
}
