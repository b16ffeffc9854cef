import { html, nothing, svg, type TemplateResult } from 'lit';
import { ifDefined } from 'lit/directives/if-defined.js';
import { live } from 'lit/directives/live.js';
import { safeIconUrl } from '../theme.js';

/** An integration's or workflow's icon; a URL that is not http(s) or a data image is not rendered. */
export function iconImage(url: unknown): TemplateResult | typeof nothing {
  const src = safeIconUrl(url);
  // Decorative: the name is always written next to it.
  return src ? html`<img part="icon" class="icon" src=${src} alt="" />` : nothing;
}

const svgIcon = (content: TemplateResult<2>) =>
  html`<svg class="glyph" viewBox="0 0 20 20" aria-hidden="true" focusable="false">${content}</svg>`;

export const closeGlyph = svgIcon(svg`<path d="M5 5l10 10M15 5L5 15" />`);
export const checkGlyph = svgIcon(svg`<path d="M4.5 10.5l3.5 3.5 7.5-8" />`);
export const alertGlyph = svgIcon(svg`<circle cx="10" cy="10" r="7.5" /><path d="M10 6v4.5M10 13.5v.01" />`);

export interface FieldOptions {
  id: string;
  label: string;
  description?: string | undefined;
  error?: string | undefined;
  value: string;
  type?: 'text' | 'number' | 'password';
  onInput: (value: string) => void;
}

/**
 * A labelled input with its help text and, after a failed save, its error, both tied to the
 * input through `aria-describedby` so a screen reader reads them with the field.
 */
export function renderField({ id, label, description, error, value, type = 'text', onInput }: FieldOptions) {
  const describedBy = [description ? `${id}-help` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`<div part="field" class="field">
    <label part="label" for=${id}>${label}</label>
    <input
      part="input"
      id=${id}
      type=${type}
      step=${ifDefined(type === 'number' ? 'any' : undefined)}
      autocomplete="off"
      spellcheck="false"
      .value=${live(value)}
      aria-invalid=${error ? 'true' : 'false'}
      aria-describedby=${ifDefined(describedBy || undefined)}
      @input=${(event: Event) => onInput((event.target as HTMLInputElement).value)}
    />
    ${description ? html`<p part="help" class="help" id="${id}-help">${description}</p>` : nothing}
    ${error ? html`<p part="field-error" class="field-error" id="${id}-error">${alertGlyph}${error}</p>` : nothing}
  </div>`;
}

/** A step: its scrolling body and, unless `nothing`, a footer with its buttons. */
export function layout(body: unknown, footer: unknown, { busy = false } = {}) {
  return html`<div part="body" class="body" aria-busy=${busy ? 'true' : 'false'}>${body}</div>
    ${footer === nothing ? nothing : html`<footer part="footer" class="footer">${footer}</footer>`}`;
}

export const spinner = html`<span class="spinner" aria-hidden="true"></span>`;
