import { expect } from '@open-wc/testing';
import '../../src/index.js';
import type { ForgeIntegrationList as GridElement } from '../../src/integration-list/integration-list.js';
import type { ForgeWorkflowList as ListElement } from '../../src/workflow-list/workflow-list.js';
import {
  type ConnectDetail,
  expectBound,
  expectGridBound,
  gridBindings,
  listBindings,
  loadFramework,
  mountPoint,
  type ToggleDetail,
} from './support.js';

describe('Vue 3 with the elements in a template', () => {
  // Vue sets a bound value as a property only when the element has a property of exactly that
  // name, so objects and functions are bound in camelCase (`:tokenProvider`); a kebab-case
  // binding would become an attribute.
  it('binds properties with :camelCase and listens with @forge-…', async () => {
    const { createApp, version } = await loadFramework<typeof import('vue')>('vue');
    expect(version).to.match(/^3\./);
    const bindings = await listBindings();
    const { apiBase, tokenProvider, strings, onToggle } = bindings;
    const container = mountPoint();
    const app = createApp({
      template: `<forge-workflow-list :api-base="apiBase" :tokenProvider="tokenProvider" :strings="strings"
        @forge-toggle="onToggle"></forge-workflow-list>`,
      setup: () => ({
        apiBase,
        tokenProvider,
        strings,
        onToggle: (event: CustomEvent<ToggleDetail>) => onToggle(event.detail),
      }),
    });
    app.config.compilerOptions.isCustomElement = (tag) => tag.startsWith('forge-');
    app.mount(container);

    const list = container.querySelector<ListElement>('forge-workflow-list')!;
    // Vue hands the element a reactive copy of a bound object, not the object itself.
    await expectBound(list, bindings, { handler: 'the @forge-toggle handler', stringsCopied: true });
    app.unmount();
    container.remove();
  });

  it('binds the integration list the same way, and listens with @forge-connect', async () => {
    const { createApp } = await loadFramework<typeof import('vue')>('vue');
    const bindings = await gridBindings();
    const { apiBase, tokenProvider, strings, onConnect } = bindings;
    const container = mountPoint();
    const app = createApp({
      template: `<forge-integration-list :api-base="apiBase" :tokenProvider="tokenProvider" :strings="strings"
        @forge-connect="onConnect"></forge-integration-list>`,
      setup: () => ({
        apiBase,
        tokenProvider,
        strings,
        onConnect: (event: CustomEvent<ConnectDetail>) => onConnect(event.detail),
      }),
    });
    app.config.compilerOptions.isCustomElement = (tag) => tag.startsWith('forge-');
    app.mount(container);
    const grid = container.querySelector<GridElement>('forge-integration-list')!;
    await expectGridBound(grid, bindings, { handler: 'the @forge-connect handler', stringsCopied: true });
    app.unmount();
    container.remove();
  });
});
