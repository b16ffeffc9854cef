/**
 * `forge-embed`: registers `<forge-config-modal>` and `<forge-workflow-list>` and exports their
 * classes, the typed API client and the event types. Importing only a class
 * (`forge-embed/config-modal`, `forge-embed/workflow-list`) registers nothing.
 */
import './config-modal/define.js';
import './workflow-list/define.js';

export * from './api/index.js';
export { ForgeConfigModal } from './config-modal/config-modal.js';
export type { ConfigModalStrings } from './config-modal/strings.js';
export { ConfigError, ForgeError, type ForgeErrorCode, TokenError, type TokenErrorCode } from './errors.js';
export type {
  ForgeEvent,
  ForgeEventDetails,
  ForgeEventName,
  HideReason,
} from './events.js';
export { registerStrings, type Translation } from './internal/localize.js';
export type { Plural, PluralForms } from './internal/plural.js';
export type { TokenProvider } from './token/token-source.js';
export type { WorkflowListStrings } from './workflow-list/strings.js';
export { ForgeWorkflowList } from './workflow-list/workflow-list.js';
