import { expect } from '@open-wc/testing';
import type { createRoot } from 'react-dom/client';
import '../../src/index.js';
import type { ForgeIntegrationList as GridElement } from '../../src/integration-list/integration-list.js';
import type { ForgeWorkflowList as ListElement } from '../../src/workflow-list/workflow-list.js';
import {
  type ConnectDetail,
  eventually,
  expectBound,
  expectGridBound,
  gridBindings,
  listBindings,
  loadFramework,
  mountPoint,
  type ToggleDetail,
} from './support.js';

/** React 19 uses the elements directly: props become properties, `onforge-…` props listeners. */
interface React19App {
  React: typeof import('react');
  createRoot: typeof createRoot;
}

describe('React 19 with the elements directly', () => {
  it('passes props to the list as properties and its events to onforge-… props', async () => {
    const { React, createRoot } = await loadFramework<React19App>('react19');
    expect(React.version).to.match(/^19\./);
    const bindings = await listBindings();
    const { apiBase, tokenProvider, strings, onToggle } = bindings;
    const container = mountPoint();
    const root = createRoot(container);
    root.render(
      React.createElement('forge-workflow-list', {
        'api-base': apiBase,
        tokenProvider,
        strings,
        'onforge-toggle': (event: CustomEvent<ToggleDetail>) => onToggle(event.detail),
      }),
    );

    const list = await eventually(
      () => container.querySelector<ListElement>('forge-workflow-list'),
      'nothing rendered',
    );
    await expectBound(list, bindings, { handler: 'the onforge-toggle handler' });
    root.unmount();
    container.remove();
  });

  it('passes props to the integration list as properties and its events to onforge-… props', async () => {
    const { React, createRoot } = await loadFramework<React19App>('react19');
    const bindings = await gridBindings();
    const { apiBase, tokenProvider, strings, onConnect } = bindings;
    const container = mountPoint();
    const root = createRoot(container);
    root.render(
      React.createElement('forge-integration-list', {
        'api-base': apiBase,
        tokenProvider,
        strings,
        'onforge-connect': (event: CustomEvent<ConnectDetail>) => onConnect(event.detail),
      }),
    );
    const grid = await eventually(
      () => container.querySelector<GridElement>('forge-integration-list'),
      'nothing rendered',
    );
    await expectGridBound(grid, bindings, { handler: 'the onforge-connect handler' });
    root.unmount();
    container.remove();
  });
});
