import { expect, waitUntil } from '@open-wc/testing';
import type { createRoot } from 'react-dom/client';
import '../../src/index.js';
import type { ForgeWorkflowList as ListElement } from '../../src/workflow-list/workflow-list.js';
import { serviceInfo, userToken } from '../support/forge.js';
import { eventually, installedWorkflow, loadFramework, mountPoint, switchIn, type ToggleDetail } from './support.js';

/** React 19 uses the elements directly: props become properties, `onforge-…` props listeners. */
interface React19App {
  React: typeof import('react');
  createRoot: typeof createRoot;
}

describe('React 19 with the elements directly', () => {
  it('passes props to the list as properties and its events to onforge-… props', async () => {
    const { React, createRoot } = await loadFramework<React19App>('react19');
    expect(React.version).to.match(/^19\./);
    const { apiBase } = await serviceInfo();
    const { userId, workflowId } = await installedWorkflow();
    const tokenProvider = () => userToken(userId);
    const strings = { enable: 'Switch on' };
    const toggles: ToggleDetail[] = [];
    const container = mountPoint();
    const root = createRoot(container);
    root.render(
      React.createElement('forge-workflow-list', {
        'api-base': apiBase,
        tokenProvider,
        strings,
        'onforge-toggle': (event: CustomEvent<ToggleDetail>) => toggles.push(event.detail),
      }),
    );

    const list = await eventually(
      () => container.querySelector<ListElement>('forge-workflow-list'),
      'nothing rendered',
    );
    expect(list.apiBase).to.equal(apiBase);
    expect(list.tokenProvider).to.equal(tokenProvider);
    expect(list.strings).to.equal(strings);
    const control = await switchIn(list!);
    expect(list.shadowRoot!.textContent).to.include('Switch on');
    control.click();
    await waitUntil(() => toggles.length === 1, 'the onforge-toggle handler was never called');
    expect(toggles[0]).to.deep.equal({ workflowId, active: false });
    root.unmount();
    container.remove();
  });
});
