/**
 * The settings step draws each setting with the control its type asks for (issue 26, item 3),
 * marks the required ones and checks every rule before saving with the service's own check,
 * the message next to the field; a refused save keeps every value. Against the typed service
 * (web-test-runner.config.mjs), whose catalog adds test/fixtures/typed-workflow.json.
 */
import { expect } from '@open-wc/testing';
import type { ForgeConfigModal } from '../src/config-modal/config-modal.js';
import {
  fadedIn,
  field,
  fill,
  requestsDuring,
  shadow,
  TYPED_BLOCK,
  typedModal,
  untilButton,
  untilPart,
  visibleText,
} from './support/config-modal.js';
import { typedHostApi } from './support/forge.js';
import { byRole } from './support/harness.js';

const role = <E extends Element = HTMLElement>(el: ForgeConfigModal, name: string, label: string) => {
  const found = byRole<E>(shadow(el), name, label);
  if (!found) throw new Error(`No ${name} named ${label}: ${visibleText(el)}`);
  return found;
};

/** What the user's copy holds, read with the API key. */
async function storedValues(userId: string) {
  const user = await typedHostApi<{ workflows: Array<{ _id: string }> }>('GET', `/user/${userId}`);
  const [child] = user.body.workflows;
  if (!child) return undefined;
  const { body } = await typedHostApi<{
    blocks: Array<{ id: string; parameters: { variables?: Array<{ name: string; value: unknown }> } }>;
  }>('GET', `/workflow/${child._id}`);
  const block = body.blocks.find((b) => b.id === TYPED_BLOCK)!;
  return Object.fromEntries(block.parameters.variables!.map((v) => [v.name, v.value]));
}

const writes = (requests: Array<{ method: string }>) => requests.filter((r) => r.method !== 'GET');

