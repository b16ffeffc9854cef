import { expect, fixture, html, oneEvent } from '@open-wc/testing';
import { resetMouse, sendKeys, sendMouse } from '@web/test-runner-commands';
import type { ForgeConfigModal } from '../src/config-modal/config-modal.js';
import {
  button,
  childrenOf,
  connectAccounts,
  connectedUser,
  expectAccessible,
  field,
  Harness,
  install,
  modalFixture,
  SETTINGS_BLOCK,
  STRIPE_TO_SLACK,
  shadow,
  untilButton,
  untilPart,
  untilRole,
} from './support/config-modal.js';
import { createUser, hostApi, pressChord, serviceInfo, tokenUrl } from './support/forge.js';
import { waitUntil } from './support/wait.js';

/** Ctrl+A, so what is typed next replaces the field's value. */
async function selectAll() {
  await pressChord(['Control', 'a']);
}

const focused = (el: ForgeConfigModal) => el.shadowRoot!.activeElement as HTMLElement | null;

describe('<forge-config-modal> accessibility', () => {
  it('axe looks inside the dialog (a broken control there is caught)', async () => {
    const userId = await createUser();
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    await el.show();
    await untilPart(el, 'integration');
    button(el, 'Close')!.removeAttribute('aria-label');
    await expect(el).not.to.be.accessible();
  });

  it('has no axe violations while loading', async () => {
    const { apiBase } = await serviceInfo();
    const el = await fixture<ForgeConfigModal>(
      html`<forge-config-modal api-base=${apiBase} workflow-id=${STRIPE_TO_SLACK}></forge-config-modal>`,
    );
    // A token endpoint that has not answered yet.
    el.tokenProvider = () => new Promise(() => undefined);
    await el.show();
    await untilRole(el, 'status', 'Loading…');
    await expectAccessible(el);
  });

  it('has no axe violations on the connect step', async () => {
    const userId = await createUser();
    await connectAccounts(userId, ['slack']);
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    await el.show();
    await untilPart(el, 'integration');
    await expectAccessible(el);
    // With a field error and a step message showing.
    (await untilButton(el, 'Connect')).click();
    (await untilButton(el, 'Continue')).click();
    await new Harness(el).until(() => shadow(el).querySelector('input[aria-invalid="true"]'), 'an invalid field');
    await untilPart(el, 'message');
    await expectAccessible(el);
  });

  it('has no axe violations with the pointer on a Connect button (its hover colours, in both themes)', async () => {
    const userId = await createUser();
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    await el.show();
    const connect = await untilButton(el, 'Connect');
    const box = connect.getBoundingClientRect();
    await sendMouse({
      type: 'move',
      position: [Math.round(box.x + box.width / 2), Math.round(box.y + box.height / 2)],
    });
    try {
      expect(connect.matches(':hover'), 'the pointer is on the button').to.equal(true);
      await expectAccessible(el);
    } finally {
      await resetMouse();
    }
  });

  it('has no axe violations on the choose step of the integration view', async () => {
    const userId = await createUser();
    const el = await modalFixture({ userId, integration: 'slack' });
    await el.show();
    await untilRole(el, 'switch');
    await expectAccessible(el);
  });

  it('has no axe violations on the configure step, with and without field errors', async () => {
    const userId = await connectedUser();
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    await el.show();
    await untilRole(el, 'form', 'Settings');
    await expectAccessible(el);
    field(el, 'Minimum amount').value = '';
    field(el, 'Minimum amount').dispatchEvent(new Event('input'));
    (await untilButton(el, 'Enable workflow')).click();
    await untilPart(el, 'field-error');
    await expectAccessible(el);
  });

  it('has no axe violations in the error view', async () => {
    const userId = await createUser();
    const { apiBase } = await serviceInfo();
    const el = await fixture<ForgeConfigModal>(html`<forge-config-modal
      api-base=${apiBase}
      token-url=${tokenUrl(userId, 'error')}
      workflow-id=${STRIPE_TO_SLACK}
    ></forge-config-modal>`);
    await el.show();
    await untilPart(el, 'message');
    await expectAccessible(el);
  });

  it('has no axe violations in the success view', async () => {
    const userId = await connectedUser();
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    await el.show();
    (await untilButton(el, 'Enable workflow')).click();
    await untilButton(el, 'Done');
    await expectAccessible(el);
  });
});

