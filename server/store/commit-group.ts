import { sql } from 'kysely';
import { atTurnEnd } from '../turn-end.js';
import type { Connection, TransactionHandle } from './connection.js';

interface Member {
  work: (tx: Connection<TransactionHandle>) => Promise<unknown>;
  /** Where the member runs in its group: members are run in this order (those without one first). */
  order: string;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit (issue 27, item 9): the transactions handed to it while it gathers share one
 * transaction, so one commit and one flush instead of one each. A member that throws rolls back
 * only its own writes and gets its own error, as if it had a transaction of its own (on SQLite
 * each member runs in a savepoint; on PostgreSQL the group is run again member by member); every
 * member is answered only after the shared commit, so nothing is answered as stored before it is
 * on disk. A commit that fails fails every member of it.
 *
 * On SQLite (`synchronous = FULL`) the fsync is most of what a webhook run's writes cost, and
 * with several calls in flight they arrive together: a group is what one turn of the event loop
 * hands it (while one commit waits for the disk, the next turn's calls queue up behind it).
 *
 * On PostgreSQL (`oneAtATime`) a group is what arrived while the one before it committed: one
 * group in flight at a time, so the members gather during a commit's WAL flush. Members are run
 * in their `order`, so that rows which members of different groups lock (a workflow's, its
 * hour's) are taken in one order by every group, and two groups never wait for each other in a
 * circle (a user's deletion takes their workflows' rows in that order too). The members run
 * without savepoints: should one throw, the group is rolled back and each member run again alone
 * (`commitWithoutSavepoints`).
 *
 * The members run one after another in the one transaction (on one connection): their work must
 * be database queries only, never a wait for anything else.
 */
export class CommitGroup {
  private pending: Member[] = [];
  private committing = false;

  constructor(
    private readonly transaction: <T>(work: (tx: Connection<TransactionHandle>) => Promise<T>) => Promise<T>,
    private readonly oneAtATime = false,
  ) {}

  run<T>(work: (tx: Connection<TransactionHandle>) => Promise<T>, order = ''): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.pending.length === 0 && !(this.oneAtATime && this.committing)) atTurnEnd(() => void this.commit());
      this.pending.push({ work, order, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /** A member in a transaction of its own. */
  private runAlone(member: Member): Promise<void> {
    return this.transaction(member.work).then(member.resolve, member.reject);
  }

  private async commit(): Promise<void> {
    const members = this.pending.sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
    this.pending = [];
    this.committing = true;
    try {
      await this.commitTogether(members);
    } finally {
      this.committing = false;
      if (this.oneAtATime && this.pending.length > 0) atTurnEnd(() => void this.commit());
    }
  }

  private async commitTogether(members: Member[]): Promise<void> {
    if (members.length === 1) {
      await this.runAlone(members[0]!);
      return;
    }
    if (this.oneAtATime) return this.commitWithoutSavepoints(members);
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

  /**
   * On PostgreSQL, where each statement is a round trip: the members one after another with no
   * savepoint around each (two statements fewer a member, issue 27, item 9). Should one throw (a
   * run lost to another instance, a deadlock, a constraint) the whole group is rolled back and
   * every member run again alone, in a transaction of its own, one after another: each is then
   * answered as if it had been alone from the start, the one that throws with its own error. A
   * member's work is database queries only, so running it again after a rollback is as running
   * it once. A commit that fails fails every member, as it would theirs.
   */
  private async commitWithoutSavepoints(members: Member[]): Promise<void> {
    const values: unknown[] = [];
    let memberFailed = false;
    try {
      await this.transaction(async (tx) => {
        for (const member of members) {
          try {
            values.push(await member.work(tx));
          } catch (error) {
            memberFailed = true;
            throw error;
          }
        }
      });
    } catch (error) {
      if (!memberFailed) {
        for (const member of members) member.reject(error);
        return;
      }
      for (const member of members) await this.runAlone(member);
      return;
    }
    for (const [i, member] of members.entries()) member.resolve(values[i]);
  }
}
