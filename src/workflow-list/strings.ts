import type { Plural } from '../internal/plural.js';
import { defaultProblemStrings } from '../internal/problem.js';
import type { MessageStrings } from './messages.js';
import type { RunDetailsStrings } from './run-details-strings.js';

/**
 * Every text `<forge-workflow-list>` shows or announces. Register translations for a locale with
 * `registerStrings(locale, {workflowList: {...}})`, or set the element's `strings` property to
 * an object with the keys to replace; the others stay English. Texts that embed a number, a
 * query or a reason are functions, so a translation can put them where its grammar wants them.
 */
export interface WorkflowListStrings extends RunDetailsStrings, MessageStrings {
  enable: string;
  configure: string;
  /** Label of the filter box shown for long lists. */
  filterLabel: string;
  /** Announced while the filter box is in use; `plural` picks the form for a count in the element's locale. */
  matchCount: (shown: number, total: number, plural: Plural) => string;
  noMatches: (query: string) => string;
  /** Said in the row when switching on or off failed. */
  turnOnFailed: (reason: string) => string;
  turnOffFailed: (reason: string) => string;
  /** Said in the row when the workflow turned out to be removed (e.g. by the host) meanwhile. */
  removed: string;
  /** Said in the row when the modal's code could not be loaded, so Enable / Configure could not open it. */
  modalLoadFailed: string;
  /** Said in the row when re-reading a workflow after the modal saved it failed. */
  refreshFailed: (reason: string) => string;
  /** Said above the list when reading the runs' health again failed; the rows show what was read before. */
  healthRefreshFailed: (reason: string) => string;
  /** An installed workflow that never ran, on a webhook. */
  neverRan: string;
  /** An installed workflow on a schedule that never ran; `when` is relative ("in 40 minutes"). */
  nextRun: (when: string) => string;
  /** The last run succeeded; `when` is relative ("5 minutes ago"); the exact time shows on hover and focus. */
  lastRunSucceeded: (when: string) => string;
  lastRunFailed: (when: string) => string;
  /** Runs that failed in the last 24 hours, after the last run's line. */
  failedToday: (count: number, plural: Plural) => string;
  /** Why the last run failed, by the error's kind; `app` is the integration's display name when known. */
  failedBecause: Record<'connection' | 'settings' | 'app' | 'internal', (app: string) => string>;
  /** The row's button when the app refused the user's credential. */
  reconnect: (app: string) => string;
  /** The row's button when a setting is missing or invalid. */
  fixSettings: string;
  /** The disclosure that shows a workflow's recent runs. */
  showRuns: string;
}

/** The details view's texts come with the view itself (run-details-strings.ts), loaded when first opened. */
export const defaultWorkflowListStrings: Omit<
  WorkflowListStrings,
  Exclude<keyof RunDetailsStrings, 'technicalDetails'>
> = {
  ...defaultProblemStrings,
  listLabel: 'Workflows',
  loading: 'Loading workflows…',
  empty: 'No workflows on offer',
  emptyHint: 'When new workflows become available, they appear here.',
  loadFailed: 'Your workflows could not be loaded.',
  retry: 'Try again',
  enable: 'Enable',
  configure: 'Configure',
  filterLabel: 'Filter workflows',
  matchCount: (shown, total, plural) =>
    plural(total, { one: `${shown} of # workflow shown`, other: `${shown} of # workflows shown` }),
  noMatches: (query) => `No workflow matches “${query}”.`,
  turnOnFailed: (reason) => `Could not turn this workflow on. ${reason}`,
  turnOffFailed: (reason) => `Could not turn this workflow off. ${reason}`,
  removed: 'This workflow was removed. Enable it again to use it.',
  modalLoadFailed: 'The settings could not be opened. Check your connection, then try again.',
  refreshFailed: (reason) => `Saved, but the list could not show the new state. ${reason}`,
  healthRefreshFailed: (reason) => `How your workflows ran could not be checked again. ${reason}`,
  neverRan: 'Waiting for the first run',
  nextRun: (when) => `First run ${when}`,
  lastRunSucceeded: (when) => `Ran ${when}`,
  lastRunFailed: (when) => `Failed ${when}`,
  failedToday: (count, plural) =>
    plural(count, { one: '# failed run in 24 hours', other: '# failed runs in 24 hours' }),
  failedBecause: {
    connection: (app) => `${app || 'An app'} refused the connection.`,
    settings: () => 'A setting needs a change.',
    app: (app) => `${app || 'An app'} could not do its part.`,
    internal: () => 'Something went wrong while it ran.',
  },
  reconnect: (app) => `Reconnect ${app}`,
  fixSettings: 'Fix settings',
  showRuns: 'Runs',
};
