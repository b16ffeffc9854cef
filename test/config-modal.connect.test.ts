import { expect, oneEvent } from '@open-wc/testing';
import type { ForgeConfigModal } from '../src/config-modal/config-modal.js';
import {
  ALL_EVENTS,
  allByRole,
  button,
  byRole,
  connectAccounts,
  fill,
  Harness,
  HUBSPOT_TO_SLACK,
  integrationRow,
  modalFixture,
  recordEvents,
  STRIPE_TO_SLACK,
  saysConnected,
  shadow,
  untilPart,
  untilRole,
  visibleText,
} from './support/config-modal.js';
import { consentInPopup, createUser, injectAnswer, serviceInfo } from './support/forge.js';
import { waitUntil } from './support/wait.js';

/** The connect row of an integration. */
function row(el: ForgeConfigModal, name: string): HTMLElement {
  return integrationRow(el, name);
}

const rowButton = (el: ForgeConfigModal, name: string) => allByRole<HTMLButtonElement>(row(el, name), 'button')[0]!;

async function openConnectStep(workflowId = HUBSPOT_TO_SLACK) {
  const userId = await createUser();
  const el = await modalFixture({ userId, workflowId });
  const events = recordEvents(el, ALL_EVENTS);
  await el.show();
  await untilPart(el, 'integration');
  return { el, events, userId };
}

const errorsOf = (events: Array<{ type: string; detail: unknown }>) =>
  events.filter((e) => e.type === 'forge-error').map((e) => (e.detail as { code: string }).code);

