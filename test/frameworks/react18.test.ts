import { expect, waitUntil } from '@open-wc/testing';
import type { createRoot } from 'react-dom/client';
import type * as Wrapper from '../../src/react/index.js';
import type { ForgeWorkflowList as ListElement } from '../../src/workflow-list/workflow-list.js';
import { serviceInfo, userToken } from '../support/forge.js';
import { eventually, installedWorkflow, loadFramework, mountPoint, switchIn, type ToggleDetail } from './support.js';

/** React 18 and the built `forge-embed/react`, bundled together as an app's bundler would. */
interface React18App {
  React: typeof import('react');
  createRoot: typeof createRoot;
  ForgeWorkflowList: typeof Wrapper.ForgeWorkflowList;
  ForgeConfigModal: typeof Wrapper.ForgeConfigModal;
}

describe('React 18 through forge-embed/react', () => {
  it('runs on React 18', async () => {
    const { React } = await loadFramework<React18App>('react18');
    expect(React.version).to.match(/^18\./);
  });

  it('passes props to the list as properties and its events to onForge… props', async () => {
    const { React, createRoot, ForgeWorkflowList } = await loadFramework<React18App>('react18');
    const { apiBase } = await serviceInfo();
    const { userId, workflowId } = await installedWorkflow();
    // Objects and functions: React 18 alone would turn these into "[object Object]" attributes.
    const tokenProvider = () => userToken(userId);
    const strings = { enable: 'Switch on' };
    const toggles: ToggleDetail[] = [];
    const container = mountPoint();
    const root = createRoot(container);
    root.render(
      React.createElement(ForgeWorkflowList, {
        apiBase,
        tokenProvider,
        strings,
        onForgeToggle: (event) => toggles.push(event.detail),
      }),
    );

    const list = await eventually(
      () => container.querySelector<ListElement>('forge-workflow-list'),
      'nothing rendered',
    );
    expect(list.tokenProvider).to.equal(tokenProvider);
    expect(list.strings).to.equal(strings);
    const control = await switchIn(list!);
    expect(list.shadowRoot!.textContent).to.include('Switch on');
    control.click();
    await waitUntil(() => toggles.length === 1, 'onForgeToggle was never called');
    expect(toggles[0]).to.deep.equal({ workflowId, active: false });
    root.unmount();
    container.remove();
  });
});
