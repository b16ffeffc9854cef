import { css } from 'lit';

/**
 * The theming surface and the controls both elements share. Each `--forge-*` custom property
 * can be set by the host page (they inherit through the shadow root); the private `--_*`
 * properties hold the resolved value with its light and dark defaults. `theme="light"` or
 * `theme="dark"` on an element pins the scheme; otherwise it follows `prefers-color-scheme`.
 */
export const themeStyles = css`
  :host {
    color-scheme: light dark;
    --_radius: var(--forge-radius, 0.625rem);
    --_space: var(--forge-spacing, 1rem);
    --_surface: var(--forge-color-surface, light-dark(#fff, #18181b));
    --_raised: var(--forge-color-surface-raised, light-dark(#f6f7f9, #232329));
    --_text: var(--forge-color-text, light-dark(#16181d, #f2f2f5));
    --_muted: var(--forge-color-text-muted, light-dark(#585e6b, #a9adb8));
    --_border: var(--forge-color-border, light-dark(#d9dce3, #3a3a44));
    --_accent: var(--forge-color-accent, light-dark(#4f46e5, #8b85ff));
    --_on-accent: var(--forge-color-accent-text, light-dark(#fff, #0f0e24));
    --_danger: var(--forge-color-danger, light-dark(#b42318, #ff8a80));
    --_success: var(--forge-color-success, light-dark(#067647, #6ce0a6));
    font-family: var(--forge-font-family, system-ui, sans-serif);
    font-size: var(--forge-font-size, 0.9375rem);
    line-height: 1.45;
    color: var(--_text);
  }
  :host([theme='light']) {
    color-scheme: light;
  }
  :host([theme='dark']) {
    color-scheme: dark;
  }
  :host([hidden]) {
    display: none !important;
  }
  *,
  ::before,
  ::after {
    box-sizing: border-box;
  }
  p {
    margin: 0;
  }
  :focus-visible {
    outline: none;
    box-shadow: var(--forge-focus-ring, 0 0 0 3px color-mix(in srgb, var(--_accent) 45%, transparent));
  }
  .muted {
    color: var(--_muted);
  }
  .danger {
    color: var(--_danger);
  }
  .button,
  .input {
    min-height: 2.5rem;
    border-radius: calc(var(--_radius) * 0.8);
    border: 1px solid var(--_border);
    background: var(--_surface);
    color: var(--_text);
    font: inherit;
  }
  .button {
    display: inline-flex;
    align-items: center;
    justify-content: center;
    gap: 0.4em;
    padding: 0 1rem;
    font-weight: 550;
    white-space: nowrap;
    cursor: pointer;
  }
  .button:hover {
    background: var(--_raised);
  }
  /* Actions inside a view: clearly buttons, yet quieter than its main button. */
  .button.tonal {
    background: color-mix(in srgb, var(--_accent) 10%, var(--_surface));
    border-color: color-mix(in srgb, var(--_accent) 40%, var(--_surface));
    color: var(--_accent);
  }
  /* 15%, not more: the accent text keeps 4.5:1 on it in both themes (4.71 dark, 5.00 light; 18% gave 4.43 dark). */
  .button.tonal:hover {
    background: color-mix(in srgb, var(--_accent) 15%, var(--_surface));
  }
  /* Busy buttons stay focusable (so focus is not lost); a press is ignored. */
  .button[aria-disabled='true'] {
    cursor: progress;
    opacity: 0.75;
  }
  .input {
    width: 100%;
    padding: 0.5rem 0.75rem;
  }
  .input:hover {
    border-color: color-mix(in srgb, var(--_muted) 60%, var(--_border));
  }
  .input:focus-visible {
    border-color: var(--_accent);
  }
  .input::placeholder {
    color: var(--_muted);
    opacity: 1;
  }
  .switch {
    appearance: none;
    position: relative;
    flex: none;
    width: 2.75rem;
    height: 1.5rem;
    margin: 0;
    border-radius: 1rem;
    /* The off track must reach 3:1 against the surface (WCAG 1.4.11); the border colour does not. */
    background: color-mix(in srgb, var(--_muted) 80%, var(--_surface));
    cursor: pointer;
    transition: background-color 0.15s;
  }
  .switch::before {
    content: '';
    position: absolute;
    inset: 0.1875rem auto auto 0.1875rem;
    width: 1.125rem;
    height: 1.125rem;
    border-radius: 50%;
    background: var(--_surface);
    box-shadow: 0 1px 2px #0004;
    transition: translate 0.15s;
  }
  .switch:checked {
    background: var(--_accent);
  }
  .switch:checked::before {
    translate: 1.25rem;
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
  .visually-hidden {
    position: absolute;
    width: 1px;
    height: 1px;
    overflow: hidden;
    clip-path: inset(50%);
    white-space: nowrap;
  }
  .icon {
    width: 1.75rem;
    height: 1.75rem;
    border-radius: 0.4rem;
    flex: none;
    object-fit: contain;
    /* A light plate: an app's own colours (Slack's aubergine) stay visible on a dark surface. */
    padding: 0.125rem;
    background: #fff;
  }
  @media (prefers-reduced-motion: reduce) {
    *,
    ::before {
      transition: none !important;
      animation: none !important;
    }
  }
`;

/** Only http(s) URLs and data images become `<img src>`: catalog data is never trusted as markup. */
export function safeIconUrl(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  if (/^data:image\/(png|gif|jpeg|webp|svg\+xml)[;,]/i.test(url)) return url;
  try {
    const { protocol, href } = new URL(url);
    return /^https?:$/.test(protocol) ? href : undefined;
  } catch {
    return undefined;
  }
}
