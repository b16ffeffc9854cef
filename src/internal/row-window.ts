import { html, type ReactiveController, type ReactiveControllerHost } from 'lit';

/** Lists up to this many rows render whole: cheaper than a frame, and the page's find-in-page sees every row. */
const WINDOW_FROM = 100;
/**
 * Rows per block (rounded up to whole lines of a grid). Blocks keep their place in the template
 * whether rendered or not, so a rendered row's DOM stays its own while the user scrolls (Lit
 * reuses DOM by position): the row holding focus is never recycled to show another one. Sixteen
 * fill a viewport of 800 px (sixteen list rows of 64 px, four lines of four cards), so the first
 * render, which has no overscan, is one block.
 */
const BLOCK_ROWS = 16;
/**
 * Rendered beyond each edge of the viewport, in pixels, once rows were measured: a fast fling
 * does not outrun it. The first render shows the viewport's rows alone (what the user waits for),
 * and the frame after it, which measures them, adds the rows beyond.
 */
const OVERSCAN_PX = 600;
/** A row's height before any was measured (a row with a description, roughly). */
const FIRST_GUESS_PX = 64;

/**
 * Windowing for `<forge-workflow-list>`'s rows and `<forge-integration-list>`'s cards: of a long
 * list, only the blocks of rows in or near the viewport are in the DOM, plus the block of the row
 * holding focus, so keyboard users never lose their place; every other block is one spacer as
 * tall as its rows (as measured, or the average measured height for rows never rendered). Rows
 * may differ in height (descriptions, errors): the rendered ones are measured after every update.
 * A list laid out as a CSS grid has lines of as many rows as it has columns: a block is whole
 * lines (so a block after a spacer starts its line where it would anyway), and the grid's row gap
 * counts. The page, or any scrolling ancestor (scroll events are caught on their way down),
 * scrolls; the list has no scroll box.
 */
export class RowWindow implements ReactiveController {
  readonly #host: ReactiveControllerHost;
  readonly #list: () => HTMLElement | null | undefined;
  /** Measured heights by row key, so they follow a row the filter moves. */
  readonly #heights = new Map<string, number>();
  #keys: readonly string[] = [];
  /**
   * Which blocks the last render showed, how many rows a line had and the height it gave a row
   * never measured (to the pixel), as a string to compare.
   */
  #shown = '';
  /** The blocks the last render showed. */
  #rendered = new Set<number>();
  #focusedKey: string | undefined;
  #frame = 0;
  /** Rows side by side (a grid's columns, else 1), rows per block, and the gap between lines, as last laid out. */
  #perLine = 1;
  #blockRows = BLOCK_ROWS;
  #gap = 0;

  constructor(host: ReactiveControllerHost, list: () => HTMLElement | null | undefined) {
    this.#host = host;
    this.#list = list;
    host.addController(this);
  }

