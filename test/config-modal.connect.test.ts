import { expect, oneEvent } from '@open-wc/testing';
import { sendKeys } from '@web/test-runner-commands';
import type { ForgeConfigModal } from '../src/config-modal/config-modal.js';
import {
  ALL_EVENTS,
  allByRole,
  button,
  byPart,
  byRole,
  childrenOf,
  connectAccounts,
  expectAccessible,
  fill,
  Harness,
  HUBSPOT_TO_SLACK,
  install,
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
import {
  connectIntegrations,
  consentInPopup,
  createUser,
  injectAnswer,
  injectFault,
  serviceInfo,
} from './support/forge.js';
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
    // While the window is open, the row's button cancels the wait.
    expect(rowButton(el, 'HubSpot').textContent!.trim()).to.equal('Cancel');
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

  it('Cancel while the sign-in window is open stops waiting for it and says so', async () => {
    const { el, events } = await openConnectStep();
    rowButton(el, 'Slack').click();
    await consentInPopup('find');
    await waitUntil(() => rowButton(el, 'Slack').textContent!.trim() === 'Cancel', 'Connect has become Cancel');
    rowButton(el, 'Slack').click();
    const note = await untilRole(el, 'alert');
    expect(note.textContent).to.include('Connecting Slack was canceled. If its window is still open, close it.');
    expect(rowButton(el, 'Slack').textContent!.trim()).to.equal('Connect');
    expect(visibleText(el)).not.to.include('Finish connecting');
    // A user's choice, not a failure.
    expect(errorsOf(events)).to.deep.equal([]);
    await expectAccessible(el);
  });
});

/** What an element says, its spaces made single. */
const says = (element: Element) => element.textContent!.replace(/\s+/g, ' ');

/** The confirmation before a disconnect, once it is open. */
const untilConfirm = (el: ForgeConfigModal) =>
  new Harness(el).until(() => byPart<HTMLDialogElement>(shadow(el), 'confirm') ?? undefined, 'the confirmation');

const rowNamed = (el: ForgeConfigModal, name: string, button: string) =>
  byRole<HTMLButtonElement>(row(el, name), 'button', button);

