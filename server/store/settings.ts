import { sql } from 'kysely';
import type { Connection } from './connection.js';

/** The service's own settings (the API key's hash, host settings): text by key. */
export class SettingRepository {
  constructor(private readonly connection: Connection) {}

  async get(key: string): Promise<string | undefined> {
    const row = await this.connection.db
      .selectFrom('settings')
      .select('value')
      .where('key', '=', key)
      .executeTakeFirst();
    return row?.value;
  }

  async set(key: string, value: string): Promise<void> {
    await this.connection.db
      .insertInto('settings')
      .values({ key, value })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: (eb) => eb.ref('excluded.value') }))
      .execute();
  }

  /**
   * Stores a number setting only if it raises it (or there is none): of several instances racing,
   * the highest value stays, whatever order their writes land in.
   */
  async raise(key: string, value: number): Promise<void> {
    await this.connection.db
      .insertInto('settings')
      .values({ key, value: String(value) })
      .onConflict((oc) =>
        oc
          .column('key')
          .doUpdateSet({ value: (eb) => eb.ref('excluded.value') })
          .where(sql`CAST(settings.value AS bigint)`, '<', value),
      )
      .execute();
  }

  /**
   * Stores a setting unless one is there already; answers the stored value, so of two callers
   * racing to create it, both get the winner's.
   */
  async add(key: string, value: string): Promise<string> {
    await this.connection.db
      .insertInto('settings')
      .values({ key, value })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    return (await this.get(key)) ?? value;
  }

  async delete(key: string): Promise<void> {
    await this.connection.db.deleteFrom('settings').where('key', '=', key).execute();
  }
}
