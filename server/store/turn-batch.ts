import { atTurnEnd } from '../turn-end.js';

interface Waiting<Row> {
  resolve: (row: Row | undefined) => void;
  reject: (error: unknown) => void;
}

/**
 * Reads by key asked for during one turn of the event loop, made as one read when the turn's I/O
 * is done (`setImmediate` runs after the poll phase that read the requests): on PostgreSQL one
 * statement and one round trip for all the requests that came in together, instead of one each
 * on as many pooled connections (issue 29). A read made this way starts after every request it
 * answers arrived, so it sees every commit made before any of them, as a read of their own would.
 * Nothing is kept between turns.
 */
export class TurnBatch<Row> {
  private pending: Map<string, Array<Waiting<Row>>> | undefined;

  /** `readAll` answers the rows found by their key; a key without a row answers undefined. */
  constructor(private readonly readAll: (keys: string[]) => Promise<Map<string, Row>>) {}

  read(key: string): Promise<Row | undefined> {
    let pending = this.pending;
    if (!pending) {
      pending = new Map();
      this.pending = pending;
      atTurnEnd(() => this.flush(pending!));
    }
    const turn = pending;
    return new Promise((resolve, reject) => {
      const waiting = turn.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else turn.set(key, [{ resolve, reject }]);
    });
  }

  private flush(pending: Map<string, Array<Waiting<Row>>>): void {
    this.pending = undefined;
    this.readAll([...pending.keys()]).then(
      (rows) => {
        for (const [key, waiting] of pending) for (const { resolve } of waiting) resolve(rows.get(key));
      },
      (error: unknown) => {
        for (const waiting of pending.values()) for (const { reject } of waiting) reject(error);
      },
    );
  }
}
