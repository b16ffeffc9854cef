import type { ForgeConfigModal } from '../config-modal/config-modal.js';
import type { ForgeWorkflowList } from '../workflow-list/workflow-list.js';

export type { ConfigModalEventName, WorkflowListEventName } from '../events.js';

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
  >
>;
