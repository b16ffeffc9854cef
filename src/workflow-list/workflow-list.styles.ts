import { css } from 'lit';

export const workflowListStyles = css`
  :host {
    display: block;
    /* Rows rearrange by the element's own width, not the viewport's: a sidebar is narrow too. */
    container-type: inline-size;
    --_row-padding: calc(var(--_space) * 0.875) var(--_space);
    /* The off track must reach 3:1 against the surface (WCAG 1.4.11); the border color does not. */
    --_switch-off: color-mix(in srgb, var(--_text-muted) 80%, var(--_surface));
  }
  .base {
    display: grid;
    gap: calc(var(--_space) * 0.75);
  }
  p {
    margin: 0;
  }
  .muted {
    color: var(--_text-muted);
  }

  .filter {
    width: 100%;
    min-height: 2.5rem;
    padding: 0 0.875rem;
    border: 1px solid var(--_border);
    border-radius: calc(var(--_radius) * 0.8);
    background: var(--_surface);
    color: var(--_text);
    font: inherit;
  }
  .filter:focus-visible {
    border-color: var(--_accent);
  }
  .filter::placeholder {
    color: var(--_text-muted);
    opacity: 1;
  }

  .list,
  .skeleton {
    margin: 0;
    padding: 0;
    list-style: none;
    border: 1px solid var(--_border);
    border-radius: var(--_radius);
    background: var(--_surface);
  }
  .list:focus-visible {
    outline: none;
    box-shadow: var(--_focus);
  }
  .list[aria-busy='true'] {
    opacity: 0.6;
  }
  .row {
    display: grid;
    grid-template-columns: auto minmax(0, 1fr) auto;
    align-items: center;
    gap: 0.75rem 1rem;
    padding: var(--_row-padding);
    /* Off-screen rows skip layout and paint, which keeps a thousand of them smooth to scroll. */
    content-visibility: auto;
    contain-intrinsic-size: auto 4.5rem;
  }
  .row + .row {
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

  .icons {
    display: flex;
    gap: 0.25rem;
    /* Two icons wide, so the names line up down the list. */
    min-width: calc(3.5rem + 0.25rem);
  }
  .letter {
    display: grid;
    place-items: center;
    background: var(--_surface-raised);
    border: 1px solid var(--_border);
    color: var(--_text-muted);
    font-weight: 600;
  }
  .text {
    display: grid;
    gap: 0.125rem;
  }
  .name {
    font-weight: 600;
    overflow-wrap: anywhere;
  }
  .description,
  .text .error-text {
    font-size: 0.875em;
  }
  .description {
    color: var(--_text-muted);
  }
  .actions {
    display: flex;
    align-items: center;
    gap: 0.875rem;
  }
  .actions .button {
    /* Enable and Configure the same width, so the buttons form one column. */
    min-width: 7.25rem;
  }
  .button.enable {
    background: color-mix(in srgb, var(--_accent) 10%, var(--_surface));
    border-color: color-mix(in srgb, var(--_accent) 40%, var(--_surface));
    color: var(--_accent);
  }
  .button.enable:hover {
    background: color-mix(in srgb, var(--_accent) 18%, var(--_surface));
  }

  .switch {
    appearance: none;
    position: relative;
    flex: none;
    width: 2.75rem;
    height: 1.5rem;
    margin: 0;
    border-radius: 999px;
    background: var(--_switch-off);
    cursor: pointer;
    transition: background-color 0.15s;
  }
  .switch::before {
    content: '';
    position: absolute;
    top: 0.1875rem;
    left: 0.1875rem;
    width: 1.125rem;
    height: 1.125rem;
    border-radius: 50%;
    background: var(--_surface);
    box-shadow: 0 1px 2px rgb(0 0 0 / 0.25);
    transition: translate 0.15s;
  }
  .switch:checked {
    background: var(--_accent);
  }
  .switch:checked::before {
    translate: 1.25rem 0;
  }

  .message {
    display: grid;
    justify-items: center;
    gap: 0.5rem;
    padding: calc(var(--_space) * 2) var(--_space);
    border: 1px dashed var(--_border);
    border-radius: var(--_radius);
    background: var(--_surface);
    text-align: center;
  }
  .message [role='alert'] {
    display: grid;
    gap: 0.25rem;
  }
  .message .button {
    margin-top: 0.5rem;
  }
  .message-title {
    font-weight: 600;
  }
  .message-title:focus-visible {
    outline: none;
    box-shadow: none;
  }
  [part~='error'] {
    border-style: solid;
  }

  .bone {
    display: block;
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
  .line.short {
    width: 85%;
    height: 0.75rem;
  }
  .pill {
    width: 6rem;
    height: 2.5rem;
    margin-left: auto;
  }
  @keyframes pulse {
    50% {
      opacity: 0.45;
    }
  }

  @media (prefers-reduced-motion: reduce) {
    .switch,
    .switch::before {
      transition: none;
    }
    .bone {
      animation: none;
    }
  }
  @media (forced-colors: active) {
    .switch {
      border: 1px solid CanvasText;
    }
    .switch::before {
      background: CanvasText;
    }
    .switch:checked {
      background: Highlight;
    }
  }
`;
