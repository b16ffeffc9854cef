import { css } from 'lit';

/**
 * `<forge-integration-list>`'s own styles, over the shared `themeStyles` and the workflow list's
 * (its messages, skeleton bones and state glyphs look the same in both; the CDN entry has them).
 */
export const integrationListStyles = css`
  .tools {
    display: flex;
    flex-wrap: wrap;
    gap: 0.5rem;
  }
  .tools [part='search'] {
    flex: 1 1 14rem;
    width: auto;
  }
  .tools select {
    flex: 0 1 12rem;
    padding: 0.5rem 0.75rem;
  }
  .grid {
    display: grid;
    grid-template-columns: repeat(auto-fill, minmax(min(100%, var(--forge-app-min-width, 16rem)), 1fr));
    gap: calc(var(--_space) * 0.75);
    margin: 0;
    padding: 0;
    list-style: none;
  }
  .grid[aria-busy='true'] {
    opacity: 0.6;
  }
  .app {
    display: flex;
    flex-direction: column;
    gap: 0.5rem;
    min-width: 0;
    padding: var(--_space);
    border: 1px solid var(--_border);
    border-radius: var(--_radius);
    background: var(--_surface);
  }
  .app-head {
    display: flex;
    align-items: center;
    gap: 0.75rem;
  }
  .app .icon {
    width: 2.5rem;
    height: 2.5rem;
    padding: 0.25rem;
    border-radius: 0.5rem;
  }
  .app .letter {
    display: grid;
    place-items: center;
    font-size: 1.125rem;
  }
  .description {
    /* One line, as the catalog means it; the whole of it on hover is the host's to add. */
    overflow: hidden;
    text-overflow: ellipsis;
    white-space: nowrap;
  }
  /*
   * The account's two buttons side by side, "Workflows (n on)" on a line of its own below them:
   * the same at every width (a wrapping row put each button on a line of its own in a narrow card,
   * and mixed one-line and two-line cards in a row of the grid).
   */
  .app-actions {
    display: grid;
    grid-template-columns: repeat(2, minmax(0, max-content));
    justify-items: start;
    gap: 0.5rem;
    margin-top: auto;
    padding-top: 0.25rem;
  }
  .app-actions .button {
    min-height: 2.25rem;
    padding-inline: 0.75rem;
    /* Only a card narrower than its two buttons wraps their words. */
    white-space: normal;
  }
  [part~='workflows-button'] {
    grid-column: 1 / -1;
  }
  .parameters {
    display: grid;
    gap: 0.625rem;
  }
  .field {
    display: grid;
    gap: 0.25rem;
  }
`;
