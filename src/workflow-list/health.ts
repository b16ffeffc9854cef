import { html, nothing } from 'lit';
import { timeTag } from '../internal/time.js';
import type { Installed, RowContext } from './state.js';

/** What an installed workflow's row says about its runs, and the fix a failure asks for. */
export function healthView(c: RowContext, id: string, name: string, row: Installed) {
  const { t, locale, actions } = c;
  const { lastRun, failure, failedLast24h, nextRunAt } = row.health;
  const state = !lastRun ? 'waiting' : failure ? 'failed' : 'ok';
  const app = failure?.integration ? (c.integrations.get(failure.integration)?.displayName ?? failure.integration) : '';
  const open = c.expanded.has(id);
  // Not once the user has connected the app again: the next run tells whether that fixed it.
  const reconnect = failure?.kind === 'connection' && app && !failure.reconnectedAt ? failure.integration! : '';
  const fix =
    reconnect || failure?.kind === 'settings'
      ? html`<button type="button" class="button tonal" part="fix-button" @click=${() => actions.openModal(id, reconnect)}>
          ${reconnect ? t.reconnect(app) : t.fixSettings}<span class="visually-hidden"> · ${name}</span>
        </button>`
      : nothing;
  return html`<span class="health small ${state}" part="health health-${state}">
      <span class="glyph" aria-hidden="true">${state === 'ok' ? '✓' : state === 'failed' ? '!' : '…'}</span>
      <span>
        ${
          lastRun
            ? timeTag(lastRun.startedAt, locale, failure ? t.lastRunFailed : t.lastRunSucceeded)
            : nextRunAt
              ? timeTag(nextRunAt, locale, t.nextRun)
              : t.neverRan
        }
        ${failure ? html`· ${t.failedBecause[failure.kind](app)}` : nothing}
        ${failedLast24h ? html`<span class="muted">· ${t.failedToday(failedLast24h, c.plural)}</span>` : nothing}
      </span>
    </span>
    ${
      lastRun || fix !== nothing
        ? html`<span class="health-actions">
            ${fix}
            ${
              lastRun
                ? html`<button
                    type="button"
                    class="button quiet"
                    part="runs-button"
                    aria-expanded=${open}
                    aria-controls="runs-${id}"
                    @click=${() => actions.toggleDetails(id, row.childId)}
                  >
                    ${t.showRuns}<span class="visually-hidden"> · ${name}</span>
                  </button>`
                : nothing
            }
          </span>`
        : nothing
    }`;
}
