import { aTimeout, expect, fixture, html, oneEvent } from '@open-wc/testing';
import { sendKeys, sendMouse } from '@web/test-runner-commands';
import { render } from 'lit';
import type { ForgeConfigModal } from '../src/config-modal/config-modal.js';
import { iconImage } from '../src/config-modal/templates.js';
import {
  ALL_EVENTS,
  byPart,
  byRole,
  connectedUser,
  field,
  fill,
  install,
  modalFixture,
  recordEvents,
  STRIPE_TO_SLACK,
  shadow,
  untilButton,
  untilPart,
  untilRole,
  visibleText,
} from './support/config-modal.js';
import { createUser, serviceInfo, tokenUrl } from './support/forge.js';
import { waitUntil } from './support/wait.js';

describe('<forge-config-modal>', () => {
  it('opens as a modal labelled by its title and settles show() after forge-after-show', async () => {
    const userId = await createUser();
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    const events = recordEvents(el, ALL_EVENTS);
    expect(byPart<HTMLDialogElement>(shadow(el), 'dialog')!.open).to.equal(false);

    await el.show();
    const dialog = byPart<HTMLDialogElement>(shadow(el), 'dialog')!;
    expect(events.map((e) => e.type)).to.deep.equal(['forge-show', 'forge-after-show']);
    expect(dialog.open).to.equal(true);
    expect(dialog.matches(':modal')).to.equal(true);
    expect(el.hasAttribute('open')).to.equal(true);
    const title = shadowById(el, dialog.getAttribute('aria-labelledby')!);
    await waitUntil(() => title.textContent!.includes('Set up “Post new Stripe payments to Slack”'));
  });

  it('says whether it enables a new workflow or edits the user’s own copy', async () => {
    const userId = await connectedUser();
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    await el.show();
    await untilRole(el, 'form', 'Settings');
    expect(byRole(shadow(el), 'heading')!.textContent).to.equal('Set up “Post new Stripe payments to Slack”');
    expect(await untilButton(el, 'Enable workflow')).to.exist;
    await el.hide();

    await install(userId, STRIPE_TO_SLACK);
    await el.show();
    await untilRole(el, 'form', 'Settings');
    await waitUntil(
      () => byRole(shadow(el), 'heading')!.textContent === 'Settings of “Post new Stripe payments to Slack”',
    );
    expect(visibleText(el)).to.include('You already use this workflow');
    expect(await untilButton(el, 'Save changes')).to.exist;
  });

  it('opens from the open attribute', async () => {
    const userId = await createUser();
    const { apiBase } = await serviceInfo();
    const el = await fixture<ForgeConfigModal>(html`<forge-config-modal
      open
      api-base=${apiBase}
      token-url=${tokenUrl(userId)}
      workflow-id=${STRIPE_TO_SLACK}
    ></forge-config-modal>`);
    await waitUntil(() => byPart<HTMLDialogElement>(shadow(el), 'dialog')!.open);
    await untilPart(el, 'integration');
  });

  it('closes with the close button, returns focus to the trigger and settles hide()', async () => {
    const userId = await createUser();
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    const trigger = await fixture<HTMLButtonElement>(html`<button>Set up</button>`);
    trigger.addEventListener('click', () => el.show());
    trigger.focus();
    const shown = oneEvent(el, 'forge-after-show');
    await sendKeys({ press: 'Enter' });
    await shown;
    expect(el.shadowRoot!.activeElement).to.exist;

    const events = recordEvents(el, ALL_EVENTS);
    (await untilButton(el, 'Close')).click();
    await oneEvent(el, 'forge-after-hide');
    expect(events).to.deep.equal([
      { type: 'forge-hide', detail: { reason: 'button' } },
      { type: 'forge-after-hide', detail: { reason: 'button' } },
    ]);
    expect(el.open).to.equal(false);
    expect(document.activeElement).to.equal(trigger);
  });

  it('closes on Escape and on a backdrop click, each through a cancelable forge-hide', async () => {
    const userId = await createUser();
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    await el.show();
    await untilPart(el, 'integration');

    let veto = true;
    const reasons: string[] = [];
    el.addEventListener('forge-hide', (event) => {
      reasons.push(event.detail.reason);
      if (veto) event.preventDefault();
    });
    await sendKeys({ press: 'Escape' });
    await sendMouse({ type: 'click', position: [4, 4] });
    await aTimeout(50);
    expect(reasons).to.deep.equal(['escape', 'backdrop']);
    expect(el.open, 'canceled forge-hide keeps it open').to.equal(true);
    expect(byPart<HTMLDialogElement>(shadow(el), 'dialog')!.open).to.equal(true);

    veto = false;
    const closed = oneEvent(el, 'forge-after-hide');
    await sendKeys({ press: 'Escape' });
    expect((await closed).detail).to.deep.equal({ reason: 'escape' });

    await el.show();
    const closedAgain = oneEvent(el, 'forge-after-hide');
    await sendMouse({ type: 'click', position: [4, 4] });
    expect((await closedAgain).detail).to.deep.equal({ reason: 'backdrop' });
  });

  it('does not close when a click inside the modal ends on the backdrop', async () => {
    const userId = await createUser();
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    await el.show();
    await untilPart(el, 'integration');
    const hides: string[] = [];
    el.addEventListener('forge-hide', (event) => hides.push(event.detail.reason));
    const box = byPart(shadow(el), 'header')!.getBoundingClientRect();
    await sendMouse({ type: 'move', position: [Math.round(box.left + 20), Math.round(box.top + 20)] });
    await sendMouse({ type: 'down' });
    await sendMouse({ type: 'move', position: [4, 4] });
    await sendMouse({ type: 'up' });
    await aTimeout(50);
    expect(hides).to.deep.equal([]);
    expect(el.open).to.equal(true);
  });

  it('fires no event when properties are changed from code', async () => {
    const userId = await connectedUser();
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    await el.show();
    await untilRole(el, 'form', 'Settings');
    fill(el, 'Channel', '#typed');

    const events = recordEvents(el, ALL_EVENTS);
    const { apiBase } = await serviceInfo();
    el.workflowId = '64b1d6aac655b8a937b7db20';
    el.integration = 'slack';
    el.strings = { enable: 'Turn on' };
    el.theme = 'dark';
    el.oauthTimeout = 1000;
    el.apiBase = `${apiBase}/`;
    el.tokenUrl = tokenUrl(userId, undefined, 600);
    await el.updateComplete;
    await aTimeout(100);
    expect(events).to.deep.equal([]);
    // Changes apply at the next open; what the user typed stays.
    expect(field(el, 'Channel').value).to.equal('#typed');
    expect(await untilButton(el, 'Turn on')).to.exist;
  });

  it('shows every text from the strings property', async () => {
    const userId = await createUser();
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    el.strings = {
      titleInstall: (name) => `Activer ${name}`,
      connect: 'Connecter',
      notConnected: 'Non connecté',
      close: 'Fermer',
      stepConnect: 'Comptes',
    };
    await el.show();
    await untilPart(el, 'integration');
    await waitUntil(() => byRole(shadow(el), 'heading')!.textContent === 'Activer Post new Stripe payments to Slack');
    expect(visibleText(el)).to.include('Non connecté').and.include('Comptes');
    expect(await untilButton(el, 'Connecter')).to.exist;
    expect(byPart(shadow(el), 'close-button')!.getAttribute('aria-label')).to.equal('Fermer');
  });

  it('renders an icon only from an http(s) URL or a data image, never as markup', async () => {
    const host = document.createElement('div');
    const icons = ['https://cdn.example.com/a.svg', 'data:image/png;base64,AAAA', 'javascript:alert(1)', '"><b>x</b>'];
    render(html`${icons.map((url) => iconImage(url))}`, host);
    expect([...host.querySelectorAll('img')].map((img) => img.getAttribute('src'))).to.deep.equal([
      'https://cdn.example.com/a.svg',
      'data:image/png;base64,AAAA',
    ]);
    expect(host.querySelector('b')).to.equal(null);
  });
});

function shadowById(el: HTMLElement, id: string): HTMLElement {
  return el.shadowRoot!.getElementById(id)!;
}
