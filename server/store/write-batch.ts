import { atTurnEnd } from '../turn-end.js';

interface Waiting<Item, Result> {
  item: Item;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

/**
 * Writes of one kind made as one statement while the statement before them runs (issue 27, item
 * 9): on PostgreSQL a statement is a round trip and a commit, so the runs stored together while
 * one batch commits are the next batch, one statement and one WAL flush for all of them, where a
 * group commit was a round trip per member, each holding its rows' locks through all the others'.
 * A batch of one is written alone (`writeOne`). Should a batch fail, each of its writes is made
 * alone, one after another, and answered as if it had been alone from the start (the one that
 * fails with its own error): a write must be database statements only, so making it again after
 * the batch rolled back is making it once.
 */
export class WriteBatch<Item, Result> {
  private pending: Array<Waiting<Item, Result>> = [];
  /** Batches being written, and whether one is set to start at the end of this turn. */
  private writing = 0;
  private starting = false;

  constructor(
    /** Writes every item in one statement; answers their results in their order. */
    private readonly writeAll: (items: Item[]) => Promise<Result[]>,
    private readonly writeOne: (item: Item) => Promise<Result>,
    /** Batches written at once; the writes that come while this many are written wait for one to end. */
    private readonly inFlight = 1,
  ) {}

  write(item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.startSoon();
    });
  }

  /** The next batch at the end of this turn (setImmediate runs after its I/O), with the turn's other writes. */
  private startSoon(): void {
    if (this.starting || this.writing >= this.inFlight || this.pending.length === 0) return;
    this.starting = true;
    atTurnEnd(() => {
      this.starting = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    this.writing++;
    try {
      if (batch.length === 1) {
        await this.writeAlone(batch[0]!);
        return;
      }
      let results: Result[];
      try {
        results = await this.writeAll(batch.map((waiting) => waiting.item));
      } catch {
        for (const waiting of batch) await this.writeAlone(waiting);
        return;
      }
      for (const [i, waiting] of batch.entries()) waiting.resolve(results[i]!);
    } finally {
      this.writing--;
      this.startSoon();
    }
  }

  private writeAlone({ item, resolve, reject }: Waiting<Item, Result>): Promise<void> {
    return this.writeOne(item).then(resolve, reject);
  }
}