describe('<forge-config-modal> connect step', () => {
  it('says so when the browser blocks the sign-in window, and connects on a retry', async () => {
    const { el, events } = await openConnectStep();
    const realOpen = window.open;
    // What a popup blocker does: window.open answers null.
    window.open = () => null;
    try {
      rowButton(el, 'Slack').click();
      await untilRole(el, 'alert');
    } finally {
      window.open = realOpen;
    }
    expect(row(el, 'Slack').querySelector('[role="alert"]')!.textContent).to.include(
      'Your browser blocked the Slack sign-in window',
    );
    expect(errorsOf(events)).to.deep.equal(['oauth-blocked']);

    const retry = rowButton(el, 'Slack');
    expect(retry.textContent!.trim()).to.equal('Try again');
    retry.click();
    await consentInPopup('allow');
    await waitUntil(() => saysConnected(row(el, 'Slack')), 'Slack connects');
    // The popup's grant became a credential because this page confirmed it with the user's token.
    const confirmations = performance
      .getEntriesByType('resource')
      .filter((entry) => entry.name.endsWith('/credentials/slack/oauth/confirm'));
    expect(confirmations.length).to.equal(1);
    expect(byRole(row(el, 'Slack'), 'alert')).to.equal(null);
    expect(rowButton(el, 'Slack').textContent!.trim()).to.equal('Reconnect');
  });

  it('says so when the user closes the sign-in window', async () => {
    const { el, events } = await openConnectStep();
    rowButton(el, 'HubSpot').click();
    await waitUntil(() => visibleText(el).includes('Finish connecting in the HubSpot window'));
    expect(rowButton(el, 'HubSpot').getAttribute('aria-disabled')).to.equal('true');
    await consentInPopup('close');
    await untilRole(el, 'alert');
    expect(visibleText(el)).to.include(
      'The HubSpot window closed, or lost its link to this page, before the connection finished. If it is still open, close it',
    );
    expect(saysConnected(row(el, 'HubSpot'))).to.be.false;
    expect(errorsOf(events)).to.deep.equal(['oauth-closed']);
    expect(rowButton(el, 'HubSpot').textContent!.trim()).to.equal('Try again');
  });

  it('says so when the user denies access on the consent page', async () => {
    const { el, events } = await openConnectStep();
    rowButton(el, 'Slack').click();
    await consentInPopup('deny');
    await untilRole(el, 'alert');
    expect(visibleText(el)).to.include('Slack access was not allowed');
    expect(errorsOf(events)).to.deep.equal(['oauth-denied']);
  });

  it('gives up on a sign-in window after the time-out and closes it', async () => {
    const { el, events } = await openConnectStep();
    el.oauthTimeout = 300;
    rowButton(el, 'Slack').click();
    await untilRole(el, 'alert');
    expect(visibleText(el)).to.include('Connecting Slack took too long and was stopped');
    expect(errorsOf(events)).to.deep.equal(['oauth-timeout']);
  });

  it('refuses to open a sign-in address that is not https, and says so', async () => {
    const userId = await createUser();
    await connectAccounts(userId, ['stripe']);
    const { faultyBase } = await serviceInfo();
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK, apiBase: faultyBase });
    el.oauthTimeout = 2000;
    const events = recordEvents(el, ALL_EVENTS);
    await el.show();
    await untilPart(el, 'integration');
    // What a hostile service, or anyone between the page and an http: service, could answer.
    const page = window as unknown as { forgePwned?: boolean };
    await injectAnswer('POST', 'credentials/slack/oauth$', 200, { url: 'javascript:opener.forgePwned=true' });
    rowButton(el, 'Slack').click();
    await untilRole(el, 'alert');
    expect(page.forgePwned).to.equal(undefined);
    // The end user reads plain words; the host developer gets the cause in forge-error.
    expect(row(el, 'Slack').querySelector('[role="alert"]')!.textContent).to.include('Slack could not be connected.');
    expect(errorsOf(events)).to.deep.equal(['connect-failed']);
    const error = events.find((e) => e.type === 'forge-error')!.detail as { message: string };
    expect(error.message).to.include('The service sent a sign-in address this page does not open (javascript:)');
  });

  it('ignores messages that do not come from the service', async () => {
    const { el } = await openConnectStep();
    rowButton(el, 'Slack').click();
    await waitUntil(() => visibleText(el).includes('Finish connecting in the Slack window'));
    // A forged result posted by this page (another origin than the service's) changes nothing.
    window.postMessage({ type: 'forge-oauth', integration: 'slack', status: 'connected' }, '*');
    window.postMessage({ type: 'forge-oauth', integration: 'slack', status: 'authorized', grant: 'forged' }, '*');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(visibleText(el)).to.include('Finish connecting in the Slack window');
    await consentInPopup('deny');
    await untilRole(el, 'alert');
    expect(saysConnected(row(el, 'Slack'))).to.be.false;
  });

  it('shows connected accounts as connected, with a way to reconnect', async () => {
    const userId = await createUser();
    await connectAccounts(userId, ['stripe']);
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    await el.show();
    await untilPart(el, 'integration');
    expect(saysConnected(row(el, 'Stripe'))).to.be.true;
    expect(row(el, 'Stripe').querySelector('form')).to.equal(null);

    rowButton(el, 'Stripe').click();
    await untilRole(el, 'textbox', 'Secret key');
    expect(rowButton(el, 'Stripe').getAttribute('aria-expanded')).to.equal('true');
    fill(el, 'Secret key', 'sk_test_new');
    byRole<HTMLButtonElement>(row(el, 'Stripe'), 'button', 'Connect')!.click();
    await waitUntil(() => !row(el, 'Stripe').querySelector('form'), 'the form closes once saved');
    expect(saysConnected(row(el, 'Stripe'))).to.be.true;
  });

  it('asks for every required parameter before sending anything', async () => {
    const { el } = await openConnectStep(STRIPE_TO_SLACK);
    byRole<HTMLButtonElement>(row(el, 'Stripe'), 'button', 'Connect')!.click();
    const input = await new Harness(el).until(
      () => shadow(el).querySelector<HTMLInputElement>('input[aria-invalid="true"]'),
      'an invalid field',
    );
    expect(el.shadowRoot!.activeElement).to.equal(input);
    const describedBy = input.getAttribute('aria-describedby')!.split(' ');
    const texts = describedBy.map((id) => el.shadowRoot!.getElementById(id)!.textContent);
    expect(texts.join(' ')).to.include('Enter the Secret key.');
  });

  it('does not move on until every account is connected, and says why', async () => {
    const { el } = await openConnectStep();
    button(el, 'Continue')!.click();
    const alert = await untilPart(el, 'message');
    expect(alert.textContent).to.include('Connect every account above to continue.');
    expect(byRole(shadow(el), 'form', 'Settings')).to.equal(null);
  });

  it('closing the modal while a sign-in window is open stops waiting for it', async () => {
    const { el, events } = await openConnectStep();
    rowButton(el, 'Slack').click();
    await waitUntil(() => visibleText(el).includes('Finish connecting in the Slack window'));
    const closed = oneEvent(el, 'forge-after-hide');
    await el.hide();
    await closed;
    expect(errorsOf(events)).to.deep.equal([]);
    await el.show();
    await untilPart(el, 'integration');
    expect(visibleText(el)).not.to.include('Finish connecting');
  });
});
