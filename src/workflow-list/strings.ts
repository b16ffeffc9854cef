import type { Plural } from '../internal/localize.js';

/**
 * Every text `<forge-workflow-list>` shows or announces. Register translations for a locale with
 * `registerStrings(locale, {workflowList: {...}})`, or set the element's `strings` property to
 * an object with the keys to replace; the others stay English. Texts that embed a number, a
 * query or a reason are functions, so a translation can put them where its grammar wants them.
 */
export interface WorkflowListStrings {
  /** Accessible name of the list of workflows. */
  listLabel: string;
  /** Announced while the workflows load. */
  loading: string;
  /** Heading when the host offers no workflows (for the `integration` filter, if one is set). */
  empty: string;
  emptyHint: string;
  /** Heading when the workflows could not be loaded; the reason follows it. */
  loadFailed: string;
  retry: string;
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
}

export const defaultWorkflowListStrings: WorkflowListStrings = {
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
  modalLoadFailed:
    'The settings could not be opened: this part of the page did not load. Check the connection, then try again.',
  refreshFailed: (reason) => `Saved, but the list could not show the new state. ${reason}`,
};
