/**
 * `forge-embed/vue`: types for the elements in Vue 3 templates (checked by vue-tsc / Volar).
 * Load them once, e.g. with `import type {} from 'forge-embed/vue';` in a `.d.ts` file, and tell
 * Vue's compiler they are custom elements (`compilerOptions.isCustomElement: (tag) =>
 * tag.startsWith('forge-')`). Bind functions and objects in camelCase (`:tokenProvider`,
 * `:strings`): Vue sets a property only when the element has one of exactly that name, and
 * turns anything else into an attribute.
 *
 * ```vue
 * <forge-workflow-list api-base="https://forge.example.com" :tokenProvider="getToken"
 *   @forge-toggle="(event) => log(event.detail.active)" />
 * ```
 */
import type { DefineComponent } from 'vue';
import type { ForgeEvent, ForgeEventName, PascalCase } from '../events.js';
import type {
  ConfigModalEventName,
  ConfigModalProperties,
  IntegrationListEventName,
  IntegrationListProperties,
  WorkflowListEventName,
  WorkflowListProperties,
} from './element-props.js';

/** `@forge-toggle` in a template is the `onForgeToggle` prop to Vue's type checker. */
type Handlers<Names extends ForgeEventName> = {
  [K in Names as `on${PascalCase<K>}`]?: (event: ForgeEvent<K>) => void;
};

/** Vue's type checker matches `api-base="…"` and `:tokenProvider="…"` to these camelCase props. */
export type ForgeConfigModalVueProps = ConfigModalProperties & Handlers<ConfigModalEventName>;

export type ForgeWorkflowListVueProps = WorkflowListProperties & Handlers<WorkflowListEventName>;

export type ForgeIntegrationListVueProps = IntegrationListProperties & Handlers<IntegrationListEventName>;

declare module 'vue' {
  interface GlobalComponents {
    'forge-config-modal': DefineComponent<ForgeConfigModalVueProps>;
    'forge-workflow-list': DefineComponent<ForgeWorkflowListVueProps>;
    'forge-integration-list': DefineComponent<ForgeIntegrationListVueProps>;
  }
}
