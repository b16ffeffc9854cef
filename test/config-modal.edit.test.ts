import { expect } from '@open-wc/testing';
import {
  ALL_EVENTS,
  allByRole,
  button,
  childrenOf,
  connectAccounts,
  connectedUser,
  field,
  fill,
  Harness,
  HUBSPOT_SETTINGS_BLOCK,
  HUBSPOT_TO_SLACK,
  install,
  modalFixture,
  type RecordedRequest,
  recordEvents,
  requestsDuring,
  SETTINGS_BLOCK,
  STRIPE_SUMMARY_TO_SLACK,
  STRIPE_TO_SLACK,
  shadow,
  untilButton,
  untilPart,
  untilRole,
  variablesOf,
  visibleText,
} from './support/config-modal.js';
import { createUser } from './support/forge.js';
import { waitUntil } from './support/wait.js';

const writes = (requests: RecordedRequest[]) =>
  requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${new URL(r.url).pathname.split('/2021-12')[1]}`);

/** The requests an open makes until the modal shows `selector`: the token's path, the service's path and query. */
async function requestsToOpen(
  el: HTMLElement & { show(): Promise<void> },
  shows: (el: HTMLElement) => Promise<unknown>,
): Promise<string[]> {
  const requests = await requestsDuring(async () => {
    await el.show();
    await shows(el);
  });
  // A setting whose choices come from the app reads them once its field is shown, after the open.
  return requests.flatMap(({ method, url }) => {
    const { pathname, search } = new URL(url);
    if (pathname.endsWith('/options')) return [];
    // The token URL carries the test user's id; only where it goes matters here.
    return [
      pathname.startsWith('/forge/') ? `${method} ${pathname.split('/2021-12')[1]}${search}` : `${method} ${pathname}`,
    ];
  });
}

describe('<forge-config-modal> edit', () => {
  it('pre-fills the user’s values and PATCHes only what changed', async () => {
    const userId = await connectedUser();
    const childId = await install(userId, STRIPE_TO_SLACK, {
      [SETTINGS_BLOCK]: { channel: '#old', minimumAmount: 10 },
    });
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    const events = recordEvents(el, ALL_EVENTS);
    await el.show();
    await untilRole(el, 'form', 'Settings');
    expect(field(el, 'Channel').value).to.equal('#old');
    expect(field(el, 'Minimum amount').value).to.equal('10');

    const requests = await requestsDuring(async () => {
      fill(el, 'Channel', '#new');
      (await untilButton(el, 'Save changes')).click();
      await untilButton(el, 'Done');
    });
    expect(visibleText(el)).to.include('Changes saved');
    expect(writes(requests)).to.deep.equal([`PATCH /workflow/${childId}/variables/${SETTINGS_BLOCK}`]);
    expect(JSON.parse(requests.find((r) => r.method === 'PATCH')!.body)).to.deep.equal({ channel: '#new' });
    expect(await variablesOf(childId)).to.deep.equal({ channel: '#new', minimumAmount: 10 });
    expect(events.filter((e) => e.type === 'forge-update').map((e) => e.detail)).to.deep.equal([
      { workflowId: childId, blockIds: [SETTINGS_BLOCK] },
    ]);
    expect(events.some((e) => e.type === 'forge-install')).to.equal(false);
  });

  it('opens an installed workflow with one token fetch and one request for everything else', async () => {
    const userId = await connectedUser();
    await install(userId, STRIPE_TO_SLACK, { [SETTINGS_BLOCK]: { channel: '#mine', minimumAmount: 5 } });
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    expect(await requestsToOpen(el, (e) => untilRole(e, 'form', 'Settings'))).to.deep.equal([
      'GET /test-host/token',
      `GET /setup?workflowId=${STRIPE_TO_SLACK}`,
    ]);
    // That one answer was enough to open the user's copy with their values.
    expect(el.shadowRoot!.querySelector('h2')!.textContent).to.include('Settings of');
    expect(field(el, 'Channel').value).to.equal('#mine');
    expect(field(el, 'Minimum amount').value).to.equal('5');
  });

  it('sends nothing and fires nothing when nothing changed', async () => {
    const userId = await connectedUser();
    await install(userId, STRIPE_TO_SLACK);
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    await el.show();
    await untilRole(el, 'form', 'Settings');
    const events = recordEvents(el, ALL_EVENTS);
    const requests = await requestsDuring(async () => {
      (await untilButton(el, 'Save changes')).click();
      await untilButton(el, 'Done');
    });
    expect(writes(requests)).to.deep.equal([]);
    expect(events).to.deep.equal([]);
  });

  it('refuses what the service would refuse before saving, next to the field, and keeps every value', async () => {
    const userId = await connectedUser();
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    const events = recordEvents(el, ['forge-error', 'forge-install']);
    await el.show();
    await untilRole(el, 'form', 'Settings');
    // The service's own rule (server/shared/variable-rules.ts): the modal checks with it.
    const tooLong = '#'.repeat(10_001);
    fill(el, 'Channel', tooLong);
    fill(el, 'Minimum amount', '75');
    const requests = await requestsDuring(async () => {
      (await untilButton(el, 'Enable workflow')).click();
      await untilPart(el, 'field-error');
    });
    expect(writes(requests)).to.deep.equal([]);

    const channel = field(el, 'Channel');
    await waitUntil(() => channel.getAttribute('aria-invalid') === 'true', 'the field is marked invalid');
    const description = channel
      .getAttribute('aria-describedby')!
      .split(' ')
      .map((id) => el.shadowRoot!.getElementById(id)!.textContent)
      .join(' ');
    expect(description).to.include('Channel must be at most 10000 characters');
    expect(el.shadowRoot!.activeElement).to.equal(channel);
    expect(field(el, 'Minimum amount').getAttribute('aria-invalid')).to.equal('false');
    expect(channel.value).to.equal(tooLong);
    expect(field(el, 'Minimum amount').value).to.equal('75');
    expect(events).to.deep.equal([]);

    fill(el, 'Channel', '#ok');
    await el.updateComplete;
    expect(channel.getAttribute('aria-invalid'), 'the error clears once the field is edited').to.equal('false');
    button(el, 'Enable workflow')!.click();
    await untilButton(el, 'Done');
    const [child] = await childrenOf(userId);
    expect(await variablesOf(child!._id)).to.deep.equal({ channel: '#ok', minimumAmount: 75 });
  });

  it('checks that a number field holds a number before saving', async () => {
    const userId = await connectedUser();
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    await el.show();
    await untilRole(el, 'form', 'Settings');
    const requests = await requestsDuring(async () => {
      fill(el, 'Minimum amount', '');
      (await untilButton(el, 'Enable workflow')).click();
      await untilPart(el, 'field-error');
    });
    expect(visibleText(el)).to.include('Minimum amount must be a number.');
    expect(writes(requests)).to.deep.equal([]);
  });

  it('asks for a number where the service would keep the text: "0x10", "1e3" and "+5" are none', async () => {
    const userId = await connectedUser();
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    await el.show();
    await untilRole(el, 'form', 'Settings');
    for (const text of ['0x10', '1e3', '+5']) {
      const requests = await requestsDuring(async () => {
        fill(el, 'Minimum amount', text);
        (await untilButton(el, 'Enable workflow')).click();
        await untilPart(el, 'field-error');
      });
      expect(visibleText(el), text).to.include('Minimum amount must be a number.');
      expect(writes(requests), text).to.deep.equal([]);
    }
  });

  it('installs once however often the button is pressed', async () => {
    const userId = await connectedUser();
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    const events = recordEvents(el, ['forge-install', 'forge-error']);
    await el.show();
    await untilRole(el, 'form', 'Settings');
    const requests = await requestsDuring(async () => {
      const enable = await untilButton(el, 'Enable workflow');
      enable.click();
      await el.updateComplete;
      expect(enable.getAttribute('aria-disabled')).to.equal('true');
      expect(visibleText(el)).to.include('Saving…');
      enable.click();
      enable.click();
      await untilButton(el, 'Done');
    });
    expect(writes(requests)).to.deep.equal([`POST /workflow/${STRIPE_TO_SLACK}/install`]);
    expect(events.map((e) => e.type)).to.deep.equal(['forge-install']);
    expect(await childrenOf(userId)).to.have.length(1);
  });

  it('saves into the copy installed meanwhile elsewhere (a 409) instead of failing', async () => {
    const userId = await connectedUser();
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    const events = recordEvents(el, ['forge-install', 'forge-update', 'forge-error']);
    await el.show();
    await untilRole(el, 'form', 'Settings');
    const childId = await install(userId, STRIPE_TO_SLACK);
    fill(el, 'Channel', '#mine');
    button(el, 'Enable workflow')!.click();
    await untilButton(el, 'Done');
    expect(await variablesOf(childId)).to.deep.equal({ channel: '#mine', minimumAmount: 50 });
    expect(events).to.deep.equal([
      { type: 'forge-update', detail: { workflowId: childId, blockIds: [SETTINGS_BLOCK] } },
    ]);
  });
});

describe('<forge-config-modal> for an integration', () => {
  it('lists the integration’s workflows with a switch each and applies the choices on save', async () => {
    const userId = await connectedUser();
    await connectAccounts(userId, ['hubspot']);
    const onId = await install(userId, STRIPE_TO_SLACK);
    const editedId = await install(userId, HUBSPOT_TO_SLACK);
    const el = await modalFixture({ userId, integration: 'slack' });
    const events = recordEvents(el, ALL_EVENTS);
    expect(await requestsToOpen(el, (e) => untilRole(e, 'switch'))).to.deep.equal([
      'GET /test-host/token',
      'GET /setup?integration=slack',
    ]);
    expect(el.shadowRoot!.querySelector('h2')!.textContent).to.equal('Set up Slack');

    const switches = [...el.shadowRoot!.querySelectorAll<HTMLInputElement>('input[role="switch"]')];
    const named = (name: string) =>
      switches.find((s) => el.shadowRoot!.getElementById(s.getAttribute('aria-labelledby')!)!.textContent === name)!;
    expect(switches.map((s) => s.checked)).to.deep.equal([true, true, false]);
    named('Post new Stripe payments to Slack').click();
    named('Send a daily Stripe revenue summary to Slack').click();
    (await untilButton(el, 'Continue')).click();

    // Every account is connected, so the settings come next, for the workflows switched on.
    await untilRole(el, 'form', 'Settings');
    expect(
      allByRole(shadow(el), 'heading')
        .filter((h) => h.localName === 'h3')
        .map((h) => h.textContent),
    ).to.deep.equal(['Announce won HubSpot deals in Slack', 'Send a daily Stripe revenue summary to Slack']);
    const channels = [...el.shadowRoot!.querySelectorAll<HTMLInputElement>('input')].filter(
      (input) => el.shadowRoot!.querySelector(`label[for="${input.id}"]`)!.textContent === 'Channel',
    );
    channels[0]!.value = '#deals';
    channels[0]!.dispatchEvent(new Event('input'));

    const requests = await requestsDuring(async () => {
      (await untilButton(el, 'Save')).click();
      await untilButton(el, 'Done');
    });
    const mine = await childrenOf(userId);
    const summary = mine.find((c) => c.parentId === STRIPE_SUMMARY_TO_SLACK)!;
    expect(mine.find((c) => c._id === onId)!.active).to.equal(false);
    expect(summary.active).to.equal(true);
    expect((await variablesOf(editedId, HUBSPOT_SETTINGS_BLOCK)).channel).to.equal('#deals');
    expect(requests.filter((r) => r.method === 'PATCH')).to.have.length(1);
    expect(events.filter((e) => !e.type.includes('show')).map((e) => e.detail)).to.deep.equal([
      { workflowId: onId, active: false },
      { workflowId: editedId, blockIds: [HUBSPOT_SETTINGS_BLOCK] },
      { parentId: STRIPE_SUMMARY_TO_SLACK, workflowId: summary._id },
    ]);
  });

  it('says that nothing is switched on when it is saved with every workflow off, not that all is set', async () => {
    const userId = await connectedUser();
    const onId = await install(userId, STRIPE_TO_SLACK);
    const el = await modalFixture({ userId, integration: 'slack' });
    await el.show();
    await untilRole(el, 'switch');
    for (const control of el.shadowRoot!.querySelectorAll<HTMLInputElement>('input[role="switch"]')) {
      if (control.checked) control.click();
    }
    (await untilButton(el, 'Continue')).click();
    (await untilButton(el, 'Save')).click();
    await untilButton(el, 'Done');
    const said = visibleText(el);
    expect(said).to.include('Nothing is switched on').and.include('No workflow uses Slack for you now.');
    expect(said).not.to.include('All set');
    expect((await childrenOf(userId)).find((c) => c._id === onId)!.active).to.equal(false);
  });

  it('says so when no workflow uses the integration', async () => {
    const userId = await createUser();
    const el = await modalFixture({ userId, integration: 'nothing-uses-this' });
    await el.show();
    await new Harness(el).until(
      () => visibleText(el).includes('No workflows use nothing-uses-this yet.'),
      'the empty message',
    );
  });
});
