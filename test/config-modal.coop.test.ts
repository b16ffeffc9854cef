import { expect, fixture, html } from '@open-wc/testing';
import type { OAuthResultMessage } from '../src/api/types.js';
import type { ForgeConfigModal } from '../src/config-modal/config-modal.js';
import '../src/integration-list/define.js';
import type { ForgeIntegrationList } from '../src/integration-list/integration-list.js';
import '../src/workflow-list/define.js';
import type { ForgeWorkflowList } from '../src/workflow-list/workflow-list.js';
import {
  ALL_EVENTS,
  allByRole,
  expectAccessible,
  Harness,
  HUBSPOT_TO_SLACK,
  integrationRow,
  recordEvents,
  saysConnected,
  untilPart,
  visibleText,
} from './support/config-modal.js';
import { closeOtherWindows, consentInPopup, coopUser, tokenUrl } from './support/forge.js';
import { waitUntil } from './support/wait.js';

/**
 * A consent page that sends `Cross-Origin-Opener-Policy: same-origin` (as Microsoft's login pages
 * do) cuts the popup from the page that opened it: `window.opener` is gone and the popup reads
 * closed while it is still open. The service here is one whose local provider sends that header.
 * With a return page on this origin (forge-embed/host's oauthReturnPage, at /oauth-return) the
 * flow still finishes, confirmed by this page with the user's token; without one, the element
 * never says "closed" as a fact, and says what the popup says: close it and connect again.
 * Cancel ends the wait either way, and what the window does afterwards connects nothing.
 *
 * No script of this page can close such a window (it is no longer this page's popup), so the
 * browser's driver closes what a test left open: in Firefox a window left open kept the focus
 * from every later test of the suite. Chromium, Firefox and WebKit all run this file.
 */

const tokenFor = (userId: string) => `${tokenUrl(userId)}&service=coop`;

async function openConnectStep(returnUrl?: string) {
  const { apiBase, userId } = await coopUser();
  const el = await fixture<ForgeConfigModal>(html`<forge-config-modal
    api-base=${apiBase}
    token-url=${tokenFor(userId)}
    workflow-id=${HUBSPOT_TO_SLACK}
    oauth-return-url=${returnUrl ?? ''}
  ></forge-config-modal>`);
  await el.show();
  await untilPart(el, 'integration');
  return el;
}

async function renderGrid() {
  const { apiBase, userId } = await coopUser();
  const el = await fixture<ForgeIntegrationList>(html`<forge-integration-list
    api-base=${apiBase}
    token-url=${tokenFor(userId)}
    oauth-return-url="/oauth-return"
  ></forge-integration-list>`);
  const ui = new Harness(el);
  await ui.until(() => ui.part('grid'), 'the apps');
  return { el, ui };
}

const connectButton = (el: ForgeConfigModal, name: string) =>
  allByRole<HTMLButtonElement>(integrationRow(el, name), 'button')[0]!;

/** The grid's card of the app named `name`, and the words of its parts. */
const card = (ui: Harness, name: string) => ui.parts('app').find((c) => ui.part('name', c)?.textContent === name)!;
const words = (element: Element | null | undefined) => element?.textContent?.replace(/\s+/g, ' ').trim();

/** How many grants of `integration` this page confirmed with the service. */
const confirmations = (integration: string) =>
  performance.getEntriesByType('resource').filter((e) => e.name.endsWith(`/credentials/${integration}/oauth/confirm`))
    .length;

/** The next result the return page relays on this origin's channel (what a waiting element would hear). */
function nextRelayed(): Promise<Partial<OAuthResultMessage>> {
  const channel = new BroadcastChannel('forge-oauth');
  return new Promise((resolve) => {
    channel.onmessage = ({ data }) => {
      channel.close();
      resolve(data);
    };
  });
}

