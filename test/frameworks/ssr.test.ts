import { expect, nextFrame } from '@open-wc/testing';
import { executeServerCommand } from '@web/test-runner-commands';
import type { hydrateRoot } from 'react-dom/client';
import type { ForgeConfigModal } from '../../src/config-modal/config-modal.js';
import type { ConfigModalStrings } from '../../src/config-modal/strings.js';
import type { ForgeIntegrationList } from '../../src/integration-list/integration-list.js';
import type { IntegrationListStrings } from '../../src/integration-list/strings.js';
import type { WorkflowListStrings } from '../../src/workflow-list/strings.js';
import type { ForgeWorkflowList } from '../../src/workflow-list/workflow-list.js';
import { serviceInfo, tokenUrl, userToken } from '../support/forge.js';
import { waitUntil } from '../support/wait.js';
import {
  type ConnectDetail,
  expectGridBound,
  installedWorkflow,
  loadFramework,
  mountPoint,
  switchIn,
  type ToggleDetail,
} from './support.js';

/**
 * A Next.js-style page: React 19 renders it on the server (react-dom/server, in Node, with the
 * built package), the browser gets the HTML with the elements already defined, and hydrateRoot
 * takes it over. What this pins, and the README's Next.js section says:
 * - through `forge-embed/react`, every prop arrives as a property and every `onForge…` handler is
 *   called, after hydration as after a client render;
 * - used directly, only string attributes arrive: React 19 neither sets object/function props
 *   nor adds `onforge-…` listeners while it hydrates (facebook/react#35446);
 * - hydration reports no mismatch: the elements add no attributes of their own.
 */
interface SsrFramework {
  React: typeof import('react');
  hydrateRoot: typeof hydrateRoot;
  SsrApp: (props: { config: unknown }) => import('react').ReactNode;
}

/** "Post new Stripe payments to Slack", the parent the modals open for. */
const STRIPE_TO_SLACK = '64b14ff1704e5bc1057506db';

