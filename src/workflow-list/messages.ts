import { html } from 'lit';
import { type ProblemStrings, plainWords, technicalDetails } from '../internal/problem.js';

/**
 * What the list shows instead of rows: loading, nothing on offer, or a load that failed.
 * `<forge-integration-list>` shows its empty and failed states with these too.
 */

/** The texts of loading, empty and failed, which both lists' strings have. */
export interface MessageStrings extends ProblemStrings {
  /** Accessible name of the list (of workflows, of apps). */
  listLabel: string;
  /** Announced while it loads. */
  loading: string;
  /** Heading when nothing is on offer (for the `integration` filter, if one is set). */
  empty: string;
  emptyHint: string;
  /** Heading when loading failed; the reason follows it. */
  loadFailed: string;
  retry: string;
}

/**
 * Placeholder rows while the first load is under way. A letter in each font the rows use (name,
 * small print, state glyph, button), laid out unseen, makes the browser look up and open those
 * fonts while the reads are out: a page's first text in a font costs milliseconds (a synchronous
 * font lookup in the browser process on Linux), which the first rows would wait for otherwise.
 */
export const loadingView = () =>
  html`<div class="skeleton" part="skeleton" aria-hidden="true">
    <span class="visually-hidden"><u class="name">a</u><u class="small">a</u><u class="glyph">a</u><u class="button">a</u></span>
    ${[0, 1, 2].map(
      () => html`<div class="row">
        <span class="bone tile"></span>
        <span class="text"><span class="bone line"></span><span class="bone line short"></span></span>
        <span class="bone pill"></span>
      </div>`,
    )}
  </div>`;

export const emptyView = (t: MessageStrings) =>
  html`<div class="message" part="empty">
    <p class="title" tabindex="-1" data-landing>${t.empty}</p>
    <p class="muted">${t.emptyHint}</p>
  </div>`;

/** Why loading failed, in plain words, with a retry button that does nothing while a retry is `pending`. */
export const loadErrorView = (t: MessageStrings, error: unknown, pending: boolean, retry: () => void) =>
  html`<div class="message" part="error">
    <div role="alert">
      <p class="title">${t.loadFailed}</p>
      <p class="muted">${plainWords(t, error)}</p>
    </div>
    ${technicalDetails(t, error)}
    <button type="button" class="button" part="retry-button" aria-disabled=${pending} @click=${() => pending || retry()}>
      ${t.retry}
    </button>
  </div>`;
