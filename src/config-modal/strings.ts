import { type DisconnectStrings, defaultDisconnectStrings } from '../internal/disconnect-confirm.js';
import { defaultProblemStrings, type ProblemStrings } from '../internal/problem.js';
import { type ConnectStrings, defaultConnectStrings } from './connect.js';

/**
 * Every text `<forge-config-modal>` shows or announces. Register translations for a locale with
 * `registerStrings(locale, {configModal: {...}})`, or set the element's `strings` property to
 * an object with the keys to replace; the others stay English. Texts that embed a name or a
 * reason are functions, so a translation can put them where its grammar wants them.
 */
export interface ConfigModalStrings extends ProblemStrings, ConnectStrings, DisconnectStrings {
  /** Accessible name of the close button in the header. */
  close: string;
  /** Title while it is not yet known what is being set up. */
  titleLoading: string;
  titleInstall: (workflowName: string) => string;
  titleEdit: (workflowName: string) => string;
  /** Title when the modal was opened for an integration rather than one workflow. */
  titleIntegration: (integrationName: string) => string;
  /** Under the title: whether this enables a new workflow or edits the user's copy. */
  subtitleInstall: string;
  subtitleEdit: string;
  subtitleEditInactive: string;
  subtitleIntegration: string;
  /** Accessible name of the list of steps, and each step's name. */
  stepsLabel: string;
  stepChoose: string;
  stepConnect: string;
  stepConfigure: string;
  loading: string;
  /** Heading of the view shown when the modal could not open; the reason follows it. */
  loadFailed: string;
  workflowNotOffered: (workflowId: string) => string;
  retry: string;
  chooseIntro: (integrationName: string) => string;
  noWorkflows: (integrationName: string) => string;
  connectIntro: string;
  /** The button that leaves the connect step while something is still not connected. */
  connectAllFirst: string;
  continue: string;
  back: string;
  configureIntro: string;
  noSettings: string;
  /** Why a setting's value is refused (the service's rules, checked before saving). */
  valueRequired: (label: string) => string;
  numberRequired: (label: string) => string;
  numberAtLeast: (label: string, min: number) => string;
  numberAtMost: (label: string, max: number) => string;
  emailRequired: (label: string) => string;
  urlRequired: (label: string) => string;
  /** When the catalog gives no `patternMessage` of its own. */
  patternMismatch: (label: string) => string;
  optionRequired: (label: string) => string;
  textTooLong: (label: string, max: number) => string;
  /** Marks a required setting's label (the field is also `aria-required`). */
  requiredMark: string;
  /** The save button: install, edit, or apply the choices of the integration view. */
  enable: string;
  saveChanges: string;
  apply: string;
  saving: string;
  saveFailed: (reason: string) => string;
  fieldErrors: string;
  successInstall: string;
  successEdit: string;
  successIntegration: string;
  /** `workflowNames` is already a list in the element's locale (`A, B and C`). */
  successText: (workflowNames: string) => string;
  /** The integration view saved with no workflow switched on: said as it is, not as a success. */
  nothingOn: string;
  nothingOnText: (integrationName: string) => string;
  done: string;
  // A setting whose choices come from the user's own app (its combobox, choices.ts).
  /** Shown and announced while the choices are read from the app. */
  choicesLoading: string;
  /** No choice has the words typed (or the app has none). */
  noChoices: string;
  /** The button under the choices when the app has more of them. */
  loadMore: string;
  choicesFailed: (appName: string) => string;
  /** The app refused the user's connection (or has none): said above the Reconnect button. */
  choicesRefused: (appName: string) => string;
  reconnectApp: (appName: string) => string;
}

export const defaultConfigModalStrings: ConfigModalStrings = {
  ...defaultProblemStrings,
  ...defaultConnectStrings,
  ...defaultDisconnectStrings,
  close: 'Close',
  titleLoading: 'Set up integration',
  titleInstall: (name) => `Set up “${name}”`,
  titleEdit: (name) => `Settings of “${name}”`,
  titleIntegration: (name) => `Set up ${name}`,
  subtitleInstall: 'Connect your accounts and choose the settings, then enable the workflow.',
  subtitleEdit: 'You already use this workflow. Change its settings or reconnect an account.',
  subtitleEditInactive:
    'You already have this workflow; it is switched off. Change its settings or reconnect an account.',
  subtitleIntegration: 'Choose the workflows to use, connect your accounts and choose the settings.',
  stepsLabel: 'Steps',
  stepChoose: 'Choose',
  stepConnect: 'Connect',
  stepConfigure: 'Settings',
  loading: 'Loading…',
  loadFailed: 'This could not be opened.',
  workflowNotOffered: (id) =>
    `No workflow ${id} is on offer. Ask the app's developer to check the workflow-id it asks for.`,
  retry: 'Try again',
  chooseIntro: (name) => `Switch on the workflows you want to use with ${name}.`,
  noWorkflows: (name) => `No workflows use ${name} yet. When one is added, it appears here.`,
  connectIntro: 'Connect the accounts the workflow works with. Credentials are stored encrypted.',
  connectAllFirst: 'Connect every account above to continue.',
  continue: 'Continue',
  back: 'Back',
  configureIntro: 'Choose how the workflow behaves. You can change this later.',
  noSettings: 'There is nothing to set up here.',
  valueRequired: (label) => `Enter the ${label}; it is required.`,
  numberRequired: (label) => `${label} must be a number.`,
  numberAtLeast: (label, min) => `${label} must be at least ${min}.`,
  numberAtMost: (label, max) => `${label} must be at most ${max}.`,
  emailRequired: (label) => `${label} must be an e-mail address, such as name@example.com.`,
  urlRequired: (label) => `${label} must be a web address starting with https://.`,
  patternMismatch: (label) => `${label} is not in the expected form.`,
  optionRequired: (label) => `Choose one of the ${label} options.`,
  textTooLong: (label, max) => `${label} must be at most ${max} characters.`,
  requiredMark: 'required',
  enable: 'Enable workflow',
  saveChanges: 'Save changes',
  apply: 'Save',
  saving: 'Saving…',
  saveFailed: (reason) => `Your settings were not saved. ${reason} What you entered is kept; try again.`,
  fieldErrors: 'Some settings need a change. Correct the marked fields, then try again.',
  successInstall: 'Workflow enabled',
  successEdit: 'Changes saved',
  successIntegration: 'All set',
  successText: (names) => `${names}: your settings are saved and in use.`,
  nothingOn: 'Nothing is switched on',
  nothingOnText: (name) => `No workflow uses ${name} for you now. Switch one on here whenever you want.`,
  done: 'Done',
  choicesLoading: 'Loading choices…',
  noChoices: 'No choices match.',
  loadMore: 'Load more',
  choicesFailed: (app) => `The choices could not be read from ${app}.`,
  choicesRefused: (app) => `${app} did not accept your connection. Connect it again to choose from it.`,
  reconnectApp: (app) => `Reconnect ${app}`,
};