describe('<forge-config-modal> settings of every type', () => {
  it('draws each type with its control, found by role and label', async () => {
    const { el } = await typedModal();
    const weekends = role<HTMLInputElement>(el, 'switch', 'Notify on weekends');
    expect(weekends.type).to.equal('checkbox');
    expect(weekends.checked).to.be.false;
    const pipeline = role<HTMLSelectElement>(el, 'combobox', 'Pipeline');
    expect(pipeline.localName).to.equal('select');
    expect([...pipeline.options].map((o) => o.textContent!.trim())).to.deep.equal(['', 'Sales', 'Renewals']);
    expect(pipeline.value).to.equal('sales');
    expect(role<HTMLSelectElement>(el, 'combobox', 'Priority').value).to.equal('1');
    expect(role(el, 'textbox', 'Notes').localName).to.equal('textarea');
    expect(role<HTMLInputElement>(el, 'textbox', 'Owner').type).to.equal('email');
    expect(role<HTMLInputElement>(el, 'textbox', 'Link').type).to.equal('url');
    expect(role<HTMLInputElement>(el, 'spinbutton', 'Threshold').value).to.equal('50');
    expect(role<HTMLInputElement>(el, 'textbox', 'Spreadsheet ID').value).to.equal('');
  });

  it('marks the required fields, in the label and to assistive technology', async () => {
    const { el } = await typedModal();
    for (const label of ['Spreadsheet ID', 'Slack channel']) {
      const input = field(el, label);
      expect(input.required, label).to.be.true;
      expect(shadow(el).querySelector(`label[for="${input.id}"]`)!.textContent).to.include('(required)');
    }
    expect(field(el, 'Notes').required).to.be.false;
    expect(shadow(el).querySelector(`label[for="${field(el, 'Notes').id}"]`)!.textContent).not.to.include('required');
  });

  it('checks every rule before saving, with the message next to the field, and keeps every value', async () => {
    const { el, userId } = await typedModal();
    const weekends = role<HTMLInputElement>(el, 'switch', 'Notify on weekends');
    weekends.click();
    const pipeline = role<HTMLSelectElement>(el, 'combobox', 'Pipeline');
    pipeline.value = 'renewals';
    pipeline.dispatchEvent(new Event('change', { bubbles: true }));
    fill(el, 'Notes', 'Line one\nLine two');
    fill(el, 'Owner', 'ada.example.com');
    fill(el, 'Spreadsheet ID', 'short');
    fill(el, 'Threshold', '120');
    const requests = await requestsDuring(async () => {
      (await untilButton(el, 'Enable workflow')).click();
      await untilPart(el, 'field-error');
    });
    expect(writes(requests), 'nothing is sent').to.deep.equal([]);
    const messageOf = (label: string) => {
      const input = field(el, label);
      expect(input.getAttribute('aria-invalid'), label).to.equal('true');
      return input
        .getAttribute('aria-describedby')!
        .split(' ')
        .map((id) => shadow(el).getElementById(id)!.textContent!.trim())
        .join(' ');
    };
    expect(messageOf('Slack channel')).to.include('Enter the Slack channel; it is required.');
    expect(messageOf('Spreadsheet ID')).to.include('Paste the id from the sheet’s address');
    expect(messageOf('Owner')).to.include('Owner must be an e-mail address');
    expect(messageOf('Threshold')).to.include('Threshold must be at most 100.');
    expect(field(el, 'Notes').getAttribute('aria-invalid')).to.equal('false');
    expect(shadow(el).activeElement, 'focus goes to the first field to correct').to.equal(field(el, 'Slack channel'));
    // Every value and choice is kept.
    expect(role<HTMLInputElement>(el, 'switch', 'Notify on weekends').checked).to.be.true;
    expect(role<HTMLSelectElement>(el, 'combobox', 'Pipeline').value).to.equal('renewals');
    expect(field(el, 'Notes').value).to.equal('Line one\nLine two');
    expect(field(el, 'Owner').value).to.equal('ada.example.com');
    expect(await storedValues(userId)).to.equal(undefined);

    fill(el, 'Slack channel', 'C0001');
    fill(el, 'Spreadsheet ID', '1AbCdEfGhIjKlMnOpQrStUvWxYz');
    fill(el, 'Owner', 'ada@example.com');
    fill(el, 'Threshold', '12.5');
    (await untilButton(el, 'Enable workflow')).click();
    await untilButton(el, 'Done');
    expect(await storedValues(userId)).to.deep.include({
      channel: 'C0001',
      pipeline: 'renewals',
      priority: 1,
      weekends: true,
      spreadsheetId: '1AbCdEfGhIjKlMnOpQrStUvWxYz',
      threshold: 12.5,
      notes: 'Line one\nLine two',
      owner: 'ada@example.com',
    });
  });

  it('opens a saved copy with its choices: the switch on, the option chosen', async () => {
    const { el, user, userId } = await typedModal();
    fill(el, 'Slack channel', 'C0002');
    fill(el, 'Spreadsheet ID', '1AbCdEfGhIjKlMnOpQrStUvWxYz');
    role<HTMLInputElement>(el, 'switch', 'Notify on weekends').click();
    const priority = role<HTMLSelectElement>(el, 'combobox', 'Priority');
    priority.value = '2';
    priority.dispatchEvent(new Event('change', { bubbles: true }));
    (await untilButton(el, 'Enable workflow')).click();
    await untilButton(el, 'Done');
    expect(await storedValues(userId)).to.deep.include({ weekends: true, priority: 2 });
    const again = (await typedModal(user)).el;
    await untilButton(again, 'Save changes');
    expect(role<HTMLInputElement>(again, 'switch', 'Notify on weekends').checked).to.be.true;
    expect(role<HTMLSelectElement>(again, 'combobox', 'Priority').value).to.equal('2');
  });

  // One state per test: axe over a form this long takes WebKit about ten seconds.
  it('has no axe violations on the settings of every type', async () => {
    const { el } = await typedModal();
    await fadedIn(el);
    await expect(el).to.be.accessible();
  });

  it('has no axe violations with every field error shown, in the dark scheme', async () => {
    const { el } = await typedModal();
    await fadedIn(el);
    (await untilButton(el, 'Enable workflow')).click();
    await untilPart(el, 'field-error');
    el.theme = 'dark';
    await el.updateComplete;
    await expect(el).to.be.accessible();
  });
});
