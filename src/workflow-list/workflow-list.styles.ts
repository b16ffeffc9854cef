import { css } from 'lit';

/** `<forge-workflow-list>`'s own styles, over the shared `themeStyles`. */
export const workflowListStyles = css`
  :host {
    display: block;
    /* Rows rearrange by the element's own width, not the viewport's: a sidebar is narrow too. */
    container-type: inline-size;
  }
  .base {
    display: grid;
    gap: calc(var(--_space) * 0.75);
  }
  .list,
  .skeleton,
  .message {
    margin: 0;
    padding: 0;
    list-style: none;
    border: 1px solid var(--_border);
    border-radius: var(--_radius);
    background: var(--_surface);
  }
  .list[aria-busy='true'] {
    opacity: 0.6;
  }
  .row {
    display: grid;
    grid-template-columns: auto minmax(0, 1fr) auto;
    align-items: center;
    gap: 0.75rem 1rem;
    padding: calc(var(--_space) * 0.875) var(--_space);
    /* Off-screen rows skip layout and paint until they come near the viewport. Their estimated
       height is the content box (padding comes on top), between a row with a one-line name and
       one with a description, so the page height and the scrollbar move little as rows are
       laid out; \`auto\` keeps each row's real height once it has been shown. */
    content-visibility: auto;
    contain-intrinsic-size: auto 3.25rem;
  }
  /* Not the first row: a long list renders only the rows near the viewport, after a spacer. */
  .row:not(:first-child) {
    border-top: 1px solid var(--_border);
  }
  /* Narrow: icons, text and actions stack, so the name gets the whole width. */
  @container (width < 34rem) {
    .row {
      grid-template-columns: minmax(0, 1fr);
      justify-items: start;
      gap: 0.625rem;
    }
    .text {
      justify-self: stretch;
    }
  }
  .icons,
  .actions {
    display: flex;
    align-items: center;
    gap: 0.25rem;
  }
  .icons {
    /* Two icons wide, so the names line up down the list. */
    min-width: 3.75rem;
  }
  .letter {
    display: grid;
    place-items: center;
    background: var(--_raised);
    border: 1px solid var(--_border);
    font-weight: 600;
  }
  .text {
    display: grid;
    gap: 0.125rem;
  }
  .name,
  .title {
    font-weight: 600;
    overflow-wrap: anywhere;
  }
  .small {
    font-size: 0.875em;
  }
  .actions {
    gap: 0.875rem;
  }
  .actions .button {
    /* Enable and Configure the same width, so the buttons form one column. */
    min-width: 7.25rem;
  }

  /* A run's health: an icon and words, so a failure never shows by colour alone. */
  .health {
    display: flex;
    align-items: baseline;
    gap: 0.375rem;
  }
  .glyph {
    flex: none;
    display: inline-grid;
    place-items: center;
    width: 1.125rem;
    height: 1.125rem;
    border-radius: 50%;
    font-size: 0.75rem;
    font-weight: 700;
    line-height: 1;
    color: var(--_surface);
    background: var(--_muted);
    translate: 0 0.125rem;
  }
  .ok .glyph {
    background: var(--_success);
  }
  .failed .glyph {
    background: var(--_danger);
  }
  .health.failed {
    color: var(--_danger);
  }
  .health-actions {
    display: flex;
    flex-wrap: wrap;
    gap: 0.5rem;
    margin-top: 0.375rem;
  }
  /* A text-like button lines up with the text above it. */
  .health-actions .quiet:first-child {
    margin-inline-start: -0.5rem;
  }
  .health-actions .button {
    min-height: 2rem;
    padding-block: 0.25rem;
  }
  .quiet {
    padding-inline: 0.5rem;
    border-color: transparent;
    background: transparent;
    color: var(--_accent);
  }
  .quiet[aria-expanded='true'] {
    background: var(--_raised);
  }
  time {
    position: relative;
    border-radius: 0.25rem;
  }
  /* The exact time, for keyboard users: the title shows on hover only. */
  time:focus-visible::after {
    content: attr(title);
    position: absolute;
    z-index: 1;
    inset: calc(100% + 0.25rem) auto auto 0;
    padding: 0.25rem 0.5rem;
    white-space: nowrap;
    border-radius: 0.375rem;
    color: var(--_surface);
    background: var(--_text);
  }

  .message {
    display: grid;
    justify-items: center;
    gap: 0.5rem;
    padding: calc(var(--_space) * 2) var(--_space);
    border-style: dashed;
    text-align: center;
  }
  [part='error'] {
    border-style: solid;
  }
  .message [role='alert'] {
    display: grid;
    gap: 0.25rem;
  }
  .message .button {
    margin-top: 0.5rem;
  }
  .title:focus-visible {
    box-shadow: none;
  }

  .bone {
    border-radius: 0.375rem;
    background: color-mix(in srgb, var(--_text) 12%, var(--_surface));
    animation: pulse 1.4s ease-in-out infinite;
  }
  .tile {
    width: 3rem;
    height: 1.75rem;
  }
  .line {
    width: 55%;
    height: 0.875rem;
  }
  .short {
    width: 85%;
    height: 0.75rem;
  }
  .pill {
    width: 6rem;
    height: 2.5rem;
  }
  @keyframes pulse {
    50% {
      opacity: 0.45;
    }
  }
`;
