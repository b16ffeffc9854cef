import { css } from 'lit';

/** `<forge-config-modal>`'s own styles, over the shared `themeStyles`. */
export const configModalStyles = css`
  :host {
    display: contents;
  }

  dialog {
    width: min(var(--forge-modal-width, 34rem), calc(100vw - 2rem));
    max-width: none;
    max-height: min(calc(100dvh - 2rem), 46rem);
    padding: 0;
    border: 1px solid var(--_border);
    border-radius: calc(var(--_radius) * 1.5);
    background: var(--_surface);
    color: var(--_text);
    box-shadow:
      0 1px 2px rgb(0 0 0 / 0.08),
      0 24px 64px -16px rgb(0 0 0 / 0.4);
    overflow: hidden;
  }
  dialog[open] {
    display: flex;
    animation: rise 160ms ease-out;
  }
  dialog::backdrop {
    background: var(--forge-color-backdrop, rgb(15 17 21 / 0.55));
  }
  @keyframes rise {
    from {
      opacity: 0;
      transform: translateY(0.5rem) scale(0.98);
    }
  }
  @media (prefers-reduced-motion: reduce) {
    dialog[open] {
      animation: none;
    }
  }

  .panel {
    display: flex;
    flex-direction: column;
    flex: 1;
    min-height: 0;
    min-width: 0;
  }

  .header {
    display: flex;
    align-items: flex-start;
    gap: 0.75rem;
    padding: calc(var(--_space) * 1.25) calc(var(--_space) * 1.5) var(--_space);
    border-bottom: 1px solid var(--_border);
  }
  .header-icons {
    display: flex;
    flex: none;
    padding-top: 0.1rem;
  }
  .header-icons .icon {
    width: 2.25rem;
    height: 2.25rem;
    padding: 0.3rem;
    border-radius: 0.6rem;
    background: var(--_surface);
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
  .subtitle {
    margin: 0.25rem 0 0;
    color: var(--_text-muted);
    font-size: 0.9em;
  }
  .close {
    flex: none;
    display: grid;
    place-items: center;
    width: 2.25rem;
    height: 2.25rem;
    margin: -0.25rem -0.5rem 0 0;
    border: 0;
    border-radius: 50%;
    background: transparent;
    color: var(--_text-muted);
  }
  .close:hover {
    background: var(--_surface-raised);
    color: var(--_text);
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
    flex: 1 1 auto;
    min-height: 0;
    overflow-y: auto;
    overscroll-behavior: contain;
    padding: var(--_space) calc(var(--_space) * 1.5) calc(var(--_space) * 1.25);
  }
  .footer {
    display: flex;
    justify-content: flex-end;
    flex-wrap: wrap;
    gap: 0.5rem;
    padding: calc(var(--_space) * 0.75) calc(var(--_space) * 1.5);
    border-top: 1px solid var(--_border);
    background: var(--_surface-raised);
  }
  /* Actions inside a step: clearly buttons, yet quieter than the step's main button. */
  .button.tonal {
    background: color-mix(in srgb, var(--_accent) 10%, var(--_surface));
    border-color: color-mix(in srgb, var(--_accent) 40%, var(--_surface));
    color: var(--_accent);
  }
  .button.tonal:hover:not([aria-disabled='true']) {
    background: color-mix(in srgb, var(--_accent) 18%, var(--_surface));
  }
  .button[aria-disabled='true'] {
    cursor: progress;
    opacity: 0.75;
  }

  .intro {
    margin: 0 0 var(--_space);
    color: var(--_text-muted);
  }
  .empty {
    margin: calc(var(--_space) * 2) 0;
    text-align: center;
    color: var(--_text-muted);
  }

  .steps {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    gap: 0.5rem;
    margin: 0 0 var(--_space);
    padding: 0;
    list-style: none;
    counter-reset: step;
    font-size: 0.85em;
    color: var(--_text-muted);
  }
  .steps li {
    display: flex;
    align-items: center;
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
  .steps li.past::before {
    content: '✓' / '';
    border-color: var(--_success);
    color: var(--_success);
  }
  .steps li[aria-current='step'] {
    color: var(--_text);
    font-weight: 600;
  }
  .steps li[aria-current='step']::before {
    background: var(--_accent);
    border-color: var(--_accent);
    color: var(--_accent-text);
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
    background: var(--_surface);
    padding: 0.75rem 0.875rem;
  }
  .row-head,
  .workflow {
    display: flex;
    align-items: center;
    gap: 0.75rem;
  }
  .workflow {
    cursor: pointer;
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
    display: flex;
    align-items: center;
    gap: 0.3rem;
    font-size: 0.875em;
    color: var(--_text-muted);
  }
  .status.connected {
    color: var(--_success);
  }
  .row-error {
    display: flex;
    gap: 0.4rem;
    margin: 0.625rem 0 0;
    font-size: 0.9em;
    color: var(--_danger);
  }
  .row-error .glyph {
    margin-top: 0.15em;
  }

  .parameters {
    margin-top: 0.25rem;
  }
  .form-actions {
    display: flex;
    justify-content: flex-end;
    margin-top: 0.75rem;
  }

  .switch {
    appearance: none;
    position: relative;
    flex: none;
    width: 2.5rem;
    height: 1.5rem;
    margin: 0;
    border-radius: 999px;
    background: color-mix(in srgb, var(--_text-muted) 55%, var(--_surface));
    cursor: pointer;
    transition: background-color 120ms;
  }
  .switch::before {
    content: '';
    position: absolute;
    top: 0.1875rem;
    left: 0.1875rem;
    width: 1.125rem;
    height: 1.125rem;
    border-radius: 50%;
    background: #fff;
    box-shadow: 0 1px 2px rgb(0 0 0 / 0.3);
    transition: transform 120ms;
  }
  .switch:checked {
    background: var(--_accent);
  }
  .switch:checked::before {
    transform: translateX(1rem);
  }
  @media (prefers-reduced-motion: reduce) {
    .switch,
    .switch::before {
      transition: none;
    }
  }

  section + section {
    margin-top: var(--_space);
    border-top: 1px solid var(--_border);
  }
  .section-title {
    margin: var(--_space) 0 0.25rem;
    font-size: 1em;
    font-weight: 650;
  }
  .block {
    margin: 0 0 var(--_space);
    padding: 0;
    border: 0;
    min-width: 0;
  }
  legend {
    padding: 0;
    margin-bottom: 0.25rem;
    font-size: 0.8em;
    font-weight: 650;
    letter-spacing: 0.04em;
    text-transform: uppercase;
    color: var(--_text-muted);
  }
  .field {
    display: grid;
    gap: 0.3rem;
    margin-top: 0.75rem;
  }
  .field label {
    font-weight: 550;
  }
  .field input {
    width: 100%;
    min-height: 2.5rem;
    padding: 0.5rem 0.75rem;
    border: 1px solid var(--_border);
    border-radius: calc(var(--_radius) * 0.8);
    background: var(--_surface);
    color: var(--_text);
    font: inherit;
  }
  .field input:hover {
    border-color: color-mix(in srgb, var(--_text-muted) 60%, var(--_border));
  }
  .field input:focus-visible {
    border-color: var(--_accent);
  }
  .field input[aria-invalid='true'] {
    border-color: var(--_danger);
  }
  .help {
    margin: 0;
    font-size: 0.875em;
    color: var(--_text-muted);
  }
  .field-error {
    display: flex;
    gap: 0.35rem;
    margin: 0;
    font-size: 0.875em;
    color: var(--_danger);
  }
  .field-error .glyph {
    margin-top: 0.15em;
  }

  .message {
    display: flex;
    gap: 0.6rem;
    margin: 0 0 var(--_space);
    padding: 0.75rem 0.875rem;
    border-radius: var(--_radius);
    border: 1px solid color-mix(in srgb, var(--_danger) 45%, transparent);
    background: color-mix(in srgb, var(--_danger) 8%, var(--_surface));
  }
  .message .glyph {
    color: var(--_danger);
    margin-top: 0.15em;
  }
  .message p {
    margin: 0;
    overflow-wrap: anywhere;
  }
  .message-title {
    font-weight: 600;
    margin-bottom: 0.2rem !important;
  }

  .loading {
    display: flex;
    align-items: center;
    justify-content: center;
    gap: 0.6rem;
    min-height: 9rem;
    color: var(--_text-muted);
  }
  .spinner {
    width: 1em;
    height: 1em;
    flex: none;
    border: 2px solid currentColor;
    border-right-color: transparent;
    border-radius: 50%;
    animation: spin 700ms linear infinite;
  }
  @keyframes spin {
    to {
      transform: rotate(1turn);
    }
  }
  @media (prefers-reduced-motion: reduce) {
    .spinner {
      animation-duration: 2s;
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
    margin: 0;
    color: var(--_text-muted);
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
  .success-title {
    margin: 0.25rem 0 0;
    font-size: 1.1em;
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
