import { css } from 'lit';

/** `<forge-config-modal>`'s own styles, over the shared `themeStyles`. */
export const configModalStyles = css`
  :host {
    display: contents;
  }

  /* Only the modal has a main button and validated fields: these stay out of the list's entry. */
  .button.primary {
    background: var(--_accent);
    border-color: var(--_accent);
    color: var(--_on-accent);
  }
  .button.primary:hover {
    background: color-mix(in srgb, var(--_accent) 88%, #000);
  }
  .input[aria-invalid='true'] {
    border-color: var(--_danger);
  }

  dialog {
    width: min(var(--forge-modal-width, 34rem), 100vw - 2rem);
    max-width: none;
    max-height: min(100dvh - 2rem, 46rem);
    padding: 0;
    /* On a dark page a shadow barely shows: a lighter edge sets the modal apart there. */
    border: 1px solid light-dark(var(--_border), color-mix(in srgb, var(--_text) 24%, var(--_surface)));
    border-radius: calc(var(--_radius) * 1.5);
    background: var(--_surface);
    color: inherit;
    box-shadow:
      0 1px 2px #0001,
      0 24px 64px -16px #0006;
    overflow: hidden;
  }
  dialog[open] {
    display: flex;
    animation: rise 160ms ease-out;
  }
  dialog::backdrop {
    background: var(--forge-color-backdrop, rgb(15 17 21 / 0.55));
  }
  /* A dark page behind a dark modal: a deeper, blurred backdrop, so the modal is what stands out. */
  :host([theme='dark']) dialog::backdrop {
    background: var(--forge-color-backdrop, rgb(0 0 0 / 0.72));
    backdrop-filter: blur(3px);
  }
  @media (prefers-color-scheme: dark) {
    :host(:not([theme='light'])) dialog::backdrop {
      background: var(--forge-color-backdrop, rgb(0 0 0 / 0.72));
      backdrop-filter: blur(3px);
    }
  }
  @keyframes rise {
    from {
      opacity: 0;
      transform: translateY(0.5rem) scale(0.98);
    }
  }

  .panel {
    display: flex;
    flex-direction: column;
    flex: 1;
    min-width: 0;
  }
  .header,
  .row-head,
  .footer,
  .status,
  .steps,
  .steps li,
  .loading,
  .message,
  .row-error,
  .field-error {
    display: flex;
    align-items: center;
    gap: 0.6rem;
  }
  .header {
    align-items: flex-start;
    padding: calc(var(--_space) * 1.25) calc(var(--_space) * 1.5) var(--_space);
    border-bottom: 1px solid var(--_border);
  }
  .header-icons {
    display: flex;
    padding-top: 0.1rem;
  }
  .header-icons .icon {
    width: 2.25rem;
    height: 2.25rem;
    padding: 0.3rem;
    border-radius: 0.6rem;
    border: 1px solid var(--_border);
  }
  .header-icons .icon + .icon {
    margin-left: -0.5rem;
    box-shadow: 0 0 0 2px var(--_surface);
  }
  .heading {
    flex: 1;
    min-width: 0;
  }
  h2 {
    margin: 0;
    font-size: 1.15em;
    font-weight: 650;
    line-height: 1.3;
    overflow-wrap: anywhere;
  }
  .heading p {
    margin-top: 0.25rem;
    font-size: 0.9em;
  }
  .close {
    display: grid;
    place-items: center;
    width: 2.25rem;
    height: 2.25rem;
    margin: -0.25rem -0.5rem 0 0;
    border: 0;
    border-radius: 50%;
    background: none;
    color: var(--_muted);
    cursor: pointer;
  }
  .close:hover {
    background: var(--_raised);
    color: inherit;
  }
  .glyph {
    width: 1.15em;
    height: 1.15em;
    flex: none;
    fill: none;
    stroke: currentColor;
    stroke-width: 1.8;
    stroke-linecap: round;
    stroke-linejoin: round;
  }

  .body {
    flex: 1;
    overflow-y: auto;
    overscroll-behavior: contain;
    padding: var(--_space) calc(var(--_space) * 1.5) calc(var(--_space) * 1.25);
  }
  .footer {
    justify-content: flex-end;
    flex-wrap: wrap;
    gap: 0.5rem;
    padding: calc(var(--_space) * 0.75) calc(var(--_space) * 1.5);
    border-top: 1px solid var(--_border);
    background: var(--_raised);
  }
  .intro,
  .steps,
  .message,
  .block {
    margin: 0 0 var(--_space);
  }
  .rows + .message {
    margin-top: var(--_space);
  }
  .empty {
    margin: calc(var(--_space) * 2) 0;
    text-align: center;
  }

  .steps {
    flex-wrap: wrap;
    gap: 0.5rem;
    padding: 0;
    list-style: none;
    counter-reset: step;
    font-size: 0.85em;
    color: var(--_muted);
  }
  .steps li {
    gap: 0.4rem;
    counter-increment: step;
  }
  .steps li::before {
    content: counter(step);
    display: grid;
    place-items: center;
    width: 1.4rem;
    height: 1.4rem;
    border-radius: 50%;
    border: 1px solid var(--_border);
    font-size: 0.85em;
    font-weight: 650;
  }
  .steps .past::before {
    content: '✓' / '';
    border-color: var(--_success);
    color: var(--_success);
  }
  .steps [aria-current] {
    color: var(--_text);
    font-weight: 600;
  }
  .steps [aria-current]::before {
    background: var(--_accent);
    border-color: var(--_accent);
    color: var(--_on-accent);
  }
  .steps li + li::after {
    order: -1;
    content: '';
    width: 1.25rem;
    height: 1px;
    background: var(--_border);
  }

  .rows {
    display: grid;
    gap: 0.625rem;
    margin: 0;
    padding: 0;
    list-style: none;
  }
  .row {
    border: 1px solid var(--_border);
    border-radius: var(--_radius);
    padding: 0.75rem 0.875rem;
  }
  .row-head {
    gap: 0.75rem;
  }
  label.row-head {
    cursor: pointer;
  }
  .row-actions {
    display: flex;
    flex-wrap: wrap;
    justify-content: flex-end;
    gap: 0.5rem;
  }
  .row-text {
    flex: 1;
    min-width: 0;
    display: grid;
    gap: 0.1rem;
  }
  .row-name {
    font-weight: 600;
    overflow-wrap: anywhere;
  }
  .status {
    gap: 0.3rem;
    font-size: 0.875em;
  }
  .connected {
    color: var(--_success);
  }
  .row-error {
    align-items: flex-start;
    gap: 0.4rem;
    margin-top: 0.625rem;
    font-size: 0.9em;
  }
  .parameters {
    display: flex;
    flex-direction: column;
    align-items: flex-end;
  }
  .parameters .field {
    align-self: stretch;
  }
  .parameters .button {
    margin-top: 0.75rem;
  }

  section + section {
    border-top: 1px solid var(--_border);
  }
  h3 {
    margin: var(--_space) 0 0.25rem;
    font-size: 1.1em;
  }
  .section-title {
    font-size: 1em;
  }
  .block {
    padding: 0;
    border: 0;
    min-width: 0;
  }
  legend {
    padding: 0;
    font-size: 0.8em;
    font-weight: 650;
    letter-spacing: 0.04em;
    text-transform: uppercase;
  }
  .field {
    display: grid;
    gap: 0.3rem;
    margin-top: 0.75rem;
  }
  .field label {
    font-weight: 550;
  }
  /* A switch sits beside its label; help and error go under both. */
  .field.inline {
    grid-template-columns: 1fr auto;
    align-items: center;
  }
  .field.inline > p {
    grid-column: 1 / -1;
  }
  /* A margin, not a space in the template: the build's template minifier drops a template's leading space. */
  .required {
    margin-inline-start: 0.3em;
    font-size: 0.875em;
    font-weight: 400;
  }
  textarea.input {
    resize: vertical;
  }
  .help,
  .field-error {
    font-size: 0.875em;
  }
  .field-error {
    align-items: flex-start;
    gap: 0.35rem;
  }

  .message {
    align-items: flex-start;
    padding: 0.75rem 0.875rem;
    border-radius: var(--_radius);
    border: 1px solid color-mix(in srgb, var(--_danger) 45%, transparent);
    background: color-mix(in srgb, var(--_danger) 8%, var(--_surface));
    overflow-wrap: anywhere;
  }
  .message .glyph {
    color: var(--_danger);
  }
  .message-title {
    font-weight: 600;
    margin-bottom: 0.2rem;
  }
  .message .glyph,
  .row-error .glyph,
  .field-error .glyph {
    margin-top: 0.15em;
  }

  .loading {
    justify-content: center;
    min-height: 9rem;
  }
  .spinner {
    width: 1em;
    height: 1em;
    flex: none;
    border: 2px solid;
    border-right-color: transparent;
    border-radius: 50%;
    animation: spin 0.7s linear infinite;
  }
  @keyframes spin {
    to {
      rotate: 1turn;
    }
  }

  .success {
    display: grid;
    justify-items: center;
    gap: 0.5rem;
    padding: calc(var(--_space) * 1.5) 0 var(--_space);
    text-align: center;
  }
  .success p {
    max-width: 26rem;
  }
  .success-mark {
    display: grid;
    place-items: center;
    width: 3rem;
    height: 3rem;
    border-radius: 50%;
    background: color-mix(in srgb, var(--_success) 14%, var(--_surface));
    color: var(--_success);
  }
  .success-mark .glyph {
    width: 1.6rem;
    height: 1.6rem;
    stroke-width: 2.2;
  }
  .success h3 {
    margin: 0.25rem 0 0;
  }

  /* A phone: the modal takes the whole screen and only its body scrolls. */
  @media (max-width: 30rem) {
    dialog {
      width: 100vw;
      height: 100dvh;
      max-height: none;
      margin: 0;
      border: 0;
      border-radius: 0;
    }
    .header,
    .body,
    .footer {
      padding-inline: var(--_space);
    }
    /* The names say it; the room goes to the title. */
    .header-icons {
      display: none;
    }
    .close {
      margin-right: -0.25rem;
    }
    .footer .button {
      flex: 1;
    }
  }
`;
