import { css } from 'lit';

/**
 * The theming surface both elements share. Each `--forge-*` custom property can be set by the
 * host page (they inherit through the shadow root); the private `--_*` properties hold the
 * resolved value with its light and dark defaults. `theme="light"` or `theme="dark"` on an
 * element pins the scheme; otherwise it follows `prefers-color-scheme`.
 */
export const themeStyles = css`
  :host {
    color-scheme: light dark;
    --_font: var(--forge-font-family, system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif);
    --_font-size: var(--forge-font-size, 0.9375rem);
    --_radius: var(--forge-radius, 0.625rem);
    --_space: var(--forge-spacing, 1rem);
    --_surface: var(--forge-color-surface, light-dark(#ffffff, #18181b));
    --_surface-raised: var(--forge-color-surface-raised, light-dark(#f6f7f9, #232329));
    --_text: var(--forge-color-text, light-dark(#16181d, #f2f2f5));
    --_text-muted: var(--forge-color-text-muted, light-dark(#585e6b, #a9adb8));
    --_border: var(--forge-color-border, light-dark(#d9dce3, #3a3a44));
    --_accent: var(--forge-color-accent, light-dark(#4f46e5, #8b85ff));
    --_accent-text: var(--forge-color-accent-text, light-dark(#ffffff, #0f0e24));
    --_danger: var(--forge-color-danger, light-dark(#b42318, #ff8a80));
    --_success: var(--forge-color-success, light-dark(#067647, #6ce0a6));
    --_focus: var(--forge-focus-ring, 0 0 0 3px color-mix(in srgb, var(--_accent) 45%, transparent));
    font-family: var(--_font);
    font-size: var(--_font-size);
    color: var(--_text);
    line-height: 1.45;
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
  *::before,
  *::after {
    box-sizing: border-box;
  }
  button {
    font: inherit;
    cursor: pointer;
  }
  button:disabled {
    cursor: not-allowed;
    opacity: 0.6;
  }
  :focus-visible {
    outline: none;
    box-shadow: var(--_focus);
  }
  .button {
    display: inline-flex;
    align-items: center;
    justify-content: center;
    gap: 0.4em;
    min-height: 2.5rem;
    padding: 0 1rem;
    border-radius: calc(var(--_radius) * 0.8);
    border: 1px solid var(--_border);
    background: var(--_surface);
    color: var(--_text);
    font-weight: 550;
    white-space: nowrap;
  }
  .button:hover:not(:disabled) {
    background: var(--_surface-raised);
  }
  .button.primary {
    background: var(--_accent);
    border-color: var(--_accent);
    color: var(--_accent-text);
  }
  .button.primary:hover:not(:disabled) {
    background: color-mix(in srgb, var(--_accent) 88%, black);
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
  }
  .error-text {
    color: var(--_danger);
  }
`;

/** Only http(s) URLs and data images become `<img src>`: catalog data is never trusted as markup. */
export function safeIconUrl(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  if (/^data:image\/(png|gif|jpeg|webp|svg\+xml)[;,]/i.test(url)) return url;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}