describe('React 19 server rendering, hydrated', () => {
  // The app's bundle (React, react-dom and the built package, by rollup) is built on first
  // request: about 20 s on a busy 2-core machine, which is no part of what the tests measure.
  before(async function () {
    this.timeout(90_000);
    await loadFramework('react19ssr');
  });

  it('hydrates the list and the modal: the wrappers get every prop and handler, direct use only attributes', async () => {
    const { React, hydrateRoot, SsrApp } = await loadFramework<SsrFramework>('react19ssr');
    const { apiBase } = await serviceInfo();
    const { userId, workflowId } = await installedWorkflow();
    const strings: Partial<WorkflowListStrings> = { enable: 'Switch on' };
    const modalStrings: Partial<ConfigModalStrings> = { close: 'Dismiss' };
    const serverConfig = { apiBase, tokenUrl: tokenUrl(userId), workflowId: STRIPE_TO_SLACK, strings, modalStrings };

    const html = await executeServerCommand<string, unknown>('frameworks', { action: 'ssr', config: serverConfig });
    // The server sends string props of the elements used directly as attributes, nothing else.
    const server = new DOMParser().parseFromString(html, 'text/html');
    expect(server.querySelector('#direct forge-config-modal')!.getAttribute('workflow-id')).to.equal(STRIPE_TO_SLACK);
    expect(server.querySelector('#direct forge-workflow-list')!.getAttributeNames().sort()).to.deep.equal([
      'api-base',
      'token-url',
    ]);

    const container = mountPoint();
    container.innerHTML = html;
    // The page's script has defined the elements: they render before React hydrates.
    await nextFrame();
    const hydrationErrors: unknown[] = [];
    const realConsoleError = console.error;
    console.error = (...args: unknown[]) => {
      hydrationErrors.push(args.map(String).join(' '));
      realConsoleError(...args);
    };

    const calls: string[] = [];
    const toggles: ToggleDetail[] = [];
    const tokenProvider = () => userToken(userId);
    const config = {
      ...serverConfig,
      tokenProvider,
      onToggle: (where: string, detail: ToggleDetail) => {
        calls.push(`${where} onToggle`);
        toggles.push(detail);
      },
      onAfterShow: (where: string) => calls.push(`${where} onAfterShow`),
    };
    const root = hydrateRoot(container, React.createElement(SsrApp, { config }), {
      onRecoverableError: (error) => hydrationErrors.push(error),
    });
    try {
      const wrappedList = container.querySelector<ForgeWorkflowList>('#wrapped forge-workflow-list')!;
      const wrappedModal = container.querySelector<ForgeConfigModal>('#wrapped forge-config-modal')!;
      const directList = container.querySelector<ForgeWorkflowList>('#direct forge-workflow-list')!;
      const directModal = container.querySelector<ForgeConfigModal>('#direct forge-config-modal')!;
      await waitUntil(() => wrappedList.tokenProvider === tokenProvider, 'hydration never set the wrapper’s props');

      // Through the wrappers: properties, objects and functions included, and handlers.
      expect(wrappedList.apiBase).to.equal(apiBase);
      expect(wrappedList.strings).to.equal(strings);
      expect(wrappedModal.strings).to.equal(modalStrings);
      expect(wrappedModal.workflowId).to.equal(STRIPE_TO_SLACK);
      (await switchIn(wrappedList)).click();
      await waitUntil(() => calls.includes('wrapped onToggle'), 'the wrapper’s onForgeToggle was never called');
      expect(toggles).to.deep.equal([{ workflowId, active: false }]);
      expect(wrappedList.shadowRoot!.textContent).to.not.include('Set token-url');
      await wrappedModal.show();
      expect(calls).to.include('wrapped onAfterShow');
      expect(wrappedModal.shadowRoot!.querySelector('[part~="close-button"]')!.getAttribute('aria-label')).to.equal(
        'Dismiss',
      );
      await wrappedModal.hide();

      // Used directly: the attributes arrive, the property and the handlers do not.
      expect(directList.apiBase).to.equal(apiBase);
      expect(directList.tokenUrl).to.equal(tokenUrl(userId));
      expect(directList.tokenProvider).to.equal(undefined);
      expect(directList.strings).to.deep.equal({});
      expect(directModal.strings).to.deep.equal({});
      const directToggles: ToggleDetail[] = [];
      directList.addEventListener('forge-toggle', (event) => directToggles.push(event.detail));
      // It works on its token-url, and reports to a listener the page adds itself.
      (await switchIn(directList)).click();
      await waitUntil(() => directToggles.length === 1, 'the list used directly never toggled');
      let shown = 0;
      directModal.addEventListener('forge-after-show', () => shown++);
      await directModal.show();
      await directModal.hide();
      expect(shown).to.equal(1);
      expect(calls).to.deep.equal(['wrapped onToggle', 'wrapped onAfterShow']);

      expect(hydrationErrors.filter((e) => /hydrat|did(n't| not) match/i.test(String(e)))).to.deep.equal([]);
    } finally {
      console.error = realConsoleError;
      root.unmount();
      container.remove();
    }
  });

  // The page of the test above (its framework bundle is built by then), for <forge-integration-list>.
  it('hydrates the integration list: the wrapper gets every prop and handler, direct use only attributes', async () => {
    const { React, hydrateRoot, SsrApp } = await loadFramework<SsrFramework>('react19ssr');
    const { apiBase } = await serviceInfo();
    const { userId } = await installedWorkflow();
    const gridStrings: Partial<IntegrationListStrings> = { reconnect: 'Link again' };
    const serverConfig = { apiBase, tokenUrl: tokenUrl(userId), workflowId: STRIPE_TO_SLACK, gridStrings };
    const html = await executeServerCommand<string, unknown>('frameworks', { action: 'ssr', config: serverConfig });
    const server = new DOMParser().parseFromString(html, 'text/html');
    expect(server.querySelector('#direct forge-integration-list')!.getAttributeNames().sort()).to.deep.equal([
      'api-base',
      'token-url',
    ]);

    const container = mountPoint();
    container.innerHTML = html;
    await nextFrame();
    const hydrationErrors: unknown[] = [];
    const tokenProvider = () => userToken(userId);
    const connects: ConnectDetail[] = [];
    const calls: string[] = [];
    const config = {
      ...serverConfig,
      tokenProvider,
      onToggle: () => undefined,
      onAfterShow: () => undefined,
      onConnect: (where: string, detail: ConnectDetail) => {
        calls.push(`${where} onConnect`);
        connects.push(detail);
      },
    };
    const root = hydrateRoot(container, React.createElement(SsrApp, { config }), {
      onRecoverableError: (error) => hydrationErrors.push(error),
    });
    try {
      const wrapped = container.querySelector<ForgeIntegrationList>('#wrapped forge-integration-list')!;
      const direct = container.querySelector<ForgeIntegrationList>('#direct forge-integration-list')!;
      await waitUntil(() => wrapped.tokenProvider === tokenProvider, 'hydration never set the wrapper’s props');
      const bindings = { apiBase, tokenProvider, strings: gridStrings, connects, onConnect: () => undefined };
      await expectGridBound(wrapped, bindings, { handler: 'the wrapper’s onForgeConnect' });
      expect(calls).to.deep.equal(['wrapped onConnect']);
      // Used directly: the attributes arrive, the property and the handler do not.
      expect(direct.tokenUrl).to.equal(tokenUrl(userId));
      expect(direct.tokenProvider).to.equal(undefined);
      expect(direct.strings).to.deep.equal({});
      expect(hydrationErrors).to.deep.equal([]);
    } finally {
      root.unmount();
      container.remove();
    }
  });
});
