import { html, nothing } from 'lit';
import { safeIconUrl } from '../theme.js';
import { healthView } from './health.js';
import type { Offer, RowContext } from './state.js';

/** One row; `position` is its 1-based place and `total` the list's length when the list is windowed. */
export function rowView(
  c: RowContext,
  { parent: { workflowId: id, name, description, integrations, blocks } }: Offer,
  position?: number,
  total?: number,
) {
  const { t, actions } = c;
  const row = c.installed.get(id);
  const error = c.rowErrors.get(id);
  const details = c.details.get(id);
  return html`<li
    class="row"
    part="row"
    data-key=${id}
    aria-posinset=${position ?? nothing}
    aria-setsize=${total ?? nothing}
  >
    <span class="icons" part="icons">
      ${integrations.map((integration) => {
        const { displayName: name, icon } = c.integrations.get(integration)!;
        const url = safeIconUrl(icon);
        return url
          ? html`<img class="icon" src=${url} alt=${name} title=${name} width="28" height="28" loading="lazy" />`
          : html`<span class="icon letter muted" role="img" aria-label=${name} title=${name}>${name[0]}</span>`;
      })}
    </span>
    <div class="text">
      <span class="name" part="name">${name}</span>
      ${description ? html`<span class="small muted" part="description">${description}</span>` : nothing}
      ${error ? html`<span class="small danger" part="row-error" role="alert">${error}</span>` : nothing}
      ${row ? healthView(c, id, name, row) : nothing}
    </div>
    <span class="actions">
      ${
        row
          ? html`<input
              type="checkbox"
              role="switch"
              class="switch"
              part="switch"
              aria-label=${name}
              .checked=${row.wanted}
              @change=${(event: Event) => actions.toggle(id, row, event)}
            />`
          : nothing
      }
      <button
        type="button"
        class="button ${row ? '' : 'tonal'}"
        part="button ${row ? 'configure' : 'enable'}-button"
        @click=${() => actions.openModal(id)}
      >
        ${row ? t.configure : t.enable}<span class="visually-hidden"> ${name}</span>
      </button>
    </span>
    ${details && c.expanded.has(id) ? details.render(t, { id: `runs-${id}`, name, blocks }, c.locale, c.plural) : nothing}
  </li>`;
}
