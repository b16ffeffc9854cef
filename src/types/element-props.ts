import type { ForgeConfigModal } from '../config-modal/config-modal.js';
import type { ForgeWorkflowList } from '../workflow-list/workflow-list.js';

/**
 * The properties and events of each element that framework templates may set and listen to;
 * the React and Vue declarations map them to their own conventions.
 */
export type ConfigModalProperties = Partial<
  Pick<
    ForgeConfigModal,
    | 'apiBase'
    | 'tokenUrl'
    | 'tokenProvider'
    | 'workflowId'
    | 'integration'
    | 'open'
    | 'theme'
    | 'strings'
    | 'oauthTimeout'
  >
>;

export type ConfigModalEventName =
  | 'forge-show'
  | 'forge-after-show'
  | 'forge-hide'
  | 'forge-after-hide'
  | 'forge-install'
  | 'forge-update'
  | 'forge-toggle'
  | 'forge-error';

export type WorkflowListProperties = Partial<
  Pick<
    ForgeWorkflowList,
    'apiBase' | 'tokenUrl' | 'tokenProvider' | 'integration' | 'theme' | 'strings' | 'modalStrings' | 'filterThreshold'
  >
>;

export type WorkflowListEventName = 'forge-toggle' | 'forge-install' | 'forge-update' | 'forge-error';
