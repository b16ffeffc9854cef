import { expect, fixture, html, oneEvent } from '@open-wc/testing';
import { sendKeys } from '@web/test-runner-commands';
import { nothing } from 'lit';
import { ForgeClient } from '../src/api/index.js';
import type { UserConnection, UserWithWorkflows } from '../src/api/types.js';
import type { ForgeConfigModal } from '../src/config-modal/config-modal.js';
import type { ForgeEventName } from '../src/events.js';
import '../src/integration-list/define.js';
import type { ForgeIntegrationList } from '../src/integration-list/integration-list.js';
import {
  clearFaults,
  connectIntegrations,
  consentInPopup,
  createUser,
  gatheredRequests,
  gatherRequests,
  HUBSPOT_TO_SLACK,
  hostApi,
  injectAnswer,
  injectFault,
  STRIPE_TO_SLACK,
  serviceInfo,
  tokenUrl,
  userToken,
} from './support/forge.js';
import { accessibleName, Harness } from './support/harness.js';
import { waitUntil } from './support/wait.js';

/** The demo catalog's apps, in the order its workflows first use them. */
const APPS = ['Stripe', 'Slack', 'HubSpot', 'Google Sheets', 'Mailchimp'];

let apiBase: string;
let faultyBase: string;
before(async () => ({ apiBase, faultyBase } = await serviceInfo()));
afterEach(() => clearFaults());

async function renderGrid(userId: string, { base = apiBase, integration = '' } = {}) {
  const el = await fixture<ForgeIntegrationList>(
    html`<forge-integration-list
      api-base=${base}
      token-url=${tokenUrl(userId)}
      integration=${integration || nothing}
    ></forge-integration-list>`,
  );
  const ui = new Harness(el);
  await ui.until(() => ui.part('grid') ?? ui.part('empty') ?? ui.part('error'), 'the apps');
  return { el, ui };
}

/** The names on the cards, in order (cards far off screen are not rendered, so not their innerText). */
const appNames = (ui: Harness) => ui.parts('app').map((c) => ui.part('name', c)!.textContent);

/** The card of the app named `name`. */
function card(ui: Harness, name: string): HTMLElement {
  const found = ui.parts('app').find((c) => ui.part('name', c)?.textContent === name);
  if (!found) throw new Error(`No card for ${name}: ${ui.text()}`);
  return found;
}
/** An element's text as one line, whether or not the card is on screen. */
const words = (element: Element) => element.textContent!.replace(/\s+/g, ' ').trim();
const stateOf = (ui: Harness, name: string) => words(ui.part('state', card(ui, name))!);
const buttonsOf = (ui: Harness, name: string) => ui.roles('button', undefined, card(ui, name)).map(accessibleName);
/** The accessible name of what has focus in the grid. */
const focused = (ui: Harness) => accessibleName(ui.root.activeElement!);

/** Records every forge event that reaches `el`. */
function recordEvents(el: HTMLElement, ...types: ForgeEventName[]): CustomEvent[] {
  const seen: CustomEvent[] = [];
  for (const type of types) el.addEventListener(type, (event) => seen.push(event as CustomEvent));
  return seen;
}

async function connections(userId: string): Promise<UserConnection[]> {
  return new ForgeClient({ baseUrl: apiBase, credential: await userToken(userId) }).listCredentials();
}

