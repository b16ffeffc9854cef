import { html, nothing } from 'lit';
import type { IntegrationSummary, UserConnection } from '../api/types.js';
import { secretParameter } from '../config-modal/connect.js';
import type { Plural } from '../internal/plural.js';
import { safeIconUrl } from '../theme.js';
import { type AppsView, needsAccount } from './state.js';
import type { IntegrationListStrings } from './strings.js';

/** What the user can do on a card; the element answers each. */
export interface CardActions {
  connect(app: IntegrationSummary): void;
  /** Stops waiting for the app's sign-in window. */
  cancelConnect(app: IntegrationSummary): void;
  disconnect(app: IntegrationSummary): void;
  closeForm(): void;
  submitParameters(event: SubmitEvent, app: IntegrationSummary): void;
  setValue(name: string, value: string): void;
  openWorkflows(app: IntegrationSummary): void;
}

/** Everything a card reads: it renders from this alone. */
export interface CardContext extends AppsView {
  t: IntegrationListStrings;
  plural: Plural;
  /** The names of the user's switched-on workflows that use each app. */
  workflowsOn: ReadonlyMap<string, string[]>;
  on: CardActions;
}

/** The app's state in words, with a glyph beside them (never colour alone). */
function stateOf(t: IntegrationListStrings, app: IntegrationSummary, connection?: UserConnection) {
  if (!needsAccount(app)) return { kind: 'ok', glyph: '✓', words: t.noAccountNeeded };
  if (!connection) return { kind: 'waiting', glyph: '–', words: t.notConnected };
  if (connection.status === 'broken') return { kind: 'failed', glyph: '!', words: t.broken };
  return { kind: 'ok', glyph: '✓', words: connection.account ? t.connectedAs(connection.account) : t.connected };
}

/**
 * One app's card; `n` numbers the ids inside it. In a grid that renders only the cards near the
 * viewport, `total` is how many apps it shows and `n + 1` this card's place among them.
 */
export function cardView(c: CardContext, app: IntegrationSummary, n: number, total?: number) {
  const { t, on } = c;
  const { name, displayName, icon, description, category } = app;
  const connection = c.connections.get(name);
  const state = stateOf(t, app, connection);
  const busy = c.busy === name;
  const error = c.appErrors.get(name);
  const formOpen = c.formFor === name;
  const oauth = !app.requiredParameters?.[0];
  const workflowsOn = c.workflowsOn.get(name)?.length ?? 0;
  const url = safeIconUrl(icon);
  const workflows = t.workflows(workflowsOn, c.plural);
  // Each button's name for assistive technology is its word and the app's ("Connect Slack"), as
  // its aria-label: it starts with the word shown (voice control finds it), and a card has no
  // hidden spans to clone and lay out (three a card cost a tenth of the first render's layout).
  const named = (word: string) => `${word} ${displayName}`;
  let actions: unknown = nothing;
  if (needsAccount(app) && !formOpen) {
    // While the app's sign-in window is open, its Connect button is Cancel.
    const waiting = busy && oauth;
    const word = waiting ? t.cancel : connection ? t.reconnect : t.connect;
    actions = html`<button
        type="button"
        class="button ${connection?.status === 'broken' || !connection ? 'tonal' : ''}"
        part="button ${waiting ? 'cancel' : connection ? 'reconnect' : 'connect'}-button"
        aria-label=${named(word)}
        aria-disabled=${!!c.busy && !waiting}
        @click=${() => (waiting ? on.cancelConnect(app) : c.busy || on.connect(app))}
      >
        ${word}
      </button>
      ${
        connection
          ? html`<button
              type="button"
              class="button quiet"
              part="button disconnect-button"
              aria-label=${named(t.disconnect)}
              aria-disabled=${!!c.busy}
              @click=${() => c.busy || on.disconnect(app)}
            >
              ${t.disconnect}
            </button>`
          : nothing
      }`;
  }
  return html`<li class="app" part="app" data-key=${name} aria-posinset=${total ? n + 1 : nothing} aria-setsize=${total ?? nothing}>
    <div class="app-head">
      ${
        url
          ? html`<img class="icon" part="icon" src=${url} alt="" width="40" height="40" loading="lazy" />`
          : html`<span class="icon letter" part="icon" aria-hidden="true">${displayName[0]}</span>`
      }
      <span class="text">
        <span class="name" part="name" id="app-${n}">${displayName}</span>
        ${category ? html`<span class="small muted" part="category">${category}</span>` : nothing}
      </span>
    </div>
    ${description ? html`<p class="small muted description" part="description">${description}</p>` : nothing}
    <p class="health small ${state.kind}" part="state state-${state.kind}">
      <span class="glyph" aria-hidden="true">${state.glyph}</span>
      <span>${busy && oauth ? t.waitingForPopup(displayName) : state.words}</span>
    </p>
    ${error ? html`<p class="small danger" part="app-error" role="alert">${error}</p>` : nothing}
    ${formOpen ? parametersForm(c, app, n) : nothing}
    <div class="app-actions">
      ${actions}
      <button
        type="button"
        class="button quiet"
        part="button workflows-button"
        aria-label=${named(workflows)}
        @click=${() => on.openWorkflows(app)}
      >
        ${workflows}
      </button>
    </div>
  </li>`;
}

/** The form of an app's required parameters (an API key, an account name), labelled by the app's name. */
function parametersForm(c: CardContext, app: IntegrationSummary, n: number) {
  const { t, on, values, fieldErrors } = c;
  const busy = c.busy === app.name;
  return html`<form
    class="parameters"
    part="parameters"
    aria-labelledby="app-${n}"
    novalidate
    @submit=${(event: SubmitEvent) => on.submitParameters(event, app)}
  >
    ${app.requiredParameters!.map((p, i) => {
      const id = `app-${n}-${i}`;
      const error = fieldErrors.get(p.name);
      return html`<div class="field">
        <label for=${id}>${p.displayName}</label>
        <input
          class="input"
          id=${id}
          type=${secretParameter(p.name) ? 'password' : 'text'}
          autocomplete="off"
          spellcheck="false"
          .value=${values.get(p.name) ?? ''}
          aria-invalid=${!!error}
          aria-describedby="${id}-help${error ? ` ${id}-error` : ''}"
          @input=${({ target }: Event) => on.setValue(p.name, (target as HTMLInputElement).value)}
        />
        <span class="small muted" id="${id}-help">${p.description}</span>
        ${error ? html`<span class="small danger" id="${id}-error">${error}</span>` : nothing}
      </div>`;
    })}
    <div class="app-actions">
      <button type="submit" class="button tonal" aria-disabled=${busy}>${t.saveParameters}</button>
      <button type="button" class="button" @click=${on.closeForm}>${t.cancel}</button>
    </div>
  </form>`;
}
