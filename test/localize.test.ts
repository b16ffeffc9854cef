import { expect, fixture, html } from '@open-wc/testing';
import type { ForgeConfigModal } from '../src/config-modal/config-modal.js';
import { allByPart, byPart, byRole } from './support/harness.js';
import '../src/config-modal/define.js';
import { registerStrings } from '../src/internal/localize.js';
import '../src/workflow-list/define.js';
import type { ForgeWorkflowList } from '../src/workflow-list/workflow-list.js';
import { createUser, serviceInfo, tokenUrl } from './support/forge.js';
import { waitUntil } from './support/wait.js';

registerStrings('de', {
  workflowList: { enable: 'Aktivieren', listLabel: 'Workflows (de)' },
  configModal: { titleInstall: (name) => `${name} aktivieren` },
});
registerStrings('de-CH', { workflowList: { listLabel: 'Workflows (de-CH)' } });
// Polish has more plural forms than English: one, few, many.
registerStrings('pl', {
  workflowList: {
    matchCount: (shown, total, plural) =>
      plural(total, {
        one: `${shown} z # (one)`,
        few: `${shown} z # (few)`,
        many: `${shown} z # (many)`,
        other: '(other)',
      }),
  },
});

async function listIn(lang: string | undefined, userId: string) {
  const { apiBase } = await serviceInfo();
  const wrapper = await fixture<HTMLElement>(html`<div lang=${lang ?? ''}>
    <forge-workflow-list api-base=${apiBase} token-url=${tokenUrl(userId)}></forge-workflow-list>
  </div>`);
  if (lang === undefined) wrapper.removeAttribute('lang');
  const el = wrapper.querySelector<ForgeWorkflowList>('forge-workflow-list')!;
  await waitUntil(() => byPart(el.shadowRoot!, 'list'), 'the list loads');
  return el;
}

const enableButton = (el: ForgeWorkflowList) => byPart<HTMLButtonElement>(el.shadowRoot!, 'enable-button')!;

describe('localization', () => {
  it('shows the texts registered for the nearest lang, falling back to the language, then English', async () => {
    const userId = await createUser();
    const german = await listIn('de', userId);
    expect(enableButton(german).textContent).to.contain('Aktivieren');
    expect(byPart(german.shadowRoot!, 'list')!.getAttribute('aria-label')).to.equal('Workflows (de)');

    const swiss = await listIn('de-CH', userId);
    expect(enableButton(swiss).textContent, 'from de').to.contain('Aktivieren');
    expect(byPart(swiss.shadowRoot!, 'list')!.getAttribute('aria-label')).to.equal('Workflows (de-CH)');

    const english = await listIn('fr', userId);
    expect(enableButton(english).textContent).to.contain('Enable');
  });

  it("lets an element's own strings win over registered ones", async () => {
    const el = await listIn('de', await createUser());
    el.strings = { enable: 'Einschalten' };
    await el.updateComplete;
    expect(enableButton(el).textContent).to.contain('Einschalten');
  });

  it('translates the modal the list opens from the lang around the list, with nothing passed through', async () => {
    const el = await listIn('de', await createUser());
    enableButton(el).click();
    await waitUntil(() => el.shadowRoot!.querySelector('forge-config-modal'), 'the modal opens');
    const modal = el.shadowRoot!.querySelector<ForgeConfigModal>('forge-config-modal')!;
    await waitUntil(
      () => byRole(modal.shadowRoot!, 'heading')?.textContent?.includes('aktivieren'),
      `the title is German: ${byRole(modal.shadowRoot!, 'heading')?.textContent}`,
    );
    await modal.hide();
  });

  it('follows a change of <html lang>', async () => {
    const el = await listIn(undefined, await createUser());
    const page = document.documentElement;
    const before = page.lang;
    try {
      page.lang = 'de';
      await waitUntil(() => enableButton(el).textContent!.includes('Aktivieren'), 'the list turns German');
    } finally {
      page.lang = before;
    }
    await waitUntil(() => enableButton(el).textContent!.includes('Enable'), 'the list turns English again');
  });

  it('counts with the plural rules of the locale', async () => {
    const el = await listIn('pl', await createUser());
    el.filterThreshold = 0;
    await el.updateComplete;
    const filter = byPart<HTMLInputElement>(el.shadowRoot!, 'filter')!;
    filter.value = 'slack';
    filter.dispatchEvent(new Event('input'));
    await el.updateComplete;
    const total = allByPart(el.shadowRoot!, 'row').length;
    expect(total).to.be.greaterThan(0);
    const all = 7;
    const category = new Intl.PluralRules('pl').select(all);
    expect(category).to.equal('many');
    expect(byRole(el.shadowRoot!, 'status')!.textContent).to.equal(`${total} z ${all} (many)`);
  });
});
