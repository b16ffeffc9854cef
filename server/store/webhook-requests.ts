import type { Connection } from './connection.js';

/**
 * Webhook calls that carried an `Idempotency-Key`: the execution each key started, so a repeat
 * of the call (a sender that timed out and sent again) answers the same execution and starts
 * nothing (issue 27).
 */
export class WebhookRequestRepository {
  constructor(private readonly connection: Connection) {}

  /**
   * Records that `key` started `executionId`, unless the key already started an execution at or
   * after `since`: answers the execution the key stands for, this one or the earlier one. Of two
   * calls racing with one key, both get the one that was recorded first.
   */
  async claim(workflowId: string, key: string, executionId: string, now: number, since: number): Promise<string> {
    const recorded = await this.connection.db
      .insertInto('webhook_requests')
      .values({ workflow_id: workflowId, idempotency_key: key, execution_id: executionId, created_at: now })
      .onConflict((oc) =>
        oc
          .columns(['workflow_id', 'idempotency_key'])
          // A key older than the window is free again.
          .doUpdateSet({ execution_id: executionId, created_at: now })
          .where('webhook_requests.created_at', '<', since),
      )
      .returning('execution_id')
      .executeTakeFirst();
    if (recorded) return recorded.execution_id;
    const earlier = await this.connection.db
      .selectFrom('webhook_requests')
      .select('execution_id')
      .where('workflow_id', '=', workflowId)
      .where('idempotency_key', '=', key)
      .executeTakeFirstOrThrow();
    return earlier.execution_id;
  }

  /** Forgets keys recorded before `time`: they no longer stand for anything. */
  async dropBefore(time: number): Promise<void> {
    await this.connection.db.deleteFrom('webhook_requests').where('created_at', '<', time).execute();
  }
}