describe('<forge-integration-list>', () => {
  it('shows each app the workflows use, with its description, category and state in words', async () => {
    const userId = await createUser();
    await connectIntegrations(userId, ['slack']);
    const { el, ui } = await renderGrid(userId);
    expect(appNames(ui)).to.deep.equal(APPS);
    const slack = card(ui, 'Slack');
    expect(words(ui.part('description', slack)!)).to.equal('Team chat: channels, direct messages and notifications.');
    expect(words(ui.part('category', slack)!)).to.equal('Chat');
    expect(stateOf(ui, 'Slack')).to.equal('✓ Connected');
    expect(stateOf(ui, 'HubSpot')).to.equal('– Not connected');
    expect(buttonsOf(ui, 'Slack')).to.deep.equal(['Reconnect Slack', 'Disconnect Slack', 'Workflows (0 on) Slack']);
    expect(buttonsOf(ui, 'HubSpot')).to.deep.equal(['Connect HubSpot', 'Workflows (0 on) HubSpot']);
    // The icon is decorative (the name is beside it), on the light plate.
    const icon = ui.part<HTMLImageElement>('icon', slack)!;
    expect(icon.alt).to.equal('');
    expect(getComputedStyle(icon).backgroundColor).to.equal('rgb(255, 255, 255)');
    await expect(el).to.be.accessible();
  });

  it('says "Connected as" the account and "Needs reconnecting", with a glyph beside the words', async () => {
    const userId = await createUser();
    await injectAnswer('GET', '/credentials$', 200, {
      data: [
        { integration: 'slack', connectedAt: new Date().toISOString(), status: 'connected', account: 'Acme HQ' },
        { integration: 'hubspot', connectedAt: new Date().toISOString(), status: 'broken' },
      ],
    });
    const { el, ui } = await renderGrid(userId, { base: faultyBase });
    expect(stateOf(ui, 'Slack')).to.equal('✓ Connected as Acme HQ');
    expect(stateOf(ui, 'HubSpot')).to.equal('! Needs reconnecting');
    expect(ui.part('state', card(ui, 'HubSpot'))!.getAttribute('part')).to.include('state-failed');
    expect(buttonsOf(ui, 'HubSpot')[0]).to.equal('Reconnect HubSpot');
    await expect(el).to.be.accessible();
  });

  it('counts the switched-on workflows of each app and opens the modal with them', async () => {
    const userId = await createUser();
    await connectIntegrations(userId, ['stripe', 'slack', 'hubspot']);
    const client = new ForgeClient({ baseUrl: apiBase, credential: await userToken(userId) });
    await client.installWorkflow(STRIPE_TO_SLACK.id);
    const off = await client.installWorkflow(HUBSPOT_TO_SLACK.id);
    await client.deactivateWorkflow(off.workflowId);
    const { el, ui } = await renderGrid(userId);
    expect(buttonsOf(ui, 'Slack').at(-1)).to.equal('Workflows (1 on) Slack');
    expect(buttonsOf(ui, 'HubSpot').at(-1)).to.equal('Workflows (0 on) HubSpot');

    ui.role('button', 'Workflows (1 on) Slack')!.click();
    await oneEvent(el, 'forge-after-show');
    const modal = ui.part<ForgeConfigModal>('modal')!;
    expect(modal.integration).to.equal('slack');
    const inModal = new Harness(modal);
    await inModal.until(() => inModal.role('switch', STRIPE_TO_SLACK.name), 'the Slack workflows');
    // Switching one on in the modal shows in the count once the modal closes.
    inModal.role<HTMLInputElement>('switch', HUBSPOT_TO_SLACK.name)!.click();
    await modal.updateComplete;
    inModal.role('button', 'Continue')!.click();
    await inModal.until(() => inModal.role('button', 'Save'), 'the settings step');
    inModal.role('button', 'Save')!.click();
    await inModal.until(() => inModal.role('button', 'Done'), 'the saved modal');
    inModal.role('button', 'Done')!.click();
    await waitUntil(() => buttonsOf(ui, 'Slack').at(-1) === 'Workflows (2 on) Slack', 'the new count');
  });

  it('connects an app through its sign-in window and says as which account', async () => {
    const userId = await createUser();
    const { el, ui } = await renderGrid(userId);
    const events = recordEvents(el, 'forge-connect', 'forge-error');
    const connecting = oneEvent(el, 'forge-connect');
    ui.role('button', 'Connect Slack')!.click();
    await consentInPopup('allow');
    const connected = await connecting;
    expect(connected.detail.integration).to.equal('slack');
    await el.updateComplete;
    expect(stateOf(ui, 'Slack')).to.match(/^✓ Connected/);
    expect((await connections(userId)).map((c) => c.integration)).to.deep.equal(['slack']);
    expect(events.map((e) => e.type)).to.deep.equal(['forge-connect']);
    // Focus stays on the card, on the button that took the place of Connect.
    expect(focused(ui)).to.equal('Reconnect Slack');
    await expect(el).to.be.accessible();
  });

  it('says why a sign-in window ended without a connection', async () => {
    const userId = await createUser();
    const { el, ui } = await renderGrid(userId);
    const failed = oneEvent(el, 'forge-error');
    ui.role('button', 'Connect Slack')!.click();
    await consentInPopup('deny');
    const error = await failed;
    expect(error.detail.code).to.equal('oauth-denied');
    await el.updateComplete;
    expect(words(ui.part('app-error', card(ui, 'Slack'))!)).to.include('Slack access was not allowed');
    expect(stateOf(ui, 'Slack')).to.equal('– Not connected');
    await expect(el).to.be.accessible();
  });

  it('connects an app with required parameters through a form on its card', async () => {
    const userId = await createUser();
    const { el, ui } = await renderGrid(userId);
    ui.role('button', 'Connect Stripe')!.click();
    const form = await ui.until(() => ui.part('parameters', card(ui, 'Stripe')), 'the form');
    expect(ui.root.activeElement).to.equal(ui.field('Secret key'));
    ui.role('button', 'Connect', form)!.click();
    await el.updateComplete;
    expect(ui.text(form)).to.include('Enter the Secret key.');
    expect(ui.field('Secret key').getAttribute('aria-invalid')).to.equal('true');
    await expect(el).to.be.accessible();

    ui.field('Secret key').focus();
    await sendKeys({ type: 'sk_test_grid' });
    const connected = oneEvent(el, 'forge-connect');
    await sendKeys({ press: 'Enter' });
    await connected;
    await el.updateComplete;
    expect(ui.part('parameters')).to.equal(null);
    expect(stateOf(ui, 'Stripe')).to.equal('✓ Connected');
    expect((await connections(userId)).map((c) => c.integration)).to.deep.equal(['stripe']);
  });

  it('disconnects after a confirmation that names the workflows it switches off', async () => {
    const userId = await createUser();
    await connectIntegrations(userId, ['stripe', 'slack']);
    const client = new ForgeClient({ baseUrl: apiBase, credential: await userToken(userId) });
    const { workflowId } = await client.installWorkflow(STRIPE_TO_SLACK.id);
    const { el, ui } = await renderGrid(userId);
    const events = recordEvents(el, 'forge-disconnect', 'forge-connect');
    const trigger = ui.role('button', 'Disconnect Slack')!;
    trigger.focus();
    trigger.click();
    const dialog = await ui.until(() => ui.part<HTMLDialogElement>('confirm'), 'the confirmation');
    await el.updateComplete;
    expect(dialog.open).to.be.true;
    expect(ui.text(dialog)).to.include('Disconnect Slack?');
    expect(ui.text(dialog)).to.include(STRIPE_TO_SLACK.name);
    // The safe answer has focus.
    expect(ui.root.activeElement?.textContent?.trim()).to.equal('Cancel');
    await expect(el).to.be.accessible();

    // Escape cancels, and focus goes back to the button that asked.
    await sendKeys({ press: 'Escape' });
    await waitUntil(() => !ui.part('confirm'), 'the confirmation closes');
    expect(ui.root.activeElement).to.equal(trigger);
    expect(events).to.have.length(0);

    trigger.click();
    await ui.until(() => ui.part('confirm'), 'the confirmation again');
    ui.role('button', 'Disconnect', ui.part('confirm')!)!.click();
    const disconnected = await oneEvent(el, 'forge-disconnect');
    expect(disconnected.detail).to.deep.equal({ integration: 'slack', switchedOff: [workflowId] });
    await el.updateComplete;
    expect(stateOf(ui, 'Slack')).to.equal('– Not connected');
    expect(buttonsOf(ui, 'Slack')).to.deep.equal(['Connect Slack', 'Workflows (0 on) Slack']);
    expect(focused(ui)).to.equal('Connect Slack');
    expect(events.map((e) => e.type)).to.deep.equal(['forge-disconnect']);
    await expect(el).to.be.accessible();
    // The service agrees: Slack is not connected, and the workflow that needed it is off.
    expect((await connections(userId)).map((c) => c.integration)).to.deep.equal(['stripe']);
    expect((await hostApi<UserWithWorkflows>('GET', `/user/${userId}`)).body.workflows[0]!.active).to.equal(false);
  });

  it('keeps the connection as it was when a disconnect fails, and says why', async () => {
    const userId = await createUser();
    await connectIntegrations(userId, ['slack']);
    await injectFault('DELETE', '/credentials/slack$', 500);
    const { el, ui } = await renderGrid(userId, { base: faultyBase });
    ui.role('button', 'Disconnect Slack')!.click();
    await ui.until(() => ui.part('confirm'), 'the confirmation');
    ui.role('button', 'Disconnect', ui.part('confirm')!)!.click();
    const error = await oneEvent(el, 'forge-error');
    expect(error.detail).to.include({ code: 'disconnect-failed', status: 500 });
    await el.updateComplete;
    expect(words(ui.part('app-error', card(ui, 'Slack'))!)).to.equal(
      'Slack was not disconnected. Something went wrong. If it keeps happening, contact support.',
    );
    expect(stateOf(ui, 'Slack')).to.equal('✓ Connected');
    await expect(el).to.be.accessible();
  });

  it('searches by name, description and category, and filters by category, past the threshold', async () => {
    const userId = await createUser();
    const { el, ui } = await renderGrid(userId);
    expect(ui.part('search')).to.equal(null);
    el.filterThreshold = 3;
    await el.updateComplete;
    const search = ui.part<HTMLInputElement>('search')!;
    search.focus();
    await sendKeys({ type: 'crm' });
    await el.updateComplete;
    expect(appNames(ui)).to.deep.equal(['HubSpot']);
    expect(ui.text(ui.role('status')!)).to.equal('1 of 5 apps shown');
    search.value = '';
    search.dispatchEvent(new Event('input'));
    const category = ui.part<HTMLSelectElement>('category')!;
    category.value = 'Payments';
    category.dispatchEvent(new Event('change'));
    await el.updateComplete;
    expect(appNames(ui)).to.deep.equal(['Stripe']);
    search.value = 'slack';
    search.dispatchEvent(new Event('input'));
    await el.updateComplete;
    expect(ui.text()).to.include('No app matches your search.');
    await expect(el).to.be.accessible();
  });

  it('shows the apps of the workflows that use the `integration` it is given', async () => {
    const userId = await createUser();
    const { ui } = await renderGrid(userId, { integration: 'mailchimp' });
    await waitUntil(() => ui.parts('app').length === 3, 'the filtered apps');
    expect(appNames(ui)).to.deep.equal(['HubSpot', 'Mailchimp', 'Google Sheets']);
  });

  it('says so when no workflow uses an app', async () => {
    const userId = await createUser();
    const el = await fixture<ForgeIntegrationList>(
      html`<forge-integration-list api-base=${apiBase} token-url=${tokenUrl(userId)} integration="no-such-app"></forge-integration-list>`,
    );
    const ui = new Harness(el);
    await ui.until(() => ui.part('empty'), 'the empty state');
    expect(ui.text()).to.include('No apps to connect');
    await expect(el).to.be.accessible();
  });

  it('shows a loading state, then a failed load with a retry that works', async () => {
    const userId = await createUser();
    await injectFault('GET', '/workflow-summary', 500);
    const el = await fixture<ForgeIntegrationList>(
      html`<forge-integration-list api-base=${faultyBase} token-url=${tokenUrl(userId)}></forge-integration-list>`,
    );
    const ui = new Harness(el);
    // Listened for before the axe check, which may take longer than the failure does to come.
    const failed = oneEvent(el, 'forge-error');
    expect(ui.part('skeleton')).to.not.equal(null);
    await expect(el).to.be.accessible();
    const error = await failed;
    expect(error.detail.code).to.equal('load-failed');
    await el.updateComplete;
    expect(ui.text(ui.part('error')!)).to.include('Your apps could not be loaded.');
    await expect(el).to.be.accessible();
    ui.part('retry-button')!.click();
    await ui.until(() => ui.part('grid'), 'the apps after a retry');
    expect(ui.parts('app')).to.have.length(APPS.length);
  });

  it('loads with one round trip after the token: three reads side by side', async () => {
    const userId = await createUser();
    // The proxy holds the element's reads until three wait together: sent side by side they go
    // as one group, sent one after another each would wait its second and go alone.
    await gatherRequests('GET', '^/forge/2021-12/', 3);
    await renderGrid(userId, { base: faultyBase });
    expect(await gatheredRequests()).to.deep.equal([
      ['/forge/2021-12/credentials', '/forge/2021-12/workflow-health', '/forge/2021-12/workflow-summary'],
    ]);
  });

  it('is operable by keyboard: Tab reaches each card button in order', async () => {
    const userId = await createUser();
    const { ui } = await renderGrid(userId);
    ui.role('button', 'Connect Stripe')!.focus();
    await sendKeys({ press: 'Tab' });
    expect(focused(ui)).to.equal('Workflows (0 on) Stripe');
    await sendKeys({ press: 'Tab' });
    expect(focused(ui)).to.equal('Connect Slack');
    await sendKeys({ press: 'Enter' });
    // Enter on an OAuth app opens its sign-in window; closing it is reported on the card.
    await consentInPopup('close');
    await ui.until(() => ui.part('app-error', card(ui, 'Slack')), 'the closed window');
    expect(words(ui.part('app-error', card(ui, 'Slack'))!)).to.include('window closed');
  });

  it('fires nothing for changes made in code', async () => {
    const userId = await createUser();
    await connectIntegrations(userId, ['slack']);
    const { el } = await renderGrid(userId);
    const events = recordEvents(el, 'forge-connect', 'forge-disconnect');
    el.integration = 'slack';
    await el.refresh();
    await hostApi<UserWithWorkflows>('GET', `/user/${userId}`);
    expect(events).to.have.length(0);
  });
});
