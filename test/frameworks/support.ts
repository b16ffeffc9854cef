import { expect } from '@open-wc/testing';
import { executeServerCommand } from '@web/test-runner-commands';
import type { ForgeEventDetails } from '../../src/events.js';
import type { ForgeIntegrationList } from '../../src/integration-list/integration-list.js';
import type { IntegrationListStrings } from '../../src/integration-list/strings.js';
import type { ForgeWorkflowList } from '../../src/workflow-list/workflow-list.js';
import { serviceInfo, tokenUrl, userToken } from '../support/forge.js';
import { waitUntil } from '../support/wait.js';

/** A new user with one enabled workflow ("Post new Stripe payments to Slack"), made on the server side. */
export const installedWorkflow = () =>
  executeServerCommand<{ userId: string; workflowId: string }, { action: string }>('frameworks', {
    action: 'installedWorkflow',
  });

/**
 * A framework as an app ships it, served by test/frameworks/plugin.mjs. The URL is built at run
 * time so that neither TypeScript nor the dev server takes it for a package name.
 */
export const loadFramework = <T>(name: 'react18' | 'react19' | 'react19ssr' | 'vue'): Promise<T> =>
  import(/* @vite-ignore */ `${'/__frameworks__/'}${name}.js`) as Promise<T>;

export type ToggleDetail = ForgeEventDetails['forge-toggle'];

/** What `find` answers once it answers something, within ten seconds. */
export async function eventually<T>(find: () => T | null | undefined, message: string): Promise<T> {
  let found: T | null | undefined;
  await waitUntil(() => (found = find()) != null, message);
  return found!;
}

/** The on/off switch the list shows for the enabled workflow, once it has loaded. */
export const switchIn = (list: Element) =>
  eventually(
    () => list.shadowRoot?.querySelector<HTMLInputElement>('[role="switch"]'),
    'the enabled workflow never showed its switch',
  );

/** A fresh element to mount an app in, removed after the test. */
export function mountPoint(): HTMLElement {
  const container = document.createElement('div');
  document.body.append(container);
  return container;
}

/**
 * What an app binds on <forge-workflow-list> in the framework tests: a string, a function and an
 * object (the two a framework may wrongly turn into "[object Object]" attributes), and a
 * forge-toggle handler that collects into `toggles`. `workflowId` is the user's enabled workflow.
 */
export async function listBindings() {
  const { apiBase } = await serviceInfo();
  const { userId, workflowId } = await installedWorkflow();
  const toggles: ToggleDetail[] = [];
  return {
    apiBase,
    tokenProvider: () => userToken(userId),
    strings: { enable: 'Switch on' },
    toggles,
    onToggle: (detail: ToggleDetail) => toggles.push(detail),
    workflowId,
  };
}

/**
 * Checks that the list got every binding as a property and that a user's switch reaches the app's
 * handler (named `handler` in the failure message). `strings` must be the very object bound,
 * unless the framework hands elements a copy of it (`stringsCopied`: Vue's reactive proxy).
 */
export async function expectBound(
  list: ForgeWorkflowList,
  bindings: Awaited<ReturnType<typeof listBindings>>,
  { handler, stringsCopied = false }: { handler: string; stringsCopied?: boolean },
) {
  expect(list.apiBase).to.equal(bindings.apiBase);
  expect(list.tokenProvider).to.equal(bindings.tokenProvider);
  if (stringsCopied) expect(list.strings).to.deep.equal(bindings.strings);
  else expect(list.strings).to.equal(bindings.strings);
  const control = await switchIn(list);
  expect(list.shadowRoot!.textContent).to.include('Switch on');
  control.click();
  // A switch waits for the service: as long as the suite's other waits for it.
  await waitUntil(() => bindings.toggles.length === 1, `${handler} was never called`);
  expect(bindings.toggles[0]).to.deep.equal({ workflowId: bindings.workflowId, active: false });
}

/**
 * A <forge-workflow-list> configured by attributes alone, as a plain page writes it, for a new
 * user with one enabled workflow; shown once its switch is. Remove `container` after the test.
 */
export async function plainPageList() {
  const { apiBase } = await serviceInfo();
  const { userId, workflowId } = await installedWorkflow();
  const container = mountPoint();
  const list = document.createElement('forge-workflow-list');
  list.setAttribute('api-base', apiBase);
  list.setAttribute('token-url', tokenUrl(userId));
  container.append(list);
  await switchIn(list);
  return { list, container, workflowId };
}

export type ConnectDetail = ForgeEventDetails['forge-connect'];

/**
 * What an app binds on <forge-integration-list> in the framework tests, as `listBindings` does
 * for the list: a string, a function, an object, and a forge-connect handler that collects into
 * `connects`. The user has connected Stripe (a form of required parameters) and Slack.
 */
export async function gridBindings() {
  const { apiBase } = await serviceInfo();
  const { userId } = await installedWorkflow();
  const connects: ConnectDetail[] = [];
  return {
    apiBase,
    tokenProvider: () => userToken(userId),
    strings: { reconnect: 'Link again' } as Partial<IntegrationListStrings>,
    connects,
    onConnect: (detail: ConnectDetail) => {
      connects.push(detail);
    },
  };
}

/**
 * Checks that the grid got every binding as a property and that a user's reconnect of Stripe
 * (through its form) reaches the app's handler, named `handler` in the failure message.
 */
export async function expectGridBound(
  grid: ForgeIntegrationList,
  bindings: Awaited<ReturnType<typeof gridBindings>>,
  { handler, stringsCopied = false }: { handler: string; stringsCopied?: boolean },
) {
  expect(grid.apiBase).to.equal(bindings.apiBase);
  expect(grid.tokenProvider).to.equal(bindings.tokenProvider);
  if (stringsCopied) expect(grid.strings).to.deep.equal(bindings.strings);
  else expect(grid.strings).to.equal(bindings.strings);
  const root = grid.shadowRoot!;
  const reconnect = await eventually(
    () =>
      [...root.querySelectorAll<HTMLElement>('[part~="reconnect-button"]')].find((b) =>
        /Stripe/.test(b.getAttribute('aria-label')!),
      ),
    'the grid never showed Stripe as connected',
  );
  expect(reconnect.textContent).to.include('Link again');
  reconnect.click();
  const input = await eventually(() => root.querySelector<HTMLInputElement>('[part~="parameters"] input'), 'no form');
  input.value = 'sk_test_framework';
  input.dispatchEvent(new Event('input'));
  await grid.updateComplete;
  root.querySelector<HTMLButtonElement>('[part~="parameters"] [type="submit"]')!.click();
  await waitUntil(() => bindings.connects.length === 1, `${handler} was never called`);
  expect(bindings.connects[0]).to.deep.equal({ integration: 'stripe' });
}
