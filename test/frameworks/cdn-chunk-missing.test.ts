import { expect } from '@open-wc/testing';
import type { ForgeEventDetails } from '../../src/events.js';
import { eventually, plainPageList } from './support.js';

// The CDN bundle on a page whose modal chunk cannot load (a flaky network, a CDN that lost a
// file): the test server answers the entry file and a 404 for everything beside it.
const BUNDLE = '/cdn-without-chunks/forge-embed.min.js';

describe('the CDN bundle when the modal chunk cannot load', () => {
  before(async () => {
    await import(/* @vite-ignore */ BUNDLE);
  });

  it('says so in the row and in forge-error instead of a button that does nothing', async () => {
    const { list, container } = await plainPageList();
    const errors: ForgeEventDetails['forge-error'][] = [];
    list.addEventListener('forge-error', (event) => errors.push(event.detail));

    list.shadowRoot!.querySelector<HTMLButtonElement>('[part~="configure-button"]')!.click();

    const rowError = await eventually(
      () => list.shadowRoot!.querySelector('[part="row-error"]'),
      'the row never said why the settings did not open',
    );
    expect(rowError.textContent).to.contain('could not be opened');
    expect(rowError.getAttribute('role')).to.equal('alert');
    expect(errors.map(({ code }) => code)).to.deep.equal(['load-failed']);
    expect(customElements.get('forge-config-modal')).to.equal(undefined);
    expect(list.shadowRoot!.querySelector('forge-config-modal')).to.equal(null);
    container.remove();
  });
});