  hostConnected(): void {
    addEventListener('scroll', this.#onScroll, { capture: true, passive: true });
    addEventListener('resize', this.#onScroll, { passive: true });
  }

  hostDisconnected(): void {
    removeEventListener('scroll', this.#onScroll, { capture: true });
    removeEventListener('resize', this.#onScroll);
    cancelAnimationFrame(this.#frame);
    this.#frame = 0;
  }

  /** The row whose controls hold focus keeps its block rendered wherever the user scrolls. */
  readonly #focusIn = ({ target }: Event): void => {
    this.#focusedKey = (target as Element).closest<HTMLElement>('[data-key]')?.dataset.key;
  };

  /** It stays while focus is elsewhere in the element (its modal, its dialog), where focus comes back from. */
  readonly #focusOut = ({ currentTarget, relatedTarget }: FocusEvent): void => {
    if (!(relatedTarget instanceof Node && (currentTarget as Node).getRootNode().contains(relatedTarget))) {
      this.#focusedKey = undefined;
    }
  };

  /**
   * The rows with these keys, each made by `row` from its index: all of them, or for a long list
   * (then with `total`, the number of rows, for `aria-setsize`) the blocks near the viewport and
   * one spacer for each block left out.
   */
  render(keys: readonly string[], row: (index: number, total?: number) => unknown): unknown[] {
    this.#keys = keys;
    const total = keys.length;
    if (total <= WINDOW_FROM) return keys.map((_, i) => row(i));
    const shown = (this.#rendered = this.#shownBlocks());
    const guess = this.#guess();
    this.#shown = this.#stateOf(shown, guess);
    const blocks: unknown[] = [];
    for (let from = 0; from < total; from += this.#blockRows) {
      const to = Math.min(from + this.#blockRows, total);
      blocks.push(
        shown.has(from)
          ? keys.slice(from, to).map((_, i) => row(from + i, total))
          : // One line across every column of a grid (the gaps beside it are the block's outer
            // gaps); set through CSSOM, not a style attribute, which a CSP may forbid.
            html`<li class="gap" aria-hidden="true" .style=${`grid-column:1/-1;height:${this.#heightOf(from, to, guess) - this.#gap}px`}></li>`,
      );
    }
    return blocks;
  }

  hostUpdated(): void {
    if (this.#keys.length <= WINDOW_FROM) return;
    const first = this.#heights.size === 0;
    const list = this.#list();
    // Once per list element: adding the same listener again does nothing.
    list?.addEventListener('focusin', this.#focusIn);
    list?.addEventListener('focusout', this.#focusOut);
    for (const row of list?.querySelectorAll<HTMLElement>(':scope > [data-key]') ?? []) {
      this.#heights.set(row.dataset.key!, row.offsetHeight);
    }
    // Measured rows may differ from the guess: render again if the viewport now needs other rows.
    // After the first render, when its rows fill the viewport, the rows beyond it (the overscan)
    // come in the frame after the one that first shows the list: drawn before it (an animation
    // frame callback runs before the paint), they held the user's first sight of the list back by
    // as long again as the rows in view took (issue 25).
    // (A grid whose columns cut its blocks elsewhere than the first render did is drawn again now.)
    const blockRows = this.#blockRows;
    const inView =
      first && [...this.#shownBlocks(0)].every((block) => this.#rendered.has(block)) && this.#blockRows === blockRows;
    if (inView) this.#frame ||= requestAnimationFrame(() => (this.#frame = requestAnimationFrame(this.#check)));
    else this.#onScroll();
  }

  readonly #onScroll = () => {
    // A short list renders whole; scrolling changes nothing in it.
    if (this.#keys.length <= WINDOW_FROM) return;
    this.#frame ||= requestAnimationFrame(this.#check);
  };

  readonly #check = () => {
    this.#frame = 0;
    // A grid resized to more or fewer columns cuts its blocks elsewhere (and the first render
    // of a grid, before it was laid out, counted one row a line): #shownBlocks reads the columns.
    // Rows measured taller or shorter than the first render guessed make the spacers wrong, and
    // with them the page's height and where a scroll lands: they are drawn again.
    if (this.#stateOf(this.#shownBlocks()) !== this.#shown) this.#host.requestUpdate();
  };

  /** What a render of these blocks draws, as `#shown` keeps it: the columns, the blocks, the guessed height. */
  #stateOf(shown: Set<number>, guess = this.#guess()): string {
    return `${this.#perLine}:${[...shown]}:${Math.round(guess)}`;
  }

  #guess(): number {
    let sum = 0;
    for (const height of this.#heights.values()) sum += height;
    return this.#heights.size ? sum / this.#heights.size : FIRST_GUESS_PX;
  }

  /**
   * The height of rows `from` to `to`, each line with the gap below it. A grid stretches the rows
   * of a line to the tallest, so a line is as tall as its first row.
   */
  #heightOf(from: number, to: number, guess: number): number {
    let height = 0;
    for (let line = from; line < to; line += this.#perLine) {
      height += (this.#heights.get(this.#keys[line]!) ?? guess) + this.#gap;
    }
    return height;
  }

  /** The first rows of the blocks that meet the viewport and its overscan, and of the focused row's block. */
  #shownBlocks(overscan: number = this.#heights.size && OVERSCAN_PX): Set<number> {
    const keys = this.#keys;
    const list = this.#list();
    const style = list && getComputedStyle(list);
    // A grid's resolved columns are its tracks, one length each; a list's are "none", one line of one row.
    this.#perLine = style?.gridTemplateColumns.split(' ').length || 1;
    this.#gap = Number.parseFloat(style?.rowGap ?? '') || 0;
    const size = (this.#blockRows = Math.ceil(BLOCK_ROWS / this.#perLine) * this.#perLine);
    const top = list?.getBoundingClientRect().top ?? 0;
    const from = -top - overscan;
    const to = innerHeight - top + overscan;
    const guess = this.#guess();
    const shown = new Set<number>();
    const focused = this.#focusedKey === undefined ? -1 : keys.indexOf(this.#focusedKey);
    if (focused >= 0) shown.add(focused - (focused % size));
    let y = 0;
    for (let start = 0; start < keys.length && y < to; start += size) {
      const height = this.#heightOf(start, Math.min(start + size, keys.length), guess);
      if (y + height > from) shown.add(start);
      y += height;
    }
    return shown;
  }
}