describe('<forge-config-modal> by keyboard', () => {
  it('can be completed with the keyboard alone, from the trigger back to the trigger', async () => {
    const userId = await createUser();
    await connectAccounts(userId, ['slack']);
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    const trigger = await fixture<HTMLButtonElement>(html`<button>Enable</button>`);
    trigger.addEventListener('click', () => el.show());
    trigger.focus();
    await sendKeys({ press: 'Enter' });

    // Focus moves into the step: the first thing to fill in is Stripe's key.
    await untilPart(el, 'integration');
    await waitUntil(() => focused(el)?.id === field(el, 'Secret key').id, 'focus on the Secret key field');
    await sendKeys({ type: 'sk_test_keyboard' });
    await sendKeys({ press: 'Enter' });
    // Once everything is connected, focus waits on Continue.
    await waitUntil(() => focused(el)?.textContent?.trim() === 'Continue', 'focus on Continue', { timeout: 5000 });
    await sendKeys({ press: 'Enter' });

    await untilRole(el, 'form', 'Settings');
    await waitUntil(() => focused(el) === field(el, 'Channel'), 'focus on the first setting');
    await selectAll();
    await sendKeys({ type: '#keyboard' });
    await sendKeys({ press: 'Tab' });
    expect(focused(el)).to.equal(field(el, 'Minimum amount'));
    await selectAll();
    await sendKeys({ type: '7' });
    await sendKeys({ press: 'Enter' });

    await untilButton(el, 'Done');
    await waitUntil(() => focused(el)?.textContent?.trim() === 'Done', 'focus on Done');
    const closed = oneEvent(el, 'forge-after-hide');
    await sendKeys({ press: 'Enter' });
    expect((await closed).detail).to.deep.equal({ reason: 'done' });
    expect(document.activeElement).to.equal(trigger);

    const [installed] = await childrenOf(userId);
    const child = await hostApi<{ blocks: Array<{ id: string; parameters: { variables?: unknown[] } }> }>(
      'GET',
      `/workflow/${installed!._id}`,
    );
    expect(child.body.blocks.find((b) => b.id === SETTINGS_BLOCK)!.parameters.variables).to.deep.include.members([
      {
        uuid: '0a32d975-999d-4751-85f7-c27e5382ff54',
        name: 'channel',
        value: '#keyboard',
        description: 'The Slack channel that gets the announcement.',
        // Chosen from the user's Slack (issue 26); text typed and not chosen is kept as typed.
        type: 'select',
        source: { integration: 'slack' },
      },
    ]);
  });

  it('switches workflows on and off with the keyboard in the integration view', async () => {
    const userId = await createUser();
    await connectAccounts(userId, ['stripe', 'slack', 'hubspot']);
    await install(userId, STRIPE_TO_SLACK);
    const el = await modalFixture({ userId, integration: 'slack' });
    await el.show();
    await untilRole(el, 'switch');
    await waitUntil(() => focused(el)?.getAttribute('role') === 'switch', 'focus on the first switch');
    const first = focused(el) as HTMLInputElement;
    expect(first.checked).to.equal(true);
    await sendKeys({ press: ' ' }); // Space, by the character: Firefox's driver does not know the name
    expect(first.checked).to.equal(false);
    await sendKeys({ press: 'Tab' });
    await sendKeys({ press: ' ' }); // Space, by the character: Firefox's driver does not know the name
    expect((focused(el) as HTMLInputElement).checked).to.equal(true);
  });
});