describe('<forge-config-modal> connect step: which account, whether it works, disconnecting', () => {
  it('shows the account the app named, and a connection the app refused as "Needs reconnecting"', async () => {
    const userId = await createUser();
    await connectIntegrations(userId, ['slack'], { account: 'Acme Workspace' });
    await connectIntegrations(userId, ['hubspot'], { broken: true });
    const el = await modalFixture({ userId, workflowId: HUBSPOT_TO_SLACK });
    await el.show();
    await untilPart(el, 'integration');
    expect(says(row(el, 'Slack'))).to.include('Connected as Acme Workspace');
    const hubspot = row(el, 'HubSpot');
    expect(says(hubspot)).to.include('Needs reconnecting');
    expect(saysConnected(hubspot)).to.be.false;
    // Said in words and with an icon, never by colour alone; a broken one is no reason to move on.
    expect(hubspot.querySelector('.status svg')).not.to.equal(null);
    button(el, 'Continue')!.click();
    expect((await untilPart(el, 'message')).textContent).to.include('Connect every account above to continue.');
    await expectAccessible(el);
  });

  it('Reconnect on a connection the app refused connects it again', async () => {
    const userId = await createUser();
    await connectIntegrations(userId, ['slack']);
    await connectIntegrations(userId, ['hubspot'], { broken: true });
    const el = await modalFixture({ userId, workflowId: HUBSPOT_TO_SLACK });
    const events = recordEvents(el, ALL_EVENTS);
    await el.show();
    await untilPart(el, 'integration');
    rowNamed(el, 'HubSpot', 'Reconnect')!.click();
    await consentInPopup('allow');
    await waitUntil(() => saysConnected(row(el, 'HubSpot')), 'HubSpot connects again');
    expect(says(row(el, 'HubSpot'))).not.to.include('Needs reconnecting');
    expect(events.filter((e) => e.type === 'forge-connect').map((e) => e.detail)).to.deep.equal([
      { integration: 'hubspot' },
    ]);
    await expectAccessible(el);
  });

  it('Disconnect asks first, naming the workflows it switches off; Escape keeps the connection, Disconnect ends it', async () => {
    const userId = await createUser();
    await connectAccounts(userId, ['stripe', 'slack', 'hubspot']);
    const payments = await install(userId, STRIPE_TO_SLACK);
    const deals = await install(userId, HUBSPOT_TO_SLACK);
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    const events = recordEvents(el, ALL_EVENTS);
    await el.show();
    await untilRole(el, 'form', 'Settings');
    button(el, 'Back')!.click();
    await untilPart(el, 'integration');

    // Pressed from the keyboard: a real activation, as a user's (the confirmation's Escape then
    // closes it alone; a script's click gives none, and browsers group such dialogs' Escape).
    const disconnect = rowNamed(el, 'Slack', 'Disconnect')!;
    disconnect.focus();
    await sendKeys({ press: 'Enter' });
    const confirm = await untilConfirm(el);
    await waitUntil(() => confirm.open, 'the confirmation is shown');
    const title = shadow(el).getElementById(confirm.getAttribute('aria-labelledby')!)!;
    expect(title.textContent).to.equal('Disconnect Slack?');
    const text = shadow(el).getElementById(confirm.getAttribute('aria-describedby')!)!;
    expect(text.textContent).to.include('These workflows need Slack. Disconnecting switches them off:');
    expect([...text.querySelectorAll('li')].map((li) => li.textContent)).to.have.members([
      'Post new Stripe payments to Slack',
      'Announce won HubSpot deals in Slack',
    ]);
    // The safe answer has focus.
    expect(shadow(el).activeElement?.textContent?.trim()).to.equal('Cancel');
    await expectAccessible(el);

    await sendKeys({ press: 'Escape' });
    await waitUntil(() => !byPart(shadow(el), 'confirm'), 'the confirmation closes');
    expect(el.open, 'Escape closed only the confirmation').to.be.true;
    expect(shadow(el).activeElement).to.equal(disconnect, 'focus returns to Disconnect');
    expect(saysConnected(row(el, 'Slack'))).to.be.true;
    expect((await childrenOf(userId)).map((c) => c.active)).to.deep.equal([true, true]);

    await sendKeys({ press: 'Enter' });
    const again = await untilConfirm(el);
    byRole<HTMLButtonElement>(again, 'button', 'Disconnect')!.click();
    await waitUntil(() => says(row(el, 'Slack')).includes('Not connected'), 'Slack is disconnected');
    expect(rowNamed(el, 'Slack', 'Connect')).not.to.equal(null);
    expect(rowNamed(el, 'Slack', 'Disconnect')).to.equal(null);
    expect(saysConnected(row(el, 'Stripe'))).to.be.true;
    const disconnected = events.filter((e) => e.type === 'forge-disconnect').map((e) => e.detail);
    expect(disconnected).to.deep.equal([{ integration: 'slack', switchedOff: [payments, deals] }]);
    expect((await childrenOf(userId)).map((c) => c.active)).to.deep.equal([false, false]);
    expect(errorsOf(events)).to.deep.equal([]);
    // Its copy is switched off now: the subtitle says so, and Continue waits for Slack again.
    expect(visibleText(el)).to.include('it is switched off');
    await expectAccessible(el);
  });

  it('a disconnect that fails leaves the connection as it was and says why; one the app could not be told of says so', async () => {
    const userId = await createUser();
    await connectAccounts(userId, ['stripe', 'slack']);
    const { faultyBase } = await serviceInfo();
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK, apiBase: faultyBase });
    const events = recordEvents(el, ALL_EVENTS);
    await el.show();
    await untilRole(el, 'form', 'Settings');
    button(el, 'Back')!.click();
    await untilPart(el, 'integration');

    await injectFault('DELETE', 'credentials/slack$', 500);
    rowNamed(el, 'Slack', 'Disconnect')!.click();
    byRole<HTMLButtonElement>(await untilConfirm(el), 'button', 'Disconnect')!.click();
    const alert = await new Harness(el).until(() => byRole(row(el, 'Slack'), 'alert') ?? undefined, 'the failure');
    expect(alert.textContent).to.include('Slack was not disconnected.');
    expect(saysConnected(row(el, 'Slack'))).to.be.true;
    expect(errorsOf(events)).to.deep.equal(['disconnect-failed']);

    // The service forgot the account, but the app could not be told to end the access.
    await injectAnswer('DELETE', 'credentials/slack$', 200, {
      integration: 'slack',
      switchedOff: [],
      revocation: 'failed',
    });
    rowNamed(el, 'Slack', 'Disconnect')!.click();
    byRole<HTMLButtonElement>(await untilConfirm(el), 'button', 'Disconnect')!.click();
    await waitUntil(() => says(row(el, 'Slack')).includes('Not connected'), 'Slack is disconnected');
    expect(byRole(row(el, 'Slack'), 'alert')!.textContent).to.include(
      'Slack is disconnected here, but Slack could not be told to end the access.',
    );
    await expectAccessible(el);
  });
});
