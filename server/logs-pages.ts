/**
 * All the pages kept take at most this many bytes together. A page is at most 30 runs; the
 * bench's are 15 KB, so this holds the first pages of a few hundred workflows.
 */
const KEPT_BYTES = 32 * 1024 * 1024;

interface KeptWorkflow {
  version: number;
  /** `page:limit:order` → the answer's body, as sent. */
  pages: Map<string, Buffer>;
  bytes: number;
}

/**
 * GET /workflow/:id/logs answers as sent, kept per child workflow at its logs version (issue 29).
 * The version (`workflows.logs_version`) moves in the transaction that stores a workflow's runs,
 * and every request reads it with the child, whose owner it must check anyway; a page kept at
 * that version is then what reading the runs again would give, on any instance, and is sent
 * without reading them. Reading the page was most of the request's cost, and pages 1–10 are
 * what people and the Runs view read again and again. A workflow's pages at an older version go
 * when a newer one is kept; the workflows read least recently go first once KEPT_BYTES are kept.
 */
export class LogsPages {
  private readonly workflows = new Map<string, KeptWorkflow>();
  private bytes = 0;

  get(workflowId: string, version: number, page: string): Buffer | undefined {
    const kept = this.workflows.get(workflowId);
    if (kept?.version !== version) return undefined;
    const body = kept.pages.get(page);
    if (body) {
      // Read again: to the end of the queue, last to go.
      this.workflows.delete(workflowId);
      this.workflows.set(workflowId, kept);
    }
    return body;
  }

  /**
   * Keeps a page read at `version`, which is the version read before the page: the page is as
   * new as that version or newer, never older.
   */
  keep(workflowId: string, version: number, page: string, body: Buffer): void {
    if (body.length > KEPT_BYTES) return;
    let kept = this.workflows.get(workflowId);
    // A request that read an older version finished after one that read a newer: its page may
    // be older than those kept.
    if (kept && kept.version > version) return;
    if (kept && kept.version < version) {
      this.drop(workflowId, kept);
      kept = undefined;
    }
    if (!kept) {
      kept = { version, pages: new Map(), bytes: 0 };
      this.workflows.set(workflowId, kept);
    }
    const replaced = kept.pages.get(page);
    if (replaced) {
      kept.bytes -= replaced.length;
      this.bytes -= replaced.length;
    }
    kept.pages.set(page, body);
    kept.bytes += body.length;
    this.bytes += body.length;
    for (const [id, oldest] of this.workflows) {
      if (this.bytes <= KEPT_BYTES) break;
      this.drop(id, oldest);
    }
  }

  private drop(workflowId: string, kept: KeptWorkflow): void {
    this.workflows.delete(workflowId);
    this.bytes -= kept.bytes;
  }
}
