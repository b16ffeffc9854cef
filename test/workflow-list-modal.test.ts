import { expect, fixture, html, oneEvent } from '@open-wc/testing';
import { sendKeys } from '@web/test-runner-commands';
import { ForgeClient } from '../src/api/index.js';
import type { UserWithWorkflows } from '../src/api/types.js';
import type { ForgeConfigModal } from '../src/config-modal/config-modal.js';
import { allByPart, byLabel, byPart, byRole } from './support/harness.js';
import '../src/workflow-list/define.js';
import type { ForgeWorkflowList } from '../src/workflow-list/workflow-list.js';
import {
  connectIntegrations,
  createUser,
  hostApi,
  STRIPE_TO_SLACK,
  serviceInfo,
  tokenUrl,
  userToken,
} from './support/forge.js';
import { waitUntil } from './support/wait.js';

// The list drives the real <forge-config-modal> here: Enable and Configure open it, and the
// row follows what the modal saved.

let apiBase: string;
before(async () => ({ apiBase } = await serviceInfo()));

async function connectedUser(): Promise<string> {
  const userId = await createUser();
  await connectIntegrations(userId, ['stripe', 'slack', 'hubspot', 'google-sheets', 'mailchimp']);
  return userId;
}

async function renderList(userId: string): Promise<ForgeWorkflowList> {
  const el = await fixture<ForgeWorkflowList>(
    html`<forge-workflow-list api-base=${apiBase} token-url=${tokenUrl(userId)}></forge-workflow-list>`,
  );
  // As long as the suite's other waits for the service: one second is too short while three
  // engines share two cores.
  await waitUntil(() => byPart(el.shadowRoot!, 'list'), 'the list did not load');
  return el;
}

const row = (el: ForgeWorkflowList, name: string) =>
  [...allByPart(el.shadowRoot!, 'row')].find((r) => byPart(r, 'name')!.textContent === name)!;
const switchOf = (el: ForgeWorkflowList, name: string) => byRole<HTMLInputElement>(el.shadowRoot!, 'switch', name);

/** Waits for the open modal's settings step and answers its save button. */
async function saveButton(el: ForgeWorkflowList): Promise<HTMLButtonElement> {
  const find = () => {
    const modal = el.shadowRoot!.querySelector<ForgeConfigModal>('forge-config-modal')?.shadowRoot;
    return (
      modal &&
      byRole(modal, 'form', 'Settings') &&
      byRole<HTMLButtonElement>(modal, 'button', /^(Save changes|Enable workflow)$/)
    );
  };
  await waitUntil(find, 'the modal did not reach its settings');
  return find()!;
}

/** Paths of the requests made from now on (observed only; each still reaches the service). */
function watchRequests(): { paths: string[]; stop: () => void } {
  const realFetch = window.fetch;
  const paths: string[] = [];
  window.fetch = (input, init) => {
    const url = new URL(String(input instanceof Request ? input.url : input));
    paths.push(`${init?.method ?? 'GET'} ${url.pathname.replace('/forge/2021-12', '')}`);
    return realFetch(input, init);
  };
  return { paths, stop: () => (window.fetch = realFetch) };
}

describe('<forge-workflow-list> with <forge-config-modal>', () => {
  it('lets the page style the modal it opens through the exported modal-* parts', async () => {
    const style = document.createElement('style');
    style.textContent = 'forge-workflow-list::part(modal-footer) { border-top: 5px solid rgb(1, 2, 3); }';
    document.head.append(style);
    try {
      const el = await renderList(await connectedUser());
      byPart<HTMLButtonElement>(row(el, STRIPE_TO_SLACK.name), 'enable-button')!.click();
      await saveButton(el);
      const modal = el.shadowRoot!.querySelector<ForgeConfigModal>('forge-config-modal')!;
      const footer = byPart(modal.shadowRoot!, 'footer')!;
      expect(getComputedStyle(footer).borderTopColor).to.equal('rgb(1, 2, 3)');
      expect(getComputedStyle(footer).borderTopWidth).to.equal('5px');
    } finally {
      style.remove();
    }
  });

  it('enabling a workflow in the modal turns its row into a switch and Configure, without reloading the list', async () => {
    const userId = await connectedUser();
    const el = await renderList(userId);
    const enable = byPart<HTMLButtonElement>(row(el, STRIPE_TO_SLACK.name), 'enable-button')!;
    enable.focus();
    await sendKeys({ press: 'Enter' });
    const save = await saveButton(el);

    const requests = watchRequests();
    let install: CustomEvent<{ parentId: string; workflowId: string }>;
    try {
      save.click();
      install = await oneEvent(el, 'forge-install');
      requests.paths.length = 0;
      await waitUntil(() => switchOf(el, STRIPE_TO_SLACK.name)?.checked, 'the row did not show the switch on');
    } finally {
      requests.stop();
    }
    expect(install.detail.parentId).to.equal(STRIPE_TO_SLACK.id);
    // Only the new child was read again, not the catalog or the user.
    expect(requests.paths).to.deep.equal([`GET /workflow/${install.detail.workflowId}`]);
    expect(byPart(row(el, STRIPE_TO_SLACK.name), 'configure-button')).to.equal(enable);

    const { body } = await hostApi<UserWithWorkflows>('GET', `/user/${userId}`);
    expect(body.workflows.map((w) => [w.parentId, w._id, w.active])).to.deep.equal([
      [STRIPE_TO_SLACK.id, install.detail.workflowId, true],
    ]);

    // Closing the modal puts focus back on the row's button, now "Configure".
    const modal = el.shadowRoot!.querySelector<ForgeConfigModal>('forge-config-modal')!;
    const hidden = oneEvent(el, 'forge-after-hide');
    await modal.hide();
    await hidden;
    expect(el.shadowRoot!.activeElement).to.equal(enable);
    expect(enable.textContent).to.contain('Configure');
  });

  it('saving settings in the modal re-reads that one workflow and shows its state', async () => {
    const userId = await connectedUser();
    const client = new ForgeClient({ baseUrl: apiBase, credential: await userToken(userId) });
    const { workflowId } = await client.installWorkflow(STRIPE_TO_SLACK.id);
    const el = await renderList(userId);
    expect(switchOf(el, STRIPE_TO_SLACK.name)!.checked).to.be.true;
    // Switched off elsewhere (the host's backend) while this list still shows it on.
    await hostApi('PUT', `/workflow/${workflowId}/deactivate`);

    byPart<HTMLButtonElement>(row(el, STRIPE_TO_SLACK.name), 'configure-button')!.click();
    const save = await saveButton(el);
    const modalRoot = el.shadowRoot!.querySelector('forge-config-modal')!.shadowRoot!;
    const channel = byLabel(modalRoot, 'Channel')!;
    channel.focus();
    channel.select();
    await sendKeys({ type: '#sales' });

    const requests = watchRequests();
    try {
      save.click();
      const update = await oneEvent(el, 'forge-update');
      expect(update.detail.workflowId).to.equal(workflowId);
      requests.paths.length = 0;
      await waitUntil(
        () => switchOf(el, STRIPE_TO_SLACK.name)?.checked === false,
        'the row did not follow the service',
      );
    } finally {
      requests.stop();
    }
    // The list's own reads: the channel field's search for what was typed (the modal's, debounced)
    // may still go out after the save.
    const listReads = requests.paths.filter((path) => !path.endsWith('/options'));
    expect(listReads).to.deep.equal([`GET /workflow/${workflowId}`]);
  });
});
