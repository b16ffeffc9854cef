import { expect } from '@open-wc/testing';
import { executeServerCommand } from '@web/test-runner-commands';
import type { ForgeConfigModal } from '../src/config-modal/config-modal.js';
import type { ForgeIntegrationList } from '../src/integration-list/integration-list.js';
import type { ForgeWorkflowList } from '../src/workflow-list/workflow-list.js';
import { connectAccounts, HUBSPOT_TO_SLACK, install, STRIPE_TO_SLACK } from './support/config-modal.js';
import {
  clearFaults,
  connectIntegrations,
  createUser,
  injectFault,
  runWorkflow,
  serviceInfo,
  tokenUrl,
} from './support/forge.js';
import { allByPart, byPart, byRole, Harness } from './support/harness.js';
import { waitUntil } from './support/wait.js';

/**
 * The elements in every state, on a host page served with a strict Content-Security-Policy
 * (`default-src 'self'; script-src 'self'; style-src 'self'`, see web-test-runner.config.mjs):
 * no inline `<style>` element and no `style` attribute, which that policy blocks, ever. The page
 * records each `securitypolicyviolation` it sees; a test fails on the first one.
 */

type StrictWindow = Window & typeof globalThis & { violations: string[] };

const forge = <T>(action: string, args: Record<string, unknown> = {}) =>
  executeServerCommand<T, Record<string, unknown>>('forge', { action, ...args });

let frame: HTMLIFrameElement;
let page: StrictWindow;
let apiBase: string;
let faultyBase: string;

before(async () => {
  ({ apiBase, faultyBase } = await serviceInfo());
  // After the test page itself has loaded: a frame added earlier would hold its load up.
  if (document.readyState !== 'complete')
    await new Promise((resolve) => addEventListener('load', resolve, { once: true }));
  frame = document.createElement('iframe');
  frame.src = '/csp/page.html';
  frame.style.cssText = 'width: 800px; height: 900px; border: 0';
  const loaded = new Promise((resolve) => frame.addEventListener('load', resolve, { once: true }));
  document.body.append(frame);
  await loaded;
  page = frame.contentWindow as StrictWindow;
  await page.customElements.whenDefined('forge-workflow-list');
});
after(() => frame.remove());

afterEach(async function () {
  await clearFaults();
  // What a test left on the page (and a modal's dialog in the top layer) goes before the next.
  for (const el of [...page.document.body.children]) el.remove();
  expect(page.violations, `${this.currentTest?.title}: blocked by the page's policy`).to.deep.equal([]);
});

/** An element of the strict page, configured by attributes as a host page would. */
function create<E extends HTMLElement>(tag: string, attributes: Record<string, string>): E {
  const el = page.document.createElement(tag) as E;
  for (const [name, value] of Object.entries(attributes)) el.setAttribute(name, value);
  page.document.body.append(el);
  return el;
}

const ui = (el: HTMLElement) => new Harness(el);
const root = (el: HTMLElement) => el.shadowRoot!;

async function click(el: HTMLElement, name: string | RegExp) {
  (await ui(el).until(() => byRole<HTMLElement>(root(el), 'button', name), `button ${name}`)).click();
}

function type(el: HTMLElement, input: HTMLInputElement, value: string) {
  input.value = value;
  input.dispatchEvent(new page.Event('input', { bubbles: true, composed: true }));
  return el;
}

