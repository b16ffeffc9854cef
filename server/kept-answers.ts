import { UseOrderedMap } from './use-order.js';

interface KeptOwner {
  version: number;
  /** The answer's key within its owner (a page, an origin and filter) → its body, as sent. */
  answers: Map<string, Buffer>;
  bytes: number;
}

/**
 * Answers as sent, kept per owner (a child workflow, a user) at the owner's version, a count in
 * the database that every write to what the answers are made of moves in the same transaction
 * (issue 29). Each request reads the version with the row it must read anyway (the child whose
 * owner it checks, the token's user), and an answer kept at that version is what reading again
 * would give, on any instance, so it is sent without reading. An owner's answers at an older
 * version go when a newer one is kept; the owners read least recently go first once `maxBytes`
 * are kept.
 *
 * - GET /workflow/:id/logs: pages per child workflow at its logs version
 *   (`workflows.logs_version`, moved by every store of runs).
 * - GET /setup: answers per user at the version of their workflows and connections
 *   (`users.own_version`, moved by triggers on both tables).
 */
export class KeptAnswers {
  private readonly owners = new UseOrderedMap<string, KeptOwner>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(ownerId: string, version: number, key: string): Buffer | undefined {
    // Read again, whatever it holds: last to go (an answer not kept is kept next, by `keep`).
    const kept = this.owners.get(ownerId);
    if (kept?.version !== version) return undefined;
    return kept.answers.get(key);
  }

  /**
   * Keeps an answer read at `version`, which is the version read before the answer's rows: the
   * answer is as new as that version or newer, never older.
   */
  keep(ownerId: string, version: number, key: string, body: Buffer): void {
    if (body.length > this.maxBytes) return;
    let kept = this.owners.get(ownerId);
    // A request that read an older version finished after one that read a newer: its answer may
    // be older than those kept.
    if (kept && kept.version > version) return;
    if (kept && kept.version < version) {
      this.drop(ownerId, kept);
      kept = undefined;
    }
    if (!kept) {
      kept = { version, answers: new Map(), bytes: 0 };
      this.owners.set(ownerId, kept);
    }
    const replaced = kept.answers.get(key);
    if (replaced) {
      kept.bytes -= replaced.length;
      this.bytes -= replaced.length;
    }
    kept.answers.set(key, body);
    kept.bytes += body.length;
    this.bytes += body.length;
    for (const [id, oldest] of this.owners.leastRecentFirst()) {
      if (this.bytes <= this.maxBytes) break;
      this.drop(id, oldest);
    }
  }

  private drop(ownerId: string, kept: KeptOwner): void {
    this.owners.delete(ownerId);
    this.bytes -= kept.bytes;
  }
}
