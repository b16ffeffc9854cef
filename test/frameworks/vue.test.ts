import { expect, waitUntil } from '@open-wc/testing';
import '../../src/index.js';
import type { ForgeWorkflowList as ListElement } from '../../src/workflow-list/workflow-list.js';
import { serviceInfo, userToken } from '../support/forge.js';
import { installedWorkflow, loadFramework, mountPoint, switchIn, type ToggleDetail } from './support.js';

describe('Vue 3 with the elements in a template', () => {
  // Vue sets a bound value as a property only when the element has a property of exactly that
  // name, so objects and functions are bound in camelCase (`:tokenProvider`); a kebab-case
  // binding would become an attribute.
  it('binds properties with :camelCase and listens with @forge-…', async () => {
    const { createApp, version } = await loadFramework<typeof import('vue')>('vue');
    expect(version).to.match(/^3\./);
    const { apiBase } = await serviceInfo();
    const { userId, workflowId } = await installedWorkflow();
    const tokenProvider = () => userToken(userId);
    const strings = { enable: 'Switch on' };
    const toggles: ToggleDetail[] = [];
    const container = mountPoint();
    const app = createApp({
      template: `<forge-workflow-list :api-base="apiBase" :tokenProvider="tokenProvider" :strings="strings"
        @forge-toggle="onToggle"></forge-workflow-list>`,
      setup: () => ({
        apiBase,
        tokenProvider,
        strings,
        onToggle: (event: CustomEvent<ToggleDetail>) => toggles.push(event.detail),
      }),
    });
    app.config.compilerOptions.isCustomElement = (tag) => tag.startsWith('forge-');
    app.mount(container);

    const list = container.querySelector<ListElement>('forge-workflow-list')!;
    expect(list.apiBase).to.equal(apiBase);
    expect(list.tokenProvider).to.equal(tokenProvider);
    expect(list.strings).to.deep.equal(strings);
    const control = await switchIn(list);
    expect(list.shadowRoot!.textContent).to.include('Switch on');
    control.click();
    await waitUntil(() => toggles.length === 1, 'the @forge-toggle handler was never called');
    expect(toggles[0]).to.deep.equal({ workflowId, active: false });
    app.unmount();
    container.remove();
  });
});
