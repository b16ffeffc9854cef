import { expect, fixture, html } from '@open-wc/testing';
import { sendKeys } from '@web/test-runner-commands';
import '../src/workflow-list/define.js';
import type { ForgeWorkflowList } from '../src/workflow-list/workflow-list.js';
import { allByPart, byPart, byRole } from './support/harness.js';
import { longCatalog, nextFrame, placeOf } from './support/long-catalog.js';
import { waitUntil } from './support/wait.js';

const rowsOf = (list: ForgeWorkflowList) => allByPart(list.shadowRoot!, 'row');

let total: number;

async function longList(): Promise<ForgeWorkflowList> {
  const { apiBase, tokenProvider, rows } = await longCatalog();
  total = rows;
  const list = await fixture<ForgeWorkflowList>(
    html`<forge-workflow-list api-base=${apiBase} .tokenProvider=${tokenProvider}></forge-workflow-list>`,
  );
  await waitUntil(() => rowsOf(list).length > 0, 'the long list never showed its rows');
  // The rows beyond the viewport come in the frame after the first that shows the rows in it,
  // and the spacers take the measured heights the frame after: what a user scrolls is that.
  await nextFrame();
  await nextFrame();
  return list;
}

describe('<forge-workflow-list> with hundreds of workflows', () => {
  afterEach(() => window.scrollTo(0, 0));

  it('renders the rows near the viewport, each telling its place in the whole list', async () => {
    const list = await longList();
    const rows = rowsOf(list);
    expect(rows.length).to.be.lessThan(total);
    expect(rows[0]!.getAttribute('aria-setsize')).to.equal(String(total));
    expect(rows.map(placeOf)).to.deep.equal(rows.map((_, i) => i + 1));
    // The page is as tall as the whole list: the rows left out are stood in for.
    expect(byPart(list.shadowRoot!, 'list')!.getBoundingClientRect().height).to.be.greaterThan(total * 40);
    await expect(list).to.be.accessible();
  });

  it('shows the last workflow once the page is scrolled to the end', async () => {
    const list = await longList();
    await waitUntil(() => {
      window.scrollTo(0, document.documentElement.scrollHeight);
      return rowsOf(list).some((row) => placeOf(row) === total);
    }, 'the last workflow never showed');
    const last = rowsOf(list).find((row) => placeOf(row) === total)!;
    expect(last.textContent).to.contain(`Long list workflow ${total}`);
  });

  it('filters across all its workflows, not only the rows rendered', async () => {
    const list = await longList();
    const filter = byPart(list.shadowRoot!, 'filter') as HTMLInputElement;
    filter.value = `workflow ${total}`;
    filter.dispatchEvent(new Event('input'));
    await waitUntil(() => rowsOf(list).length === 1, 'the filter never narrowed the list to one row');
    expect(rowsOf(list)[0]!.textContent).to.contain(`Long list workflow ${total}`);
    // Short again, the list renders whole and needs no place numbers.
    expect(rowsOf(list)[0]!.hasAttribute('aria-setsize')).to.equal(false);
  });

  it('keeps the focused row where it is while the page scrolls away, and Tab walks on past the rendered rows', async () => {
    const list = await longList();
    const first = byRole(rowsOf(list)[0]!, 'button')!;
    first.focus();
    window.scrollTo(0, document.documentElement.scrollHeight / 2);
    // The rows around the middle come, those between the first ones and them go.
    await waitUntil(
      () => rowsOf(list).some((row) => placeOf(row) === total / 2) && !rowsOf(list).some((row) => placeOf(row) === 40),
      'the rows never followed the scroll',
    );
    // Still the same button, still in the first row, still focused.
    expect(first.isConnected).to.equal(true);
    expect(list.shadowRoot!.activeElement).to.equal(first);
    expect(first.textContent).to.contain('Long list workflow 1');

    window.scrollTo(0, 0);
    await nextFrame();
    const lastShown = rowsOf(list).at(-1)!;
    const place = placeOf(lastShown);
    expect(place).to.be.lessThan(total);
    byRole(lastShown, 'button')!.focus();
    await nextFrame();
    await sendKeys({ press: 'Tab' });
    const focused = list.shadowRoot!.activeElement!;
    expect(placeOf(focused.closest('[part~="row"]')!)).to.equal(place + 1);
  });
});
