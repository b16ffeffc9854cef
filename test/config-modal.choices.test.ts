/**
 * A setting whose choices come from the user's own app (issue 26, items 3 and 5): the WAI-ARIA
 * APG combobox over `GET /workflow/:id/options` — by role and label, keyboard-only selection,
 * search, "Load more", the empty state, an app that refuses the connection (the field offers
 * Reconnect), the chosen label shown again after a reopen, and axe on each state. Against the
 * typed service (web-test-runner.config.mjs): its Slack channel reads the sandbox's
 * conversations.list three channels a page.
 */
import { expect } from '@open-wc/testing';
import { sendKeys } from '@web/test-runner-commands';
import type { ForgeConfigModal } from '../src/config-modal/config-modal.js';
import {
  connectAccounts,
  fadedIn,
  fill,
  HUBSPOT_TO_SLACK,
  integrationRow,
  modalFixture,
  requestsDuring,
  shadow,
  TYPED_BLOCK,
  typedModal,
  untilButton,
  untilRole,
  visibleText,
} from './support/config-modal.js';
import { createUser, typedHostApi, typedUser } from './support/forge.js';
import { accessibleName, allByRole, byRole, Harness } from './support/harness.js';

/** The sandbox's channel ids (server/sandbox.ts SLACK_CHANNELS): `general` is the first. */
const channelId = (position: number) => `C0${String(position).padStart(8, '0')}`;

const combobox = (el: ForgeConfigModal) => {
  const box = byRole<HTMLInputElement>(shadow(el), 'combobox', 'Slack channel');
  if (!box) throw new Error(`No Slack channel combobox: ${visibleText(el)}`);
  return box;
};
const listbox = (el: ForgeConfigModal) => shadow(el).getElementById(combobox(el).getAttribute('aria-controls')!)!;
/** The options of a combobox's list, by their text. */
const optionsOf = (el: ForgeConfigModal, box: HTMLElement) =>
  allByRole(shadow(el).getElementById(box.getAttribute('aria-controls')!)!, 'option').map((o) => o.textContent!.trim());
const optionLabels = (el: ForgeConfigModal) => optionsOf(el, combobox(el));
/** The option `aria-activedescendant` points at, by its text. */
const activeOption = (el: ForgeConfigModal) => {
  const id = combobox(el).getAttribute('aria-activedescendant');
  return id ? shadow(el).getElementById(id)!.textContent!.trim() : undefined;
};
const statusText = (el: ForgeConfigModal) =>
  listbox(el).parentElement!.querySelector('[role="status"]')!.textContent!.replace(/\s+/g, ' ').trim();
const until = <T>(el: ForgeConfigModal, find: () => T, what: string) => new Harness(el).until(find, what);

/** Waits for the app's first page (read as the field appears), then puts the focus in the box. */
async function focusedWithFirstPage(el: ForgeConfigModal) {
  await until(el, () => optionLabels(el).length === 3, 'the first page of channels');
  combobox(el).focus();
}

async function storedChannel(userId: string) {
  const user = await typedHostApi<{ workflows: Array<{ _id: string }> }>('GET', `/user/${userId}`);
  const { body } = await typedHostApi<{
    blocks: Array<{ id: string; parameters: { variables?: Array<{ name: string; value: unknown }> } }>;
  }>('GET', `/workflow/${user.body.workflows[0]!._id}`);
  return body.blocks.find((b) => b.id === TYPED_BLOCK)!.parameters.variables!.find((v) => v.name === 'channel')!.value;
}

