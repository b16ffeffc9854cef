import { expect, fixture, html } from '@open-wc/testing';
import { sendKeys } from '@web/test-runner-commands';
import '../src/integration-list/define.js';
import type { ForgeIntegrationList } from '../src/integration-list/integration-list.js';
import { allByPart, byPart } from './support/harness.js';
import { longCatalog, nextFrame, placeOf } from './support/long-catalog.js';
import { waitUntil } from './support/wait.js';

const cardsOf = (grid: ForgeIntegrationList) => allByPart(grid.shadowRoot!, 'app');
const nameOf = (card: Element) => byPart(card, 'name')!.textContent!;

let total: number;

async function longGrid(): Promise<ForgeIntegrationList> {
  const { apiBase, tokenProvider, apps } = await longCatalog();
  total = apps;
  const grid = await fixture<ForgeIntegrationList>(
    html`<forge-integration-list api-base=${apiBase} .tokenProvider=${tokenProvider}></forge-integration-list>`,
  );
  await waitUntil(() => cardsOf(grid).length > 0, 'the long grid never showed its cards');
  // The rows beyond the viewport come in the frame after the first that shows the rows in it,
  // and the spacers take the measured heights the frame after: what a user scrolls is that.
  await nextFrame();
  await nextFrame();
  return grid;
}

/** The app names in their catalog order: the first workflow's two apps, then the numbered ones. */
const expectedNames = () => ['Stripe', 'Slack', ...Array.from({ length: total - 2 }, (_, n) => `Long app ${n + 1}`)];

describe('<forge-integration-list> with over a hundred apps', () => {
  afterEach(() => window.scrollTo(0, 0));

  it('renders the cards near the viewport, each telling its place among all the apps', async () => {
    const grid = await longGrid();
    // Rendered before the grid was laid out, the first cards are cut to whole lines of its columns
    // in the next frame, without waiting for a scroll.
    const columns = getComputedStyle(byPart(grid.shadowRoot!, 'grid')!).gridTemplateColumns.split(' ').length;
    expect(columns).to.be.greaterThan(1);
    await waitUntil(() => cardsOf(grid).length % columns === 0, 'the cards never made whole lines');
    const cards = cardsOf(grid);
    expect(cards.length).to.be.lessThan(total);
    expect(cards[0]!.getAttribute('aria-setsize')).to.equal(String(total));
    expect(cards.map(placeOf)).to.deep.equal(cards.map((_, i) => i + 1));
    expect(cards.map(nameOf)).to.deep.equal(expectedNames().slice(0, cards.length));
    // The page is as tall as the whole grid: the cards left out are stood in for.
    const lines = Math.ceil(total / columns);
    expect(byPart(grid.shadowRoot!, 'grid')!.getBoundingClientRect().height).to.be.greaterThan(lines * 100);
    await expect(grid).to.be.accessible();
  });

  it('shows every app on screen, in order and in its column, as the page scrolls to the end', async () => {
    const grid = await longGrid();
    const seen = new Map<number, string>();
    const step = Math.round(innerHeight / 2);
    for (let y = 0; ; y += step) {
      window.scrollTo(0, y);
      await nextFrame();
      await nextFrame();
      // The cards on screen now are rendered, in place, and numbered in a run with no gap.
      const onScreen = cardsOf(grid).filter((card) => {
        const { top, bottom } = card.getBoundingClientRect();
        return bottom > 0 && top < innerHeight;
      });
      const places = onScreen.map(placeOf);
      expect(places, `at ${y} px`).to.deep.equal(places.map((_, i) => places[0]! + i));
      for (const card of onScreen) seen.set(placeOf(card), nameOf(card));
      if (window.scrollY + innerHeight >= document.documentElement.scrollHeight - 1 || y > 100_000) break;
    }
    expect([...seen.keys()].sort((a, b) => a - b)).to.deep.equal(expectedNames().map((_, i) => i + 1));
    expect([...seen.entries()].sort(([a], [b]) => a - b).map(([, name]) => name)).to.deep.equal(expectedNames());
  });

  it('lets Tab walk from each card to the next past the cards rendered, to the last app', async () => {
    const grid = await longGrid();
    const root = grid.shadowRoot!;
    let place = 0;
    for (let walks = 0; place < total && walks < total; walks++) {
      // From the last card rendered below the focus, Tab reaches the card after it.
      await nextFrame();
      const last = cardsOf(grid).at(-1)!;
      place = placeOf(last);
      if (place === total) break;
      const buttons = [...last.querySelectorAll<HTMLButtonElement>('button')];
      buttons.at(-1)!.focus();
      await nextFrame();
      await sendKeys({ press: 'Tab' });
      const card = root.activeElement?.closest('[part~="app"]');
      expect(card && placeOf(card), `Tab from app ${place}`).to.equal(place + 1);
      expect(nameOf(card!)).to.equal(expectedNames()[place]);
    }
    expect(place).to.equal(total);
  });

  it('keeps the focused card while the page scrolls away', async () => {
    const grid = await longGrid();
    const first = cardsOf(grid)[0]!.querySelector('button')!;
    first.focus();
    // Cards never rendered count at an estimated height until they are, so the end moves while it comes.
    await waitUntil(() => {
      window.scrollTo(0, document.documentElement.scrollHeight);
      return cardsOf(grid).some((card) => placeOf(card) === total);
    }, 'the last cards never came');
    expect(first.isConnected).to.equal(true);
    expect(grid.shadowRoot!.activeElement).to.equal(first);
    expect(nameOf(first.closest('[part~="app"]')!)).to.equal('Stripe');
  });

  it('searches all its apps, not only the cards rendered', async () => {
    const grid = await longGrid();
    const search = byPart(grid.shadowRoot!, 'search') as HTMLInputElement;
    search.value = `long app ${total - 2}`;
    search.dispatchEvent(new Event('input'));
    await waitUntil(() => cardsOf(grid).length === 1, 'the search never narrowed the grid to one app');
    expect(nameOf(cardsOf(grid)[0]!)).to.equal(`Long app ${total - 2}`);
    // Short again, the grid renders whole and needs no place numbers.
    expect(cardsOf(grid)[0]!.hasAttribute('aria-setsize')).to.equal(false);
  });
});
