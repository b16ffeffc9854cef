/**
 * `forge-embed`: registers `<forge-config-modal>`, `<forge-workflow-list>` and
 * `<forge-integration-list>` and exports their classes, the typed API client and the event
 * types. Importing only a class (`forge-embed/config-modal`, `forge-embed/workflow-list`,
 * `forge-embed/integration-list`) registers nothing.
 */
import './config-modal/define.js';
import './integration-list/define.js';
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
export { ForgeIntegrationList } from './integration-list/integration-list.js';
export type { IntegrationListStrings } from './integration-list/strings.js';
export { registerStrings, type Translation } from './internal/localize.js';
export type { Plural, PluralForms } from './internal/plural.js';
export type { TokenProvider } from './token/token-source.js';
export type { WorkflowListStrings } from './workflow-list/strings.js';
export { ForgeWorkflowList } from './workflow-list/workflow-list.js';
