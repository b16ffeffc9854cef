/**
 * `forge-embed/jsx`: types for using the elements directly in React 19 JSX, which sets a custom
 * element's props as properties and listens to `on<event-name>` props. Load them once, e.g. with
 * `import type {} from 'forge-embed/jsx';` in a `.d.ts` file of your app:
 *
 * ```tsx
 * <forge-workflow-list api-base="https://forge.example.com" token-url="/forge-token"
 *   onforge-toggle={(event) => console.log(event.detail.active)} />
 * ```
 */
import type { DetailedHTMLProps, HTMLAttributes } from 'react';
import type { ForgeConfigModal } from '../config-modal/config-modal.js';
import type { ForgeEvent, ForgeEventName } from '../events.js';
import type { ForgeIntegrationList } from '../integration-list/integration-list.js';
import type { ForgeWorkflowList } from '../workflow-list/workflow-list.js';
import type {
  ConfigModalEventName,
  ConfigModalProperties,
  IntegrationListEventName,
  IntegrationListProperties,
  WorkflowListEventName,
  WorkflowListProperties,
} from './element-props.js';

type Handlers<Names extends ForgeEventName> = { [K in Names as `on${K}`]?: (event: ForgeEvent<K>) => void };

/** What every element takes, as attributes (kebab-case) or as properties. */
interface SharedProps {
  'api-base'?: string;
  'token-url'?: string;
}

export interface ForgeConfigModalJsxProps
  extends SharedProps,
    ConfigModalProperties,
    Handlers<ConfigModalEventName>,
    DetailedHTMLProps<HTMLAttributes<ForgeConfigModal>, ForgeConfigModal> {
  'workflow-id'?: string;
  'oauth-timeout'?: number | string;
  'oauth-return-url'?: string;
}

export interface ForgeWorkflowListJsxProps
  extends SharedProps,
    WorkflowListProperties,
    Handlers<WorkflowListEventName>,
    DetailedHTMLProps<HTMLAttributes<ForgeWorkflowList>, ForgeWorkflowList> {
  'filter-threshold'?: number | string;
  'refresh-interval'?: number | string;
  'oauth-timeout'?: number | string;
  'oauth-return-url'?: string;
}

export interface ForgeIntegrationListJsxProps
  extends SharedProps,
    IntegrationListProperties,
    Handlers<IntegrationListEventName>,
    DetailedHTMLProps<HTMLAttributes<ForgeIntegrationList>, ForgeIntegrationList> {
  'filter-threshold'?: number | string;
  'oauth-timeout'?: number | string;
  'oauth-return-url'?: string;
}

declare module 'react' {
  namespace JSX {
    interface IntrinsicElements {
      'forge-config-modal': ForgeConfigModalJsxProps;
      'forge-workflow-list': ForgeWorkflowListJsxProps;
      'forge-integration-list': ForgeIntegrationListJsxProps;
    }
  }
}
