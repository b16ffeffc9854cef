import { expect } from '@open-wc/testing';
import { eventually, plainPageList } from './support.js';

// The CDN bundle on a page that is never idle (this page's requestIdleCallback never calls back),
// so only the user's intent can bring the modal's chunk.
const BUNDLE = '/dist/cdn/forge-embed.min.js';

describe('the CDN bundle fetches the modal on intent', () => {
  before(async () => {
    window.requestIdleCallback = () => 0;
    await import(/* @vite-ignore */ BUNDLE);
  });

  it('not while the list only shows, and as soon as a pointer comes to a row', async () => {
    const { list, container } = await plainPageList();
    const chunkRequests = () =>
      performance.getEntriesByType('resource').filter(({ name }) => /\/dist\/cdn\/(?!forge-embed)/.test(name));
    expect(customElements.get('forge-config-modal')).to.equal(undefined);
    expect(chunkRequests()).to.have.length(0);

    const button = list.shadowRoot!.querySelector<HTMLButtonElement>('[part~="configure-button"]')!;
    button.dispatchEvent(new PointerEvent('pointerover', { bubbles: true, composed: true }));
    await customElements.whenDefined('forge-config-modal');
    expect(chunkRequests()).to.have.length(1);
    // The click then opens it without waiting for anything more than the service.
    button.click();
    await eventually(
      () => list.shadowRoot!.querySelector('forge-config-modal')?.shadowRoot?.querySelector('dialog[open]'),
      'the modal never opened',
    );
    container.remove();
  });
});
