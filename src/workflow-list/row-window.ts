import type { ReactiveController, ReactiveControllerHost } from 'lit';

/** A run of consecutive rows of a long list: rendered, or stood in for by a spacer of its height. */
export interface RowBlock {
  from: number;
  to: number;
  /** Pixels, for a block that is not rendered; undefined for one that is. */
  spacer?: number;
}

/** Lists up to this many rows render whole: cheaper than a frame, and the page's find-in-page sees every row. */
const WINDOW_FROM = 100;
/**
 * Rows per block. Blocks keep their place in the template whether rendered or not, so a rendered
 * row's DOM stays its own while the user scrolls (Lit reuses DOM by position): the row holding
 * focus is never recycled to show another one.
 */
const BLOCK_ROWS = 25;
/** Rendered beyond each edge of the viewport, in pixels: a fast fling does not outrun it. */
const OVERSCAN_PX = 600;
/** A row's height before any was measured (a row with a description, roughly). */
const FIRST_GUESS_PX = 64;

/**
 * Windowing for `<forge-workflow-list>`: of a long list, only the blocks of rows in or near the
 * viewport are in the DOM, plus the block of the row holding focus, so keyboard users never
 * lose their place; every other block is one spacer as tall as its rows (as measured, or the
 * average measured height for rows never rendered). Rows may differ in height (descriptions,
 * errors): the rendered ones are measured after every update. The page, or any scrolling
 * ancestor (scroll events are caught on their way down), scrolls; the list has no scroll box.
 */
export class RowWindow implements ReactiveController {
  readonly #host: ReactiveControllerHost;
  readonly #list: () => HTMLElement | null | undefined;
  /** Measured heights by row key, so they follow a row the filter moves. */
  readonly #heights = new Map<string, number>();
  #keys: readonly string[] = [];
  /** Which blocks the last render showed, as a string to compare. */
  #shown = '';
  #focusedKey: string | undefined;
  #frame = 0;

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

  /** The row whose controls hold focus: its block stays rendered wherever the user scrolls. */
  set focusedKey(key: string | undefined) {
    this.#focusedKey = key;
  }

  /** Whether a list of `count` rows is windowed (and so needs `aria-setsize` and `aria-posinset`). */
  windows(count: number): boolean {
    return count > WINDOW_FROM;
  }

  /** The blocks of the rows with these keys, in order, each rendered or a spacer. */
  blocks(keys: readonly string[]): RowBlock[] {
    this.#keys = keys;
    if (!this.windows(keys.length)) return [{ from: 0, to: keys.length }];
    const shown = this.#shownBlocks();
    this.#shown = [...shown].join();
    const blocks: RowBlock[] = [];
    const guess = this.#guess();
    for (let from = 0; from < keys.length; from += BLOCK_ROWS) {
      const to = Math.min(from + BLOCK_ROWS, keys.length);
      blocks.push(shown.has(from) ? { from, to } : { from, to, spacer: this.#heightOf(from, to, guess) });
    }
    return blocks;
  }

  hostUpdated(): void {
    if (!this.windows(this.#keys.length)) return;
    for (const row of this.#list()?.querySelectorAll<HTMLElement>(':scope > [data-key]') ?? []) {
      this.#heights.set(row.dataset.key!, row.offsetHeight);
    }
    // Measured rows may differ from the guess: render again if the viewport now needs other rows.
    this.#onScroll();
  }

  readonly #onScroll = () => {
    // A short list renders whole; scrolling changes nothing in it.
    if (!this.windows(this.#keys.length)) return;
    this.#frame ||= requestAnimationFrame(() => {
      this.#frame = 0;
      if ([...this.#shownBlocks()].join() !== this.#shown) this.#host.requestUpdate();
    });
  };

  #guess(): number {
    let sum = 0;
    for (const height of this.#heights.values()) sum += height;
    return this.#heights.size ? sum / this.#heights.size : FIRST_GUESS_PX;
  }

  #heightOf(from: number, to: number, guess: number): number {
    let height = 0;
    for (let row = from; row < to; row++) height += this.#heights.get(this.#keys[row]!) ?? guess;
    return height;
  }

  /** The first rows of the blocks that meet the viewport and its overscan, and of the focused row's block. */
  #shownBlocks(): Set<number> {
    const keys = this.#keys;
    const top = this.#list()?.getBoundingClientRect().top ?? 0;
    const from = -top - OVERSCAN_PX;
    const to = innerHeight - top + OVERSCAN_PX;
    const guess = this.#guess();
    const shown = new Set<number>();
    const focused = this.#focusedKey === undefined ? -1 : keys.indexOf(this.#focusedKey);
    if (focused >= 0) shown.add(focused - (focused % BLOCK_ROWS));
    let y = 0;
    for (let start = 0; start < keys.length && y < to; start += BLOCK_ROWS) {
      const height = this.#heightOf(start, Math.min(start + BLOCK_ROWS, keys.length), guess);
      if (y + height > from) shown.add(start);
      y += height;
    }
    return shown;
  }
}
