import { html, nothing, type TemplateResult } from 'lit';
import { safeIconUrl } from '../theme.js';

/** An integration's or workflow's icon; a URL that is not http(s) or a data image is not rendered. */
export function iconImage(url: unknown): TemplateResult | typeof nothing {
  const src = safeIconUrl(url);
  // Decorative: the name is always written next to it.
  return src ? html`<img part="icon" class="icon" src=${src} alt="" />` : nothing;
}

// Each glyph is one path: the bundle's template minifier drops the `/>` of SVG elements, which
// would nest a second element inside the first.
const glyph = (path: string) =>
  html`<svg class="glyph" viewBox="0 0 20 20" aria-hidden="true"><path d=${path} /></svg>`;

export const closeGlyph = glyph('M5 5l10 10M15 5L5 15');
export const checkGlyph = glyph('M4.5 10.5l3.5 3.5 7.5-8');
export const alertGlyph = glyph('M10 2.5a7.5 7.5 0 1 0 0 15a7.5 7.5 0 0 0 0-15M10 6v4.5M10 13.5v.01');

export const spinner = html`<span class="spinner" aria-hidden="true"></span>`;

/** A step: its scrolling body and, when given, a footer with its buttons. */
export const layout = (body: unknown, footer?: unknown, busy = false) =>
  html`<div part="body" class="body" aria-busy=${busy}>${body}</div>
    ${footer ? html`<footer part="footer" class="footer">${footer}</footer>` : nothing}`;
