import { type ConnectStrings, defaultConnectStrings } from '../config-modal/connect.js';
import { type DisconnectStrings, defaultDisconnectStrings } from '../internal/disconnect-confirm.js';
import type { Plural } from '../internal/plural.js';
import { defaultProblemStrings } from '../internal/problem.js';
import type { MessageStrings } from '../workflow-list/messages.js';

/**
 * Every text `<forge-integration-list>` shows or announces. Register translations for a locale
 * with `registerStrings(locale, {integrationList: {...}})`, or set the element's `strings`
 * property to an object with the keys to replace; the others stay English. Texts that embed a
 * name, a number or a reason are functions, so a translation can put them where its grammar
 * wants them.
 */
export interface IntegrationListStrings extends MessageStrings, ConnectStrings, DisconnectStrings {
  /** Label of the search box shown for many apps. */
  searchLabel: string;
  /** Label of the category filter, and its choice that shows every category. */
  categoryLabel: string;
  allCategories: string;
  /** Announced while the search or the category filter is in use. */
  matchCount: (shown: number, total: number, plural: Plural) => string;
  noMatches: string;
  /** An app that needs no account of the user's. */
  noAccountNeeded: string;
  /** The button that opens the modal with the app's workflows; `on` of them are switched on. */
  workflows: (on: number, plural: Plural) => string;
  /** Said on the card of an app the service cannot connect now (the host has not set it up). */
  unavailable: (app: string) => string;
  /** Said on the card when the modal's code could not be loaded. */
  modalLoadFailed: string;
}

export const defaultIntegrationListStrings: IntegrationListStrings = {
  ...defaultProblemStrings,
  ...defaultConnectStrings,
  ...defaultDisconnectStrings,
  listLabel: 'Apps',
  loading: 'Loading apps…',
  empty: 'No apps to connect',
  emptyHint: 'When workflows that work with your apps become available, the apps appear here.',
  loadFailed: 'Your apps could not be loaded.',
  retry: 'Try again',
  searchLabel: 'Search apps',
  categoryLabel: 'Category',
  allCategories: 'All categories',
  matchCount: (shown, total, plural) =>
    plural(total, { one: `${shown} of # app shown`, other: `${shown} of # apps shown` }),
  noMatches: 'No app matches your search.',
  noAccountNeeded: 'No account needed',
  workflows: (on, plural) => plural(on, { other: 'Workflows (# on)' }),
  unavailable: (app) => `${app} can't be connected right now. Try again later.`,
  modalLoadFailed: 'The workflows could not be opened. Check your connection, then try again.',
};
