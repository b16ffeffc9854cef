import { sql } from 'kysely';
import type { Connection, TransactionHandle } from './connection.js';

interface Member {
  work: (tx: Connection<TransactionHandle>) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit on SQLite (issue 27, item 9): the transactions handed to it in one turn of the
 * event loop share one transaction, so one commit and one fsync instead of one each. With
 * `synchronous = FULL` the fsync is most of what a webhook run's writes cost, and with several
 * calls in flight they arrive together: while one commit waits for the disk, the next turn's
 * calls queue up behind it. Each member runs in a savepoint of its own, so one that throws
 * rolls back only its own writes and gets its own error, as if it had a transaction of its own;
 * every member is answered only after the shared commit, so nothing is answered as stored before
 * it is on disk. A commit that fails fails every member of it.
 *
 * The members run one after another in the one transaction (SQLite has a single connection):
 * their work must be database queries only, never a wait for anything else.
 */
export class CommitGroup {
  private pending: Member[] = [];

  constructor(
    private readonly transaction: <T>(work: (tx: Connection<TransactionHandle>) => Promise<T>) => Promise<T>,
  ) {}

  run<T>(work: (tx: Connection<TransactionHandle>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => void this.commit());
      this.pending.push({ work, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  private async commit(): Promise<void> {
    const members = this.pending;
    this.pending = [];
    if (members.length === 1) {
      const [only] = members as [Member];
      await this.transaction(only.work).then(only.resolve, only.reject);
      return;
    }
    const settled: Array<() => void> = [];
    try {
      await this.transaction(async (tx) => {
        for (const member of members) {
          await sql`SAVEPOINT grouped`.execute(tx.db);
          try {
            const value = await member.work(tx);
            await sql`RELEASE grouped`.execute(tx.db);
            settled.push(() => member.resolve(value));
          } catch (error) {
            await sql`ROLLBACK TO grouped`.execute(tx.db);
            await sql`RELEASE grouped`.execute(tx.db);
            settled.push(() => member.reject(error));
          }
        }
      });
    } catch (error) {
      for (const member of members) member.reject(error);
      return;
    }
    for (const settle of settled) settle();
  }
}