describe('<forge-config-modal> choices from the user’s app', () => {
  it('is a combobox labelled by its field, chosen with the keyboard alone; the label shows again on reopening', async () => {
    const { el, user } = await typedModal();
    const box = combobox(el);
    expect(box.localName).to.equal('input');
    expect(box.getAttribute('aria-autocomplete')).to.equal('list');
    expect(box.getAttribute('aria-expanded')).to.equal('false');
    expect(box.required).to.be.true;
    await focusedWithFirstPage(el);
    expect(listbox(el).hidden, 'closed until asked').to.be.true;

    await sendKeys({ press: 'ArrowDown' });
    await until(el, () => box.getAttribute('aria-expanded') === 'true', 'the list to open');
    expect(listbox(el).hidden).to.be.false;
    expect(listbox(el).getAttribute('role')).to.equal('listbox');
    expect(accessibleName(listbox(el))).to.match(/^Slack channel/);
    expect(optionLabels(el)).to.deep.equal(['general', 'payments', 'sales']);
    expect(activeOption(el)).to.equal('general');
    expect(shadow(el).activeElement, 'the focus stays in the box').to.equal(box);
    await sendKeys({ press: 'ArrowDown' });
    expect(activeOption(el)).to.equal('payments');
    expect(byRole(listbox(el), 'option', 'payments')!.getAttribute('aria-selected')).to.equal('true');
    await sendKeys({ press: 'ArrowUp' });
    expect(activeOption(el)).to.equal('general');
    await sendKeys({ press: 'End' });
    expect(activeOption(el), 'End returns to the text').to.equal(undefined);
    await sendKeys({ press: 'ArrowUp' });
    expect(activeOption(el), 'Up from the text goes to the last').to.equal('sales');
    await sendKeys({ press: 'Escape' });
    expect(box.getAttribute('aria-expanded'), 'Escape closes the list').to.equal('false');
    expect(el.open, 'and not the modal').to.be.true;
    await sendKeys({ press: 'ArrowDown' });
    await sendKeys({ press: 'ArrowDown' });
    expect(activeOption(el)).to.equal('payments');
    await sendKeys({ press: 'Enter' });
    expect(box.getAttribute('aria-expanded')).to.equal('false');
    expect(box.hasAttribute('aria-activedescendant')).to.be.false;
    expect(box.value, 'the chosen label shows').to.equal('payments');

    fill(el, 'Spreadsheet ID', '1AbCdEfGhIjKlMnOpQrStUvWxYz');
    (await untilButton(el, 'Enable workflow')).click();
    await untilButton(el, 'Done');
    expect(await storedChannel(user.userId), 'the value stored is the app’s id').to.equal(channelId(2));

    const again = (await typedModal(user)).el;
    await untilButton(again, 'Save changes');
    expect(combobox(again).value).to.equal('payments');
    // With its list closed, Escape in the box is the dialog's: it closes, the setting untouched.
    combobox(again).focus();
    await sendKeys({ press: 'Escape' });
    await until(again, () => !again.open, 'the modal closes on Escape');
    expect(await storedChannel(user.userId)).to.equal(channelId(2));
  });

  it('searches the app as the user types, and says when nothing matches', async () => {
    const { el } = await typedModal();
    await focusedWithFirstPage(el);
    const requests = await requestsDuring(async () => {
      await sendKeys({ type: 'mark' });
      await until(
        el,
        () => listbox(el).getAttribute('aria-busy') === 'false' && optionLabels(el).join() === 'marketing',
        'the channels with “mark”',
      );
    });
    const searched = requests.filter((r) => r.url.includes('/options?')).map((r) => new URL(r.url).searchParams);
    expect(searched.at(-1)!.get('search')).to.equal('mark');
    expect(listbox(el).hidden).to.be.false;
    await sendKeys({ press: 'ArrowDown' });
    await sendKeys({ press: 'Enter' });
    expect(combobox(el).value).to.equal('marketing');

    fill(el, 'Slack channel', 'no such channel');
    await until(el, () => statusText(el) === 'No choices match.', 'the empty state');
    expect(listbox(el).hidden, 'no empty listbox').to.be.true;
    expect(combobox(el).getAttribute('aria-expanded')).to.equal('true');
  });

  it('loads the next page with “Load more”, and with the arrow key past the last choice', async () => {
    const { el } = await typedModal();
    await focusedWithFirstPage(el);
    await sendKeys({ press: 'ArrowDown' });
    await untilButton(el, 'Load more');
    await sendKeys({ press: 'ArrowDown' });
    await sendKeys({ press: 'ArrowDown' });
    expect(activeOption(el)).to.equal('sales');
    await sendKeys({ press: 'ArrowDown' });
    await until(el, () => optionLabels(el).length === 6, 'the second page');
    expect(activeOption(el), 'the first new choice').to.equal('finance');
    expect(shadow(el).activeElement).to.equal(combobox(el));

    (await untilButton(el, 'Load more')).click();
    await until(el, () => optionLabels(el).length === 9, 'the third page');
    expect(activeOption(el)).to.equal('engineering');
    await sendKeys({ press: 'Enter' });
    expect(combobox(el).value).to.equal('engineering');
  });

  it('offers “Reconnect Slack” when the app refuses the connection, which leads to connecting it again', async () => {
    const { el } = await typedModal(await typedUser({ revoked: true }));
    const reconnect = await untilButton(el, 'Reconnect Slack');
    expect(visibleText(el)).to.include('Slack did not accept your connection. Connect it again to choose from it.');
    reconnect.click();
    await untilRole(el, 'list');
    const row = integrationRow(el, 'Slack');
    expect(row.textContent).to.include('Needs reconnecting');
    expect(byRole(row, 'button', 'Reconnect')).to.exist;
  });

  it('shows the demo’s HubSpot deal pipeline as a fixed select beside the Slack channel read from the app', async () => {
    const userId = await createUser();
    await connectAccounts(userId, ['hubspot', 'slack']);
    const el = await modalFixture({ userId, workflowId: HUBSPOT_TO_SLACK });
    await el.show();
    await untilRole(el, 'form', 'Settings');
    const pipeline = byRole<HTMLSelectElement>(shadow(el), 'combobox', 'Deal pipeline')!;
    expect(pipeline.localName).to.equal('select');
    expect([...pipeline.selectedOptions].map((o) => o.textContent!.trim())).to.deep.equal(['Sales pipeline']);
    expect([...pipeline.options].map((o) => o.textContent!.trim())).to.include.members([
      'Sales pipeline',
      'Renewals',
      'Partner deals',
    ]);
    expect(byRole<HTMLInputElement>(shadow(el), 'combobox', 'Channel')!.localName).to.equal('input');
  });

  // One state per test: axe over a form this long takes WebKit about ten seconds.
  it('has no axe violations with the list open and a choice reached', async () => {
    const { el } = await typedModal();
    await focusedWithFirstPage(el);
    await sendKeys({ press: 'ArrowDown' });
    await untilButton(el, 'Load more');
    await fadedIn(el);
    await expect(el).to.be.accessible();
  });

  it('has no axe violations when nothing matches, in the dark scheme', async () => {
    const { el } = await typedModal();
    await focusedWithFirstPage(el);
    fill(el, 'Slack channel', 'no such channel');
    await until(el, () => statusText(el) === 'No choices match.', 'the empty state');
    el.theme = 'dark';
    await el.updateComplete;
    await fadedIn(el);
    await expect(el).to.be.accessible();
  });

  it('has no axe violations when the app refuses the connection', async () => {
    const { el } = await typedModal(await typedUser({ revoked: true }));
    await untilButton(el, 'Reconnect Slack');
    await fadedIn(el);
    await expect(el).to.be.accessible();
  });
});
