import { expect } from '@open-wc/testing';
import { ForgeEmbedClient } from '../../src/api/embed-client.js';
import { saveSettings } from '../../src/config-modal/save.js';
import { settingFields } from '../../src/config-modal/settings.js';
import { type Loaded, loadedFrom, openingView } from '../../src/config-modal/state.js';
import { install, STRIPE_TO_SLACK, variablesOf } from '../support/config-modal.js';
import { clearFaults, connectIntegrations, createUser, injectFault, serviceInfo, userToken } from '../support/forge.js';

/**
 * The save sequence against the real service: a user with Stripe and Slack connected, the
 * STRIPE_TO_SLACK workflow loaded as the modal loads it, and every request it sends recorded.
 */
async function opened(base?: string) {
  const userId = await createUser();
  await connectIntegrations(userId, ['stripe', 'slack']);
  const { apiBase, faultyBase } = await serviceInfo();
  const requests: string[] = [];
  const client = new ForgeEmbedClient({
    baseUrl: base === 'faulty' ? faultyBase : apiBase,
    credential: await userToken(userId),
    fetch: (input, init) => {
      requests.push(`${init?.method} ${String(input).replace(/^.*\/forge\/2021-12/, '')}`);
      return fetch(input, init);
    },
  });
  const load = async () => {
    const setup = await client.getSetup({ workflowId: STRIPE_TO_SLACK });
    return loadedFrom(setup, { workflowId: STRIPE_TO_SLACK, integration: '' });
  };
  const loaded = await load();
  const view = openingView(loaded);
  const values = view.values;
  const fieldNamed = (name: string) => settingFields(loaded.workflows[0]!).find((f) => f.name === name)!;
  const events: Array<[string, unknown]> = [];
  const save = (current: Loaded = loaded) => {
    requests.length = 0;
    return saveSettings({
      client,
      loaded: current,
      selected: view.selected,
      valueFor: (f) => (f.numeric ? Number(values.get(f.key)) : values.get(f.key)!),
      emit: (name, detail) => events.push([name, detail]),
      errors: new Map(),
      signal: new AbortController().signal,
    });
  };
  return { userId, loaded, load, values, fieldNamed, events, requests, save };
}

describe('saveSettings', () => {
  afterEach(() => clearFaults());

  it('installs a new workflow with the values, then writes only what changed', async () => {
    const { loaded, values, fieldNamed, events, requests, save } = await opened();
    values.set(fieldNamed('channel').key, '#sales');
    await save();
    const childId = loaded.installed.get(STRIPE_TO_SLACK)!.workflowId;
    expect(requests).to.deep.equal([`POST /workflow/${STRIPE_TO_SLACK}/install`]);
    expect(events).to.deep.equal([['forge-install', { parentId: STRIPE_TO_SLACK, workflowId: childId }]]);
    expect(await variablesOf(childId)).to.include({ channel: '#sales', minimumAmount: 50 });

    events.length = 0;
    await save();
    expect(requests, 'nothing changed, nothing sent').to.deep.equal([]);

    values.set(fieldNamed('minimumAmount').key, '125');
    await save();
    expect(requests).to.have.length(1);
    expect(requests[0]).to.match(new RegExp(`^PATCH /workflow/${childId}/variables/`));
    expect(events.map(([name]) => name)).to.deep.equal(['forge-update']);
    expect(await variablesOf(childId)).to.include({ channel: '#sales', minimumAmount: 125 });
  });

  it("writes into another tab's copy when the install answers 409", async () => {
    const { userId, loaded, values, fieldNamed, events, requests, save } = await opened();
    const otherTab = await install(userId, STRIPE_TO_SLACK);
    values.set(fieldNamed('channel').key, '#from-this-tab');
    await save();
    expect(requests[0]).to.equal(`POST /workflow/${STRIPE_TO_SLACK}/install`);
    expect(requests.slice(1).every((r) => r.startsWith(`PATCH /workflow/${otherTab}/`))).to.be.true;
    expect(loaded.installed.get(STRIPE_TO_SLACK)!.workflowId).to.equal(otherTab);
    expect(events.map(([name]) => name)).to.deep.equal(['forge-update']);
    expect(await variablesOf(otherTab)).to.include({ channel: '#from-this-tab' });
  });

  it('keeps what succeeded when a step fails, so a retry repeats only the rest', async () => {
    const { userId, load, values, fieldNamed, requests, save } = await opened('faulty');
    const childId = await install(userId, STRIPE_TO_SLACK);
    const loaded = await load();
    values.set(fieldNamed('channel').key, '#retry');
    await injectFault('PATCH', '/variables/', 500);
    const failure = await save(loaded).then(
      () => undefined,
      (error: { status: number }) => error.status,
    );
    expect(failure).to.equal(500);
    await save(loaded);
    expect(requests).to.have.length(1);
    expect(await variablesOf(childId)).to.include({ channel: '#retry' });
    await save(loaded);
    expect(requests, 'saved once it went through').to.deep.equal([]);
  });
});
