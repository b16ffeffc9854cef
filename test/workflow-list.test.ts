import { aTimeout, expect, fixture, html, oneEvent } from '@open-wc/testing';
import { sendKeys } from '@web/test-runner-commands';
import { ForgeClient } from '../src/api/index.js';
import type { UserWithWorkflows } from '../src/api/types.js';
import type { ForgeEventName } from '../src/events.js';
import { allByPart, allByRole, byPart, byRole } from './support/harness.js';
import '../src/workflow-list/define.js';
import type { ForgeWorkflowList } from '../src/workflow-list/workflow-list.js';
import {
  clearFaults,
  connectIntegrations,
  createUser,
  HUBSPOT_TO_SLACK,
  hostApi,
  injectFault,
  STRIPE_TO_SLACK,
  serviceInfo,
  tokenUrl,
  userToken,
} from './support/forge.js';
import { waitUntil } from './support/wait.js';

const ALL_INTEGRATIONS = ['stripe', 'slack', 'hubspot', 'google-sheets', 'mailchimp'];

let apiBase: string;
let faultyBase: string;
before(async () => ({ apiBase, faultyBase } = await serviceInfo()));
afterEach(() => clearFaults());

/** A new user with every integration connected and the given parent workflows installed. */
async function userWith(...parents: { id: string }[]): Promise<{ userId: string; childOf: Map<string, string> }> {
  const userId = await createUser();
  await connectIntegrations(userId, ALL_INTEGRATIONS);
  const client = new ForgeClient({ baseUrl: apiBase, credential: await userToken(userId) });
  const childOf = new Map<string, string>();
  for (const parent of parents) childOf.set(parent.id, (await client.installWorkflow(parent.id)).workflowId);
  return { userId, childOf };
}

/** The user's child workflows as the service holds them, read with the API key. */
async function serviceState(userId: string): Promise<Map<string, boolean>> {
  const { body } = await hostApi<UserWithWorkflows>('GET', `/user/${userId}`);
  return new Map(body.workflows.map((w) => [w.parentId, w.active]));
}

const shadow = (el: ForgeWorkflowList) => el.shadowRoot!;
const settled = (el: ForgeWorkflowList) =>
  waitUntil(
    () => byPart(shadow(el), 'list') ?? byPart(shadow(el), 'empty') ?? byPart(shadow(el), 'error'),
    'the list did not load',
  );

async function renderList(userId: string, base = apiBase): Promise<ForgeWorkflowList> {
  const el = await fixture<ForgeWorkflowList>(
    html`<forge-workflow-list api-base=${base} token-url=${tokenUrl(userId)}></forge-workflow-list>`,
  );
  await settled(el);
  return el;
}

const rows = (el: ForgeWorkflowList) => [...allByPart<HTMLElement>(shadow(el), 'row')];
const rowNamed = (el: ForgeWorkflowList, name: string) => {
  const row = rows(el).find((r) => byPart(r, 'name')?.textContent === name);
  if (!row) throw new Error(`No row named ${name}`);
  return row;
};
const switchFor = (el: ForgeWorkflowList, name: string) => byRole<HTMLInputElement>(shadow(el), 'switch', name);
const names = (el: ForgeWorkflowList) => rows(el).map((r) => byPart(r, 'name')!.textContent);

/** Records every forge event that reaches `el`. */
function recordEvents(el: HTMLElement, ...types: ForgeEventName[]): CustomEvent[] {
  const seen: CustomEvent[] = [];
  for (const type of types) el.addEventListener(type, (event) => seen.push(event as CustomEvent));
  return seen;
}

