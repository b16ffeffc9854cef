import type { Connection } from './connection.js';

/**
 * The claims on scheduled minutes: of the instances that tick the same minute of a child, the
 * one that claims it runs it (docs/design-notes.md).
 */
export class ScheduleClaimRepository {
  constructor(private readonly connection: Connection) {}

  /**
   * Claims one scheduled minute of a child for `holder`: true for the one instance whose insert
   * made the row, false for every other that tried the same (child, minute).
   */
  async claim(workflowId: string, minute: number, holder: string): Promise<boolean> {
    // An insert that met an existing claim returns no row.
    const made = await this.connection.db
      .insertInto('schedule_claims')
      .values({ workflow_id: workflowId, minute, claimed_by: holder })
      .onConflict((oc) => oc.doNothing())
      .returning('minute')
      .executeTakeFirst();
    return made !== undefined;
  }

  /** Forgets claims of minutes before `minute`: no instance ticks them any more. */
  async dropBefore(minute: number): Promise<void> {
    await this.connection.db.deleteFrom('schedule_claims').where('minute', '<', minute).execute();
  }
}
