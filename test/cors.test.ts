import { expect, fixture, html } from '@open-wc/testing';
import type { ForgeConfigModal } from '../src/config-modal/config-modal.js';
import '../src/config-modal/define.js';
import type { ErrorDetail } from '../src/errors.js';
import '../src/workflow-list/define.js';
import type { ForgeWorkflowList } from '../src/workflow-list/workflow-list.js';
import { createUser, serviceInfo, tokenUrl } from './support/forge.js';
import { byPart, Harness } from './support/harness.js';

/**
 * A service that does not allow the page's origin fails a browser's request exactly as a network
 * failure does; the elements tell the two apart (src/api/origin-check.ts) and say which it was:
 * to the host's developer in `forge-error` and on the console, naming the origin and
 * FORGE_ALLOWED_ORIGINS; to the end user in calm, plain words, never "check your connection".
 */

let info: Awaited<ReturnType<typeof serviceInfo>>;
before(async () => {
  info = await serviceInfo();
});

/** What the element reports while it runs `during`: its forge-error details and console errors. */
async function reports(el: HTMLElement, during: () => Promise<unknown>) {
  const errors: ErrorDetail[] = [];
  const consoled: string[] = [];
  el.addEventListener('forge-error', (event) => errors.push(event.detail));
  const original = console.error;
  console.error = (...args: unknown[]) => consoled.push(args.join(' '));
  try {
    await during();
  } finally {
    console.error = original;
  }
  return { errors, consoled };
}

const REFUSED = `This page's origin (${location.origin}) is not allowed by the Forge service; add it to FORGE_ALLOWED_ORIGINS.`;

describe('a Forge service that does not allow the page’s origin', () => {
  it('<forge-workflow-list> names the origin and FORGE_ALLOWED_ORIGINS to the developer, and tells the user calmly', async () => {
    const userId = await createUser();
    const el = await fixture<ForgeWorkflowList>(
      html`<forge-workflow-list api-base=${info.refusingBase} token-url=${tokenUrl(userId)}></forge-workflow-list>`,
    );
    const ui = new Harness(el);
    const { errors, consoled } = await reports(el, () => ui.until(() => ui.part('error'), 'the load error'));
    expect(errors[0]).to.deep.equal({ code: 'load-failed', message: REFUSED });
    expect(consoled).to.deep.equal([REFUSED]);
    const shown = ui.text(ui.part('error')!);
    expect(shown).to.include('Your workflows could not be loaded.').and.include('contact support');
    expect(shown.toLowerCase()).not.to.include('connection');
    // The developer's words wait behind "Technical details".
    expect(shown).not.to.include('FORGE_ALLOWED_ORIGINS');
    const details = ui.part('error')!.querySelector('details')!;
    expect(details.textContent).to.include(REFUSED);
  });

  it('<forge-config-modal> does the same when it opens', async () => {
    const userId = await createUser();
    const el = await fixture<ForgeConfigModal>(
      html`<forge-config-modal api-base=${info.refusingBase} token-url=${tokenUrl(userId)} integration="slack"></forge-config-modal>`,
    );
    const ui = new Harness(el);
    const { errors, consoled } = await reports(el, async () => {
      await el.show();
      await ui.until(() => ui.role('button', 'Try again'), 'the load error');
    });
    expect(errors[0]).to.deep.equal({ code: 'load-failed', message: REFUSED });
    expect(consoled).to.deep.equal([REFUSED]);
    const shown = ui.text(byPart(el.shadowRoot!, 'message')!);
    expect(shown).to.include('This could not be opened.').and.include('contact support');
    expect(shown.toLowerCase()).not.to.include('connection');
    await el.hide();
  });

  it('a service nobody answers at is still a connection problem, not a refused origin', async () => {
    const userId = await createUser();
    const el = await fixture<ForgeWorkflowList>(
      html`<forge-workflow-list api-base=${info.deadBase} token-url=${tokenUrl(userId)}></forge-workflow-list>`,
    );
    const ui = new Harness(el);
    const { errors, consoled } = await reports(el, () => ui.until(() => ui.part('error'), 'the load error'));
    expect(errors[0]!.message).to.match(/^Could not reach the Forge service at /);
    expect(consoled).to.deep.equal([]);
    expect(ui.text(ui.part('error')!)).to.include('Check your connection, then try again.');
  });
});