describe('<forge-workflow-list>', () => {
  it('shows every offered workflow with its icons: a switch and Configure when installed, Enable otherwise', async () => {
    const { userId } = await userWith(STRIPE_TO_SLACK);
    const el = await renderList(userId);
    const { body } = await hostApi<{ data: unknown[] }>('GET', '/workflow');
    expect(rows(el)).to.have.length(body.data.length);

    const installed = rowNamed(el, STRIPE_TO_SLACK.name);
    expect(switchFor(el, STRIPE_TO_SLACK.name)!.checked).to.be.true;
    expect(byPart(installed, 'configure-button')!.textContent).to.contain('Configure');
    const icons = [...installed.querySelectorAll('img')];
    expect(icons.map((i) => i.alt)).to.deep.equal(['Stripe', 'Slack']);
    expect(icons[0]!.src).to.match(/^http:\/\/localhost:\d+\/forge\/2021-12\/icons\/stripe\.svg$/);

    const other = rowNamed(el, HUBSPOT_TO_SLACK.name);
    expect(byRole(other, 'switch')).to.equal(null);
    expect(byPart(other, 'enable-button')!.textContent).to.contain('Enable');
    await expect(el).to.be.accessible();
  });

  it('switches a workflow off and on again, and the service agrees each time', async () => {
    const { userId, childOf } = await userWith(STRIPE_TO_SLACK);
    const el = await renderList(userId);
    const toggle = switchFor(el, STRIPE_TO_SLACK.name)!;

    toggle.click();
    const off = await oneEvent(el, 'forge-toggle');
    expect(off.detail).to.deep.equal({ workflowId: childOf.get(STRIPE_TO_SLACK.id), active: false });
    expect(toggle.checked).to.be.false;
    expect((await serviceState(userId)).get(STRIPE_TO_SLACK.id)).to.be.false;

    toggle.click();
    const on = await oneEvent(el, 'forge-toggle');
    expect(on.detail.active).to.be.true;
    expect((await serviceState(userId)).get(STRIPE_TO_SLACK.id)).to.be.true;
  });

  it('moves a switch at once, and back with the reason in the row when the service fails', async () => {
    const { userId } = await userWith(STRIPE_TO_SLACK);
    const el = await renderList(userId, faultyBase);
    await injectFault('PUT', '/deactivate$', 500);
    const events = recordEvents(el, 'forge-toggle');
    const toggle = switchFor(el, STRIPE_TO_SLACK.name)!;

    toggle.click();
    await el.updateComplete;
    expect(toggle.checked, 'optimistic').to.be.false;
    const error = await oneEvent(el, 'forge-error');
    await el.updateComplete;

    expect(error.detail).to.include({ code: 'toggle-failed', status: 500 });
    expect(toggle.checked, 'rolled back').to.be.true;
    const message = byPart(rowNamed(el, STRIPE_TO_SLACK.name), 'row-error')!;
    // Plain words in the row; the service's own words go to the host's developer in the event.
    expect(message.textContent).to.contain(
      'Could not turn this workflow off. Something went wrong. If it keeps happening, contact support.',
    );
    expect(error.detail.message).to.contain('The service failed to answer. Try again');
    expect(events).to.have.length(0);
    expect((await serviceState(userId)).get(STRIPE_TO_SLACK.id)).to.be.true;
    await expect(el).to.be.accessible();

    // The next try works and clears the message.
    toggle.click();
    await oneEvent(el, 'forge-toggle');
    await el.updateComplete;
    expect(byPart(rowNamed(el, STRIPE_TO_SLACK.name), 'row-error')).to.equal(null);
  });

  it('stops a switch request when the list is removed, and touches nothing after', async () => {
    const { userId } = await userWith(STRIPE_TO_SLACK);
    const el = await renderList(userId);
    const events = recordEvents(el, 'forge-toggle', 'forge-error');
    const toggle = switchFor(el, STRIPE_TO_SLACK.name)!;
    // Observes the switch's request only; it still goes to the real service.
    const realFetch = window.fetch;
    let request: Promise<Response> | undefined;
    window.fetch = (...args) => {
      const sent = realFetch(...args);
      if (/\/deactivate$/.test(String(args[0]))) request = sent;
      return sent;
    };
    try {
      toggle.click();
      el.remove();
      await waitUntil(() => request !== undefined, 'the switch sends its request');
    } finally {
      window.fetch = realFetch;
    }
    const outcome = await request!.then(
      () => 'answered',
      (error: Error) => error.name,
    );
    await aTimeout(0);
    expect(outcome).to.equal('AbortError');
    expect(events).to.deep.equal([]);
    expect(toggle.checked, 'the switch is left as the user put it').to.be.false;
    expect(byPart(rowNamed(el, STRIPE_TO_SLACK.name), 'row-error')).to.equal(null);
  });

  it('queues a click made while a switch is saving: one request at a time, ending where the switch shows', async () => {
    const { userId } = await userWith(STRIPE_TO_SLACK);
    const el = await renderList(userId);
    const events = recordEvents(el, 'forge-toggle');
    // Observes the requests only; each still goes to the real service.
    const realFetch = window.fetch;
    let inFlight = 0;
    let mostInFlight = 0;
    window.fetch = async (...args) => {
      const toggles = /\/(de)?activate$/.test(String(args[0]));
      if (toggles) mostInFlight = Math.max(mostInFlight, ++inFlight);
      try {
        return await realFetch(...args);
      } finally {
        if (toggles) inFlight--;
      }
    };
    try {
      const toggle = switchFor(el, STRIPE_TO_SLACK.name)!;
      toggle.click();
      toggle.click();
      expect(toggle.checked).to.be.true;
      await waitUntil(() => events.length === 2, 'two confirmed switches');
    } finally {
      window.fetch = realFetch;
    }
    expect(mostInFlight).to.equal(1);
    expect(events.map((e) => e.detail.active)).to.deep.equal([false, true]);
    expect((await serviceState(userId)).get(STRIPE_TO_SLACK.id)).to.be.true;
  });

  it('keeps a switch working when the list is read again while the switch saves', async () => {
    const { userId } = await userWith(STRIPE_TO_SLACK);
    const el = await renderList(userId);
    const events = recordEvents(el, 'forge-toggle');
    // Holds the switch's first request until the list was read again; it still goes to the real service.
    const realFetch = window.fetch;
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    window.fetch = async (...args) => {
      if (/\/deactivate$/.test(String(args[0]))) await held;
      return realFetch(...args);
    };
    try {
      switchFor(el, STRIPE_TO_SLACK.name)!.click();
      await el.refresh();
      release();
      await waitUntil(() => events.length === 1, 'the service confirmed the switch');
      switchFor(el, STRIPE_TO_SLACK.name)!.click();
      await waitUntil(() => events.length === 2, 'a click after the read sends its request too');
    } finally {
      release();
      window.fetch = realFetch;
    }
    expect(events.map((e) => e.detail.active)).to.deep.equal([false, true]);
    expect((await serviceState(userId)).get(STRIPE_TO_SLACK.id)).to.be.true;
  });

  it("never shows another user's workflows", async () => {
    const someoneElse = await userWith(STRIPE_TO_SLACK);
    const { userId } = await userWith(HUBSPOT_TO_SLACK);
    const el = await renderList(userId);
    expect(switchFor(el, STRIPE_TO_SLACK.name)).to.equal(null);
    expect(byPart(rowNamed(el, STRIPE_TO_SLACK.name), 'enable-button')).to.exist;
    expect(switchFor(el, HUBSPOT_TO_SLACK.name)).to.exist;
    expect(allByRole(shadow(el), 'switch')).to.have.length(1);
    expect((await serviceState(someoneElse.userId)).get(STRIPE_TO_SLACK.id)).to.be.true;
  });

  it('lists only the workflows of the integration it is filtered by, and follows a change of it', async () => {
    const { userId } = await userWith();
    const el = await fixture<ForgeWorkflowList>(
      html`<forge-workflow-list api-base=${apiBase} token-url=${tokenUrl(userId)} integration="mailchimp"></forge-workflow-list>`,
    );
    await settled(el);
    const expected = async (integration: string) =>
      (await hostApi<{ data: { name: string }[] }>('GET', `/workflow?integration=${integration}`)).body.data.map(
        (w) => w.name,
      );
    const mailchimp = await expected('mailchimp');
    expect(mailchimp.length).to.be.within(1, 6);
    expect(names(el)).to.deep.equal(mailchimp);

    el.integration = 'hubspot';
    const hubspot = await expected('hubspot');
    await waitUntil(() => names(el).join() === hubspot.join(), 'the hubspot workflows');
  });

  it('says so when no workflow is on offer', async () => {
    const { userId } = await userWith();
    const el = await fixture<ForgeWorkflowList>(
      html`<forge-workflow-list api-base=${apiBase} token-url=${tokenUrl(userId)} integration="no-such-app"></forge-workflow-list>`,
    );
    await settled(el);
    expect(byPart(shadow(el), 'empty')!.textContent).to.contain('No workflows on offer');
    await expect(el).to.be.accessible();
  });

  it('shows a skeleton while loading', async () => {
    // A token that never comes keeps the list loading.
    const never = () => new Promise<string>(() => {});
    const el = await fixture<ForgeWorkflowList>(
      html`<forge-workflow-list api-base=${apiBase} .tokenProvider=${never}></forge-workflow-list>`,
    );
    expect(byPart(shadow(el), 'skeleton')).to.exist;
    expect(byRole(shadow(el), 'status')!.textContent).to.equal('Loading workflows…');
    await expect(el).to.be.accessible();
  });

  it('shows why loading failed, and a retry that recovers', async () => {
    const { userId } = await userWith();
    await injectFault('GET', '/workflow-summary$', 500);
    const el = await fixture<ForgeWorkflowList>(
      html`<forge-workflow-list api-base=${faultyBase} token-url=${tokenUrl(userId)}></forge-workflow-list>`,
    );
    const error = await oneEvent(el, 'forge-error');
    expect(error.detail).to.include({ code: 'load-failed', status: 500 });
    await settled(el);
    const failure = byPart(shadow(el), 'error')!;
    expect(failure.textContent).to.contain('Your workflows could not be loaded.');
    expect(failure.textContent).to.contain('The service failed to answer.');
    await expect(el).to.be.accessible();

    const retry = byPart<HTMLButtonElement>(shadow(el), 'retry-button')!;
    retry.focus();
    await sendKeys({ press: 'Enter' });
    await waitUntil(() => rows(el).length > 0, 'the list after retrying');
    expect(shadow(el).activeElement).to.equal(byPart(shadow(el), 'list'));
  });

  it('explains a token endpoint that fails', async () => {
    const { userId } = await userWith();
    const el = await fixture<ForgeWorkflowList>(
      html`<forge-workflow-list api-base=${apiBase} token-url=${tokenUrl(userId, 'error')}></forge-workflow-list>`,
    );
    const error = await oneEvent(el, 'forge-error');
    expect(error.detail.code).to.equal('token-fetch-failed');
    await settled(el);
    expect(byPart(shadow(el), 'error')!.textContent).to.contain('answered 500');
  });

  it('works by keyboard: Tab reaches the switch and Space flips it', async () => {
    const { userId } = await userWith(STRIPE_TO_SLACK);
    const el = await renderList(userId);
    const toggle = switchFor(el, STRIPE_TO_SLACK.name)!;
    await sendKeys({ press: 'Tab' });
    expect(shadow(el).activeElement).to.equal(toggle);

    // Listening first: the service may confirm before the key press's command returns.
    const toggled = oneEvent(el, 'forge-toggle');
    await sendKeys({ press: ' ' }); // Space, by the character: Firefox's driver does not know the name
    const event = await toggled;
    expect(event.detail.active).to.be.false;
    expect((await serviceState(userId)).get(STRIPE_TO_SLACK.id)).to.be.false;

    await sendKeys({ press: 'Tab' });
    expect(shadow(el).activeElement!.textContent).to.contain('Configure');
  });

  it('offers a filter box past its threshold', async () => {
    const { userId } = await userWith();
    const el = await renderList(userId);
    expect(byPart(shadow(el), 'filter'), 'seven workflows need no filter').to.equal(null);

    el.filterThreshold = 5;
    await el.updateComplete;
    const filter = byPart<HTMLInputElement>(shadow(el), 'filter')!;
    filter.focus();
    await sendKeys({ type: 'hubspot' });
    await el.updateComplete;
    expect(names(el).length).to.be.within(1, 6);
    for (const row of rows(el)) expect(row.textContent!.toLowerCase()).to.contain('hubspot');
    expect(byRole(shadow(el), 'status')!.textContent).to.equal(`${rows(el).length} of 7 workflows shown`);
    await expect(el).to.be.accessible();

    await sendKeys({ type: ' nothing like it' });
    await el.updateComplete;
    expect(rows(el)).to.have.length(0);
    expect(shadow(el).textContent).to.contain('No workflow matches “hubspot nothing like it”.');
  });

  it('fires no event for changes made in code, and refresh() shows what changed elsewhere', async () => {
    const { userId, childOf } = await userWith(STRIPE_TO_SLACK);
    const el = await renderList(userId);
    const events = recordEvents(el, 'forge-toggle', 'forge-install', 'forge-update', 'forge-error');

    await hostApi('PUT', `/workflow/${childOf.get(STRIPE_TO_SLACK.id)}/deactivate`);
    await el.refresh();
    expect(switchFor(el, STRIPE_TO_SLACK.name)!.checked).to.be.false;

    el.strings = { enable: 'Turn on' };
    el.theme = 'dark';
    await el.updateComplete;
    expect(byPart(rowNamed(el, HUBSPOT_TO_SLACK.name), 'enable-button')!.textContent).to.contain('Turn on');
    expect(events).to.have.length(0);
  });

  it('offers Enable again when the workflow was removed behind its back', async () => {
    const { userId, childOf } = await userWith(STRIPE_TO_SLACK);
    const el = await renderList(userId);
    await hostApi('DELETE', `/workflow/${childOf.get(STRIPE_TO_SLACK.id)}`);

    switchFor(el, STRIPE_TO_SLACK.name)!.click();
    const error = await oneEvent(el, 'forge-error');
    expect(error.detail.status).to.equal(404);
    await el.updateComplete;
    const row = rowNamed(el, STRIPE_TO_SLACK.name);
    expect(byRole(row, 'switch')).to.equal(null);
    expect(byPart(row, 'enable-button')).to.exist;
    expect(byPart(row, 'row-error')!.textContent).to.contain('This workflow was removed.');
  });
});
