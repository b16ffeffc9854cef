import { type Kysely, SqliteAdapter, sql } from 'kysely';

/**
 * The columns of a workflow that GET /setup's answer is made of: all but `logs_version`, which
 * every stored run moves (a run must not cost a write of its user's row).
 */
const WORKFLOW_COLUMNS = 'id, user_id, parent_id, active, variables, webhook_token, created_at, updated_at';

/**
 * Each user counts the writes to their workflows and connections (issue 29): installs, switches,
 * variables, webhook tokens, removals, connections made, refreshed, broken or ended. GET /setup's
 * answer is made of nothing else of the database, so an answer made at one count is the answer
 * at that count on every instance, and is kept and sent again until the count moves. The count
 * is moved by triggers, so that no write, today's or a later one, can forget it: on SQLite in the
 * writing statement; on PostgreSQL at the commit (deferred), so that the user's row is the last
 * lock a transaction takes and two that write the same user's workflows and connections in
 * different orders cannot deadlock on it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('own_version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  const bump = (userId: string) => `UPDATE users SET own_version = own_version + 1 WHERE id = ${userId};`;
  if (db.getExecutor().adapter instanceof SqliteAdapter) {
    for (const [table, update] of [
      ['workflows', `UPDATE OF ${WORKFLOW_COLUMNS}`],
      ['credentials', 'UPDATE'],
    ] as const) {
      await sql
        .raw(`CREATE TRIGGER ${table}_insert_own_version AFTER INSERT ON ${table} BEGIN ${bump('NEW.user_id')} END`)
        .execute(db);
      await sql
        .raw(
          `CREATE TRIGGER ${table}_update_own_version AFTER ${update} ON ${table} BEGIN ${bump('OLD.user_id')} ` +
            `UPDATE users SET own_version = own_version + 1 WHERE id = NEW.user_id AND NEW.user_id <> OLD.user_id; END`,
        )
        .execute(db);
      await sql
        .raw(`CREATE TRIGGER ${table}_delete_own_version AFTER DELETE ON ${table} BEGIN ${bump('OLD.user_id')} END`)
        .execute(db);
    }
    return;
  }
  await sql
    .raw(`CREATE FUNCTION bump_own_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    ${bump('NEW.user_id')}
  ELSE
    ${bump('OLD.user_id')}
    IF TG_OP = 'UPDATE' THEN
      IF NEW.user_id <> OLD.user_id THEN
        ${bump('NEW.user_id')}
      END IF;
    END IF;
  END IF;
  RETURN NULL;
END $$`)
    .execute(db);
  for (const [table, update] of [
    ['workflows', `UPDATE OF ${WORKFLOW_COLUMNS}`],
    ['credentials', 'UPDATE'],
  ] as const) {
    await sql
      .raw(
        `CREATE CONSTRAINT TRIGGER ${table}_own_version AFTER INSERT OR ${update} OR DELETE ON ${table} ` +
          'DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_own_version()',
      )
      .execute(db);
  }
}
