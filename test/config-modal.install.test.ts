import { expect } from '@open-wc/testing';
import {
  ALL_EVENTS,
  byRole,
  childrenOf,
  connectedCount,
  field,
  fill,
  integrationRow,
  modalFixture,
  recordEvents,
  STRIPE_TO_SLACK,
  shadow,
  untilButton,
  untilPart,
  untilRole,
  variablesOf,
  visibleText,
} from './support/config-modal.js';
import { consentInPopup, createUser } from './support/forge.js';
import { waitUntil } from './support/wait.js';

describe('<forge-config-modal> install', () => {
  it('enables a workflow that needs a Stripe key and a Slack sign-in, from empty to installed', async () => {
    const userId = await createUser();
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    const events = recordEvents(el, ALL_EVENTS);
    await el.show();

    const title = await untilRole(el, 'heading');
    await waitUntil(() => title.textContent!.includes('Set up “Post new Stripe payments to Slack”'));
    await untilPart(el, 'integration');
    expect(visibleText(el)).to.include('Stripe').and.include('Slack').and.include('Not connected');

    // Stripe: a labelled field with its description.
    const secret = field(el, 'Secret key');
    expect(shadow(el).getElementById(secret.getAttribute('aria-describedby')!)!.textContent).to.include(
      'Developers → API keys',
    );
    fill(el, 'Secret key', 'sk_test_abc');
    const stripeConnect = byRole<HTMLButtonElement>(integrationRow(el, 'Stripe'), 'button', 'Connect')!;
    stripeConnect.click();
    await waitUntil(() => connectedCount(el) === 1, 'Stripe connects');

    // Slack: the popup opens at once; the test presses Allow on the local consent page in it.
    (await untilButton(el, 'Connect')).click();
    await consentInPopup('allow');
    await waitUntil(() => connectedCount(el) === 2, 'Slack connects');
    expect(visibleText(el)).not.to.include('Not connected');

    (await untilButton(el, 'Continue')).click();
    // Pre-filled with the parent's defaults; the number stays a number.
    await untilRole(el, 'form', 'Settings');
    expect(field(el, 'Channel').value).to.equal('#payments');
    expect(field(el, 'Minimum amount').type).to.equal('number');
    expect(field(el, 'Minimum amount').value).to.equal('50');
    fill(el, 'Channel', '#sales-wins');
    fill(el, 'Minimum amount', '125');

    (await untilButton(el, 'Enable workflow')).click();
    await untilButton(el, 'Done');
    expect(visibleText(el)).to.include('Workflow enabled');

    const [child] = await childrenOf(userId);
    expect(child!.parentId).to.equal(STRIPE_TO_SLACK);
    expect(await variablesOf(child!._id)).to.deep.equal({ channel: '#sales-wins', minimumAmount: 125 });
    const install = events.find((e) => e.type === 'forge-install');
    expect(install?.detail).to.deep.equal({ parentId: STRIPE_TO_SLACK, workflowId: child!._id });
    expect(events.filter((e) => e.type === 'forge-error')).to.deep.equal([]);

    (await untilButton(el, 'Done')).click();
    await waitUntil(() => !el.open);
    expect(events.map((e) => e.type)).to.deep.equal([
      'forge-show',
      'forge-after-show',
      'forge-connect',
      'forge-connect',
      'forge-install',
      'forge-hide',
      'forge-after-hide',
    ]);
    expect(events.find((e) => e.type === 'forge-hide')?.detail).to.deep.equal({ reason: 'done' });
    // The local provider names no account: the events carry only the integration.
    expect(events.filter((e) => e.type === 'forge-connect').map((e) => e.detail)).to.deep.equal([
      { integration: 'stripe' },
      { integration: 'slack' },
    ]);
  });
});
