import { expect } from '@open-wc/testing';
import type { createRoot } from 'react-dom/client';
import type { ForgeIntegrationList as GridElement } from '../../src/integration-list/integration-list.js';
import type * as Wrapper from '../../src/react/index.js';
import type { ForgeWorkflowList as ListElement } from '../../src/workflow-list/workflow-list.js';
import {
  eventually,
  expectBound,
  expectGridBound,
  gridBindings,
  listBindings,
  loadFramework,
  mountPoint,
} from './support.js';

/** React 18 and the built `forge-embed/react`, bundled together as an app's bundler would. */
interface React18App {
  React: typeof import('react');
  createRoot: typeof createRoot;
  ForgeWorkflowList: typeof Wrapper.ForgeWorkflowList;
  ForgeConfigModal: typeof Wrapper.ForgeConfigModal;
  ForgeIntegrationList: typeof Wrapper.ForgeIntegrationList;
}

describe('React 18 through forge-embed/react', () => {
  it('runs on React 18', async () => {
    const { React } = await loadFramework<React18App>('react18');
    expect(React.version).to.match(/^18\./);
  });

  it('passes props to the list as properties and its events to onForge… props', async () => {
    const { React, createRoot, ForgeWorkflowList } = await loadFramework<React18App>('react18');
    // Objects and functions: React 18 alone would turn these into "[object Object]" attributes.
    const bindings = await listBindings();
    const { apiBase, tokenProvider, strings, onToggle } = bindings;
    const container = mountPoint();
    const root = createRoot(container);
    root.render(
      React.createElement(ForgeWorkflowList, {
        apiBase,
        tokenProvider,
        strings,
        onForgeToggle: (event) => onToggle(event.detail),
      }),
    );

    const list = await eventually(
      () => container.querySelector<ListElement>('forge-workflow-list'),
      'nothing rendered',
    );
    await expectBound(list, bindings, { handler: 'onForgeToggle' });
    root.unmount();
    container.remove();
  });

  it('passes props to the integration list as properties and its events to onForge… props', async () => {
    const { React, createRoot, ForgeIntegrationList } = await loadFramework<React18App>('react18');
    const bindings = await gridBindings();
    const { apiBase, tokenProvider, strings, onConnect } = bindings;
    const container = mountPoint();
    const root = createRoot(container);
    root.render(
      React.createElement(ForgeIntegrationList, {
        apiBase,
        tokenProvider,
        strings,
        onForgeConnect: (event) => onConnect(event.detail),
      }),
    );
    const grid = await eventually(
      () => container.querySelector<GridElement>('forge-integration-list'),
      'nothing rendered',
    );
    await expectGridBound(grid, bindings, { handler: 'onForgeConnect' });
    root.unmount();
    container.remove();
  });
});
