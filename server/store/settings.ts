import type { StoreClass } from './base.js';

/** The service's own settings (the API key's hash, host settings): text by key. */
export function withSettings<Base extends StoreClass>(base: Base) {
  return class SettingQueries extends base {
    async getSetting(key: string): Promise<string | undefined> {
      const row = await this.db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
      return row?.value;
    }

    async setSetting(key: string, value: string): Promise<void> {
      await this.db
        .insertInto('settings')
        .values({ key, value })
        .onConflict((oc) => oc.column('key').doUpdateSet({ value: (eb) => eb.ref('excluded.value') }))
        .execute();
    }

    /**
     * Stores a setting unless one is there already; answers the stored value, so of two callers
     * racing to create it, both get the winner's.
     */
    async addSetting(key: string, value: string): Promise<string> {
      await this.db
        .insertInto('settings')
        .values({ key, value })
        .onConflict((oc) => oc.column('key').doNothing())
        .execute();
      return (await this.getSetting(key)) ?? value;
    }

    async deleteSetting(key: string): Promise<void> {
      await this.db.deleteFrom('settings').where('key', '=', key).execute();
    }
  };
}