describe('a consent page that cuts the sign-in window from its opener', () => {
  beforeEach(() => performance.clearResourceTimings());
  afterEach(() => closeOtherWindows());

  describe('<forge-config-modal> connect step', () => {
    it('finishes through the return page on this origin', async () => {
      const el = await openConnectStep('/oauth-return');
      connectButton(el, 'Slack').click();
      await consentInPopup('allow', true);
      await waitUntil(() => saysConnected(integrationRow(el, 'Slack')), 'Slack connects through the return page');
      expect(confirmations('slack')).to.equal(1);
      await expectAccessible(el);
    });

    it('without a return page, says to close the window and try again, never that it was closed', async () => {
      const el = await openConnectStep();
      connectButton(el, 'Slack').click();
      await consentInPopup('allow', true);
      await waitUntil(() => visibleText(el).includes('lost its link to this page'), 'the element says what to do');
      expect(visibleText(el)).to.include('If it is still open, close it, then try again.');
      expect(saysConnected(integrationRow(el, 'Slack'))).to.equal(false);
    });

    it('Cancel while the window is open ends the wait; what the window does afterwards connects nothing', async () => {
      const el = await openConnectStep('/oauth-return');
      const events = recordEvents(el, ALL_EVENTS);
      connectButton(el, 'Slack').click();
      await consentInPopup('find', true);
      await waitUntil(() => words(connectButton(el, 'Slack')) === 'Cancel', 'Connect has become Cancel');
      expect(visibleText(el)).to.include('Finish connecting in the Slack window.');

      connectButton(el, 'Slack').click();
      await waitUntil(() => words(connectButton(el, 'Slack')) === 'Connect', 'the row is back as it was');
      const row = integrationRow(el, 'Slack');
      expect(words(allByRole(row, 'alert')[0])).to.equal(
        'Connecting Slack was canceled. If its window is still open, close it.',
      );
      expect(words(row)).to.include('Not connected');
      expect(visibleText(el)).not.to.include('Finish connecting');
      // The user canceled: no failure to report.
      expect(events.filter((e) => e.type === 'forge-error')).to.deep.equal([]);
      await expectAccessible(el);

      // The user presses Allow in the window after all: the return page relays the grant, and no
      // element waits for it any more.
      const relayed = nextRelayed();
      await consentInPopup('allow', true);
      expect((await relayed).status).to.equal('authorized');
      await el.updateComplete;
      expect(saysConnected(integrationRow(el, 'Slack'))).to.equal(false);
      expect(confirmations('slack')).to.equal(0);
      expect(events.filter((e) => e.type === 'forge-connect')).to.deep.equal([]);
    });
  });

  describe('<forge-integration-list>', () => {
    it('connects an app through the return page its oauth-return-url names', async () => {
      const { el, ui } = await renderGrid();
      ui.role('button', 'Connect Slack')!.click();
      await consentInPopup('allow', true);
      await waitUntil(() => words(ui.part('state', card(ui, 'Slack')))?.startsWith('✓ Connected'), 'Slack connects');
      expect(confirmations('slack')).to.equal(1);
      await expect(el).to.be.accessible();
    });

    it('Cancel on the card ends the wait, says so, and the window connects nothing afterwards', async () => {
      const { el, ui } = await renderGrid();
      const errors: Event[] = [];
      el.addEventListener('forge-error', (event) => errors.push(event));
      ui.role('button', 'Connect Slack')!.click();
      await consentInPopup('find', true);
      const cancel = await ui.until(
        () => ui.part<HTMLButtonElement>('cancel-button', card(ui, 'Slack')),
        'Cancel in place of Connect',
      );
      expect(words(cancel)).to.equal('Cancel');
      expect(cancel.getAttribute('aria-label')).to.equal('Cancel Slack');
      expect(words(ui.part('state', card(ui, 'Slack')))).to.equal('– Finish connecting in the Slack window.');
      await expect(el).to.be.accessible();

      cancel.click();
      await el.updateComplete;
      expect(words(ui.part('state', card(ui, 'Slack')))).to.equal('– Not connected');
      expect(words(ui.part('app-error', card(ui, 'Slack')))).to.equal(
        'Connecting Slack was canceled. If its window is still open, close it.',
      );
      expect(ui.part('cancel-button')).to.equal(null);
      expect(ui.role('button', 'Connect Slack')!.getAttribute('aria-disabled')).to.equal('false');
      expect(errors).to.deep.equal([]);
      await expect(el).to.be.accessible();

      const relayed = nextRelayed();
      await consentInPopup('allow', true);
      expect((await relayed).status).to.equal('authorized');
      await el.updateComplete;
      expect(words(ui.part('state', card(ui, 'Slack')))).to.equal('– Not connected');
      expect(confirmations('slack')).to.equal(0);
    });
  });

  describe('<forge-workflow-list>', () => {
    it('the modal it opens connects an app through the return page its oauth-return-url names', async () => {
      const { apiBase, userId } = await coopUser();
      const el = await fixture<ForgeWorkflowList>(html`<forge-workflow-list
        api-base=${apiBase}
        token-url=${tokenFor(userId)}
        oauth-return-url="/oauth-return"
      ></forge-workflow-list>`);
      const row = () => el.shadowRoot!.querySelector(`[part~="row"][data-key="${HUBSPOT_TO_SLACK}"]`);
      await waitUntil(row, 'the list shows HubSpot to Slack');
      row()!.querySelector<HTMLButtonElement>('[part~="enable-button"]')!.click();
      const modal = () => el.shadowRoot!.querySelector<ForgeConfigModal>('forge-config-modal');
      await waitUntil(() => modal()?.shadowRoot?.querySelector('[part~="integration"]'), 'the modal shows its apps');
      connectButton(modal()!, 'Slack').click();
      await consentInPopup('allow', true);
      await waitUntil(() => saysConnected(integrationRow(modal()!, 'Slack')), 'Slack connects through the return page');
      expect(confirmations('slack')).to.equal(1);
    });
  });
});