describe('strict Content-Security-Policy', function () {
  // Each test goes through many states against the real service, in one go.
  this.timeout(60_000);

  it('the page records a style the policy blocks (the check itself works)', async () => {
    const style = page.document.createElement('div');
    style.setAttribute('style', 'color: red');
    page.document.body.append(style);
    await waitUntil(() => page.violations.length > 0, 'the page saw no violation');
    expect(page.violations[0]).to.match(/^style-src/);
    page.violations.length = 0;
  });

  it('<forge-workflow-list>: loading, the rows with their run health, the Runs view with its technical details, the filter', async () => {
    const userId = await createUser();
    await connectIntegrations(userId, ['stripe', 'slack'], { revoked: true });
    const childId = await install(userId, STRIPE_TO_SLACK);
    await runWorkflow(childId, { amount: 120, currency: 'usd', customer: 'cus_123' });
    const list = create<ForgeWorkflowList>('forge-workflow-list', {
      'api-base': apiBase,
      'token-url': tokenUrl(userId),
      'filter-threshold': '0',
    });
    await ui(list).until(() => byPart(root(list), 'health-failed'), 'the failed run');
    expect(byPart(root(list), 'fix-button')).not.to.equal(null);

    await click(list, /^Runs/);
    const details = await ui(list).until(() => byPart(root(list), 'run'), 'a run');
    details.querySelector('summary')!.click();
    await ui(list).until(() => root(list).querySelector('details[open] pre'), 'the technical details');
    // The view's own layout holds: its runs sit in a grid, as its stylesheet says.
    expect(getComputedStyle(byPart(root(list), 'details')!).display).to.equal('grid');

    const filter = byPart<HTMLInputElement>(root(list), 'filter')!;
    type(list, filter, 'no such workflow');
    await ui(list).until(() => ui(list).text().includes('No workflow matches'), 'no matches');
    type(list, filter, '');
    await ui(list).until(() => byPart(root(list), 'row'), 'the rows again');
  });

  it('<forge-workflow-list>: empty, failed to load, and a switch that failed', async () => {
    const userId = await createUser();
    await connectIntegrations(userId, ['stripe', 'slack']);
    await install(userId, STRIPE_TO_SLACK);
    const empty = create<ForgeWorkflowList>('forge-workflow-list', {
      'api-base': apiBase,
      'token-url': tokenUrl(userId),
      integration: 'no-such-app',
    });
    await ui(empty).until(() => byPart(root(empty), 'empty'), 'the empty view');

    await injectFault('GET', '/workflow-summary', 500);
    const list = create<ForgeWorkflowList>('forge-workflow-list', {
      'api-base': faultyBase,
      'token-url': tokenUrl(userId),
    });
    await ui(list).until(() => byPart(root(list), 'error'), 'the load error');
    await click(list, 'Try again');
    const toggle = await ui(list).until(() => byPart<HTMLInputElement>(root(list), 'switch'), 'a switch');
    await injectFault('PUT', '/deactivate$', 500);
    toggle.click();
    await ui(list).until(() => byPart(root(list), 'row-error'), 'the row error');
  });

  it('<forge-workflow-list>: a long list, whose left-out rows are stood in for by spacers', async () => {
    const { apiBase: longBase, userId } = await forge<{ apiBase: string; userId: string }>('longList');
    const list = create<ForgeWorkflowList>('forge-workflow-list', { 'api-base': longBase });
    list.tokenProvider = () => forge<string>('longToken', { userId });
    await ui(list).until(() => root(list).querySelector('.gap'), 'a spacer');
    const gap = root(list).querySelector<HTMLElement>('.gap')!;
    expect(gap.getBoundingClientRect().height).to.be.greaterThan(100);
  });

  it('<forge-config-modal>: connect step, parameter form and its error, settings with a field error, saving, done, editing', async () => {
    const userId = await createUser();
    const modal = create<ForgeConfigModal>('forge-config-modal', {
      'api-base': apiBase,
      'token-url': tokenUrl(userId),
      'workflow-id': STRIPE_TO_SLACK,
    });
    await modal.show();
    await ui(modal).until(() => byPart(root(modal), 'integration'), 'the connect step');
    // Stripe's parameter form, sent empty: its field error.
    const stripeForm = root(modal).querySelector('form.parameters')!;
    stripeForm.querySelector<HTMLButtonElement>('button[type="submit"]')!.click();
    await ui(modal).until(() => byPart(root(modal), 'field-error'), 'the parameter error');
    await modal.hide();

    await connectAccounts(userId, ['stripe', 'slack']);
    await modal.show();
    await ui(modal).until(() => byRole(root(modal), 'form', 'Settings'), 'the settings');
    type(modal, ui(modal).field('Minimum amount'), 'lots');
    await click(modal, 'Enable workflow');
    await ui(modal).until(() => byPart(root(modal), 'field-error'), 'the field error');
    type(modal, ui(modal).field('Minimum amount'), '10');
    await click(modal, 'Enable workflow');
    await ui(modal).until(() => byRole(root(modal), 'button', 'Done'), 'the done view');
    await click(modal, 'Done');

    await modal.show();
    await ui(modal).until(() => byRole(root(modal), 'button', 'Save changes'), 'the edit view');
    // The connect step's accounts, and the confirmation before a disconnect: kept, then confirmed.
    await click(modal, 'Back');
    const slack = () => allByPart(root(modal), 'integration').find((row) => row.textContent!.includes('Slack'))!;
    await ui(modal).until(() => slack(), 'the connect step');
    const confirmation = async () => ui(modal).until(() => byPart(root(modal), 'confirm'), 'the confirmation');
    byRole<HTMLElement>(slack(), 'button', 'Disconnect')!.click();
    byRole<HTMLElement>(await confirmation(), 'button', 'Cancel')!.click();
    await waitUntil(() => !byPart(root(modal), 'confirm'), 'the confirmation closes');
    byRole<HTMLElement>(slack(), 'button', 'Disconnect')!.click();
    byRole<HTMLElement>(await confirmation(), 'button', 'Disconnect')!.click();
    await waitUntil(() => slack().textContent!.includes('Not connected'), 'Slack disconnected');
    await modal.hide();
  });

  it('<forge-config-modal>: failed to load, failed to save, and the integration view', async () => {
    const userId = await createUser();
    await connectAccounts(userId, ['hubspot', 'slack']);
    await injectFault('GET', '/setup', 500);
    const modal = create<ForgeConfigModal>('forge-config-modal', {
      'api-base': faultyBase,
      'token-url': tokenUrl(userId),
      'workflow-id': HUBSPOT_TO_SLACK,
    });
    await modal.show();
    await ui(modal).until(() => byRole(root(modal), 'button', 'Try again'), 'the load error');
    await click(modal, 'Try again');
    await ui(modal).until(() => byRole(root(modal), 'form', 'Settings'), 'the settings');
    await injectFault('POST', '/install$', 500);
    await click(modal, 'Enable workflow');
    await ui(modal).until(() => byPart(root(modal), 'message'), 'the save error');
    await modal.hide();

    const chooser = create<ForgeConfigModal>('forge-config-modal', {
      'api-base': apiBase,
      'token-url': tokenUrl(userId),
      integration: 'slack',
    });
    await chooser.show();
    await ui(chooser).until(() => byPart(root(chooser), 'switch'), 'the choose step');
    // Every workflow off: the integration view's "nothing is switched on".
    for (const control of allByPart<HTMLInputElement>(root(chooser), 'switch')) if (control.checked) control.click();
    await click(chooser, 'Continue');
    await click(chooser, 'Save');
    await ui(chooser).until(() => byRole(root(chooser), 'button', 'Done'), 'the done view');
    await chooser.hide();
  });

  it('<forge-workflow-list> opens the modal from a row', async () => {
    const userId = await createUser();
    const list = create<ForgeWorkflowList>('forge-workflow-list', {
      'api-base': apiBase,
      'token-url': tokenUrl(userId),
      theme: 'dark',
    });
    (await ui(list).until(() => byPart<HTMLElement>(root(list), 'enable-button'), 'an Enable button')).click();
    const modal = await ui(list).until(
      () => root(list).querySelector<ForgeConfigModal>('forge-config-modal'),
      'the modal',
    );
    await ui(modal).until(() => byPart(root(modal), 'integration'), 'the connect step');
    await modal.hide();
  });

  it('<forge-integration-list>: loading, failed to load, the grid with its states, search, a parameter form and its error, the confirmation, the modal', async () => {
    const userId = await createUser();
    await connectIntegrations(userId, ['slack']);
    await injectFault('GET', '/workflow-summary', 500);
    const grid = create<ForgeIntegrationList>('forge-integration-list', {
      'api-base': faultyBase,
      'token-url': tokenUrl(userId),
      'filter-threshold': '0',
      theme: 'dark',
    });
    // The CDN entry loads the element's chunk once the page holds one.
    await page.customElements.whenDefined('forge-integration-list');
    await ui(grid).until(() => byPart(root(grid), 'error'), 'the load error');
    await click(grid, 'Try again');
    await ui(grid).until(() => byPart(root(grid), 'grid'), 'the apps');
    // Its own layout holds: the cards sit in a grid, as its stylesheet says.
    expect(getComputedStyle(byPart(root(grid), 'grid')!).display).to.equal('grid');

    type(grid, byPart<HTMLInputElement>(root(grid), 'search')!, 'no such app');
    await ui(grid).until(() => ui(grid).text().includes('No app matches'), 'no matches');
    type(grid, byPart<HTMLInputElement>(root(grid), 'search')!, '');

    await click(grid, 'Connect Stripe');
    const form = await ui(grid).until(() => byPart(root(grid), 'parameters'), 'the parameter form');
    form.querySelector<HTMLButtonElement>('button[type="submit"]')!.click();
    await ui(grid).until(() => root(grid).querySelector('[aria-invalid="true"]'), 'the field error');

    await click(grid, 'Disconnect Slack');
    const confirm = await ui(grid).until(() => byPart<HTMLDialogElement>(root(grid), 'confirm'), 'the confirmation');
    confirm.close();
    await ui(grid).until(() => !byPart(root(grid), 'confirm'), 'the confirmation closes');

    await click(grid, /^Workflows \(0 on\) Slack/);
    const modal = await ui(grid).until(
      () => root(grid).querySelector<ForgeConfigModal>('forge-config-modal'),
      'the modal',
    );
    await ui(modal).until(() => byPart(root(modal), 'switch'), 'the choose step');
    await modal.hide();
  });

  it('<forge-integration-list>: "Connected as", "Needs reconnecting", the category filter, waiting for a sign-in window and its Cancel, after a disconnect, empty', async () => {
    const userId = await createUser();
    await connectIntegrations(userId, ['slack'], { account: 'Acme HQ' });
    await connectIntegrations(userId, ['hubspot'], { broken: true });
    const grid = create<ForgeIntegrationList>('forge-integration-list', {
      'api-base': apiBase,
      'token-url': tokenUrl(userId),
      'filter-threshold': '0',
    });
    await page.customElements.whenDefined('forge-integration-list');
    const cardOf = (name: string) =>
      allByPart(root(grid), 'app').find((card) => byPart(card, 'name')!.textContent === name)!;
    await ui(grid).until(() => byPart(root(grid), 'grid'), 'the apps');
    const stateOf = (name: string) => byPart(cardOf(name), 'state')!.textContent!;
    expect(stateOf('Slack')).to.include('Connected as Acme HQ');
    expect(stateOf('HubSpot')).to.include('Needs reconnecting');

    const category = byPart<HTMLSelectElement>(root(grid), 'category')!;
    category.value = 'Chat';
    category.dispatchEvent(new page.Event('change'));
    await ui(grid).until(() => allByPart(root(grid), 'app').length === 1, 'the Chat apps');
    category.value = '';
    category.dispatchEvent(new page.Event('change'));
    await ui(grid).until(() => allByPart(root(grid), 'app').length > 1, 'every app');

    // The sign-in window opens; Cancel stops waiting for it (and closes it) and says so.
    await click(grid, 'Reconnect HubSpot');
    await ui(grid).until(() => byPart(cardOf('HubSpot'), 'cancel-button'), 'waiting for the window');
    byPart<HTMLElement>(cardOf('HubSpot'), 'cancel-button')!.click();
    await ui(grid).until(() => byPart(cardOf('HubSpot'), 'app-error'), 'the canceled note');

    await click(grid, 'Disconnect Slack');
    const confirm = await ui(grid).until(() => byPart<HTMLDialogElement>(root(grid), 'confirm'), 'the confirmation');
    byRole<HTMLElement>(confirm, 'button', 'Disconnect')!.click();
    await ui(grid).until(() => stateOf('Slack').includes('Not connected'), 'Slack disconnected');

    const empty = create<ForgeIntegrationList>('forge-integration-list', {
      'api-base': apiBase,
      'token-url': tokenUrl(userId),
      integration: 'no-such-app',
    });
    await ui(empty).until(() => byPart(root(empty), 'empty'), 'the empty state');
  });
});
