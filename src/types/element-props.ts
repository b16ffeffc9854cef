import type { ForgeConfigModal } from '../config-modal/config-modal.js';
import type { ForgeIntegrationList } from '../integration-list/integration-list.js';
import type { ForgeWorkflowList } from '../workflow-list/workflow-list.js';

export type { ConfigModalEventName, IntegrationListEventName, WorkflowListEventName } from '../events.js';

/**
 * The properties of each element that framework templates may set; the React and Vue
 * declarations map them, and the events of `events.ts`, to their own conventions.
 */
export type ConfigModalProperties = Partial<
  Pick<
    ForgeConfigModal,
    | 'apiBase'
    | 'tokenUrl'
    | 'tokenProvider'
    | 'workflowId'
    | 'integration'
    | 'reconnect'
    | 'open'
    | 'theme'
    | 'strings'
    | 'oauthTimeout'
    | 'oauthReturnUrl'
  >
>;

export type WorkflowListProperties = Partial<
  Pick<
    ForgeWorkflowList,
    | 'apiBase'
    | 'tokenUrl'
    | 'tokenProvider'
    | 'integration'
    | 'theme'
    | 'strings'
    | 'modalStrings'
    | 'filterThreshold'
    | 'refreshInterval'
    | 'oauthTimeout'
    | 'oauthReturnUrl'
  >
>;

export type IntegrationListProperties = Partial<
  Pick<
    ForgeIntegrationList,
    | 'apiBase'
    | 'tokenUrl'
    | 'tokenProvider'
    | 'integration'
    | 'theme'
    | 'strings'
    | 'filterThreshold'
    | 'oauthTimeout'
    | 'oauthReturnUrl'
  >
>;
