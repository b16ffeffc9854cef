import { expect } from '@open-wc/testing';
import { waitUntil } from '../support/wait.js';
import { plainPageList, switchIn, type ToggleDetail } from './support.js';

// The CDN bundle as a plain page loads it: one <script type="module">, attributes only, DOM events.
const BUNDLE = '/dist/cdn/forge-embed.min.js';

describe('the CDN bundle in a plain page', () => {
  before(async () => {
    await import(/* @vite-ignore */ BUNDLE);
  });

  it('registers both elements: the list at once, the modal from its own file soon after', async () => {
    expect(customElements.get('forge-workflow-list')).to.be.a('function');
    // The page holds no modal, so its chunk comes when the browser is idle.
    await customElements.whenDefined('forge-config-modal');
    const scripts = performance
      .getEntriesByType('resource')
      .map(({ name }) => new URL(name).pathname)
      .filter((path) => path.startsWith('/dist/cdn/'));
    expect(scripts).to.include(BUNDLE);
    expect(scripts.filter((path) => path !== BUNDLE)).to.have.length.greaterThan(0);
  });

  it('configures the list from attributes and fires forge-toggle as a DOM event', async () => {
    const { list, container, workflowId } = await plainPageList();
    const toggles: ToggleDetail[] = [];
    document.addEventListener('forge-toggle', (event) => toggles.push(event.detail));

    const control = await switchIn(list);
    expect(control.checked).to.equal(true);
    control.click();
    await waitUntil(() => toggles.length === 1, 'forge-toggle never reached the document');
    expect(toggles[0]).to.deep.equal({ workflowId, active: false });
    container.remove();
  });
});
