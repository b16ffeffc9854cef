import { css, html, nothing, type ReactiveController, type ReactiveElement, type TemplateResult } from 'lit';
import type { ForgeApiError } from '../api/embed-client.js';
import type { OptionsPage, OptionsQuery, VariableOption } from '../api/types.js';
import type { ConfigModalStrings } from './strings.js';
import { alertGlyph, spinner } from './templates.js';

/**
 * The combobox of a setting whose choices come from the user's own app (issue 26), after the
 * WAI-ARIA APG's editable combobox with list autocomplete: the text box keeps focus and points
 * at the option the arrow keys reach with `aria-activedescendant`; typing searches the app
 * (through `GET /workflow/:id/options`, debounced); Enter takes the option, Escape closes the
 * list (with the list closed, the dialog's Escape); Home and End go back to the text. What is typed and not
 * chosen stays the value, as in the APG pattern (an app may hold more than it lists, such as a
 * private channel). Loaded with `import()` by the modal only for a workflow that has such a
 * setting, so the modal's own chunk does not carry it (docs/design-notes.md).
 */

/** What the modal gives one such field each render. */
export interface ChoiceField {
  /** The setting's key: its state here is kept under it for the open. */
  key: string;
  /** The text box's id; the label's is `<id>-label`. */
  id: string;
  /** The stored value as text: an option's `value`, or what the user typed. */
  value: string;
  required: boolean;
  invalid: boolean;
  describedBy: string | typeof nothing;
  autofocus: boolean;
  appName: string;
  t: ConfigModalStrings;
  read(query: Pick<OptionsQuery, 'search' | 'cursor'>, signal: AbortSignal): Promise<OptionsPage>;
  choose(value: string): void;
  /** Leads the user to connect the app again (the modal's connect step). */
  reconnect(): void;
}

interface FieldState {
  field: ChoiceField;
  open: boolean;
  /** What the user typed since the last choice; the box shows the chosen label otherwise. */
  text?: string | undefined;
  /** The search the options shown answer. */
  search: string;
  options: VariableOption[];
  next?: string | undefined;
  /** A page for `search` has arrived. */
  loaded: boolean;
  busy: boolean;
  failure?: 'refused' | 'failed' | undefined;
  /** The option the arrow keys reached; -1 while the text box itself has the visual focus. */
  active: number;
  abort?: AbortController;
  timer?: ReturnType<typeof setTimeout>;
}

/** How long typing pauses before the app is asked. */
const SEARCH_DELAY_MS = 250;

/**
 * The labels of the values seen, by setting key and value, for as long as the page lives: the
 * service stores only the value, so a modal opened again shows the label the user chose.
 */
const labels = new Map<string, string>();
const labelOf = (key: string, value: string) => labels.get(`${key}\n${value}`);

const choiceStyles = css`
  .choices-list {
    margin: 0.25rem 0 0;
    padding: 0.25rem;
    list-style: none;
    max-height: 12rem;
    overflow-y: auto;
    border: 1px solid var(--_border);
    border-radius: var(--_radius);
    background: var(--_surface);
  }
  .choices-list li {
    padding: 0.4rem 0.6rem;
    border-radius: calc(var(--_radius) / 2);
    cursor: pointer;
  }
  .choices-list li:hover {
    background: color-mix(in srgb, var(--_accent) 10%, var(--_surface));
  }
  .choices-list [aria-selected='true'] {
    background: var(--_accent);
    color: var(--_on-accent);
  }
  .choices-list .chosen {
    font-weight: 650;
  }
  .choices-status {
    display: flex;
    align-items: center;
    gap: 0.4rem;
    margin: 0.25rem 0 0;
    font-size: 0.875em;
  }
  .choices-status:empty {
    display: none;
  }
  .choices .button {
    margin-top: 0.4rem;
  }
`;

/** The remote-choice fields of one modal: their state, their keys and their rendering. */
export class Choices implements ReactiveController {
  readonly #host: ReactiveElement;
  #fields = new Map<string, FieldState>();

  constructor(host: ReactiveElement) {
    this.#host = host;
    host.addController(this);
    // Strict CSP allows constructable stylesheets: added beside the modal's own.
    const root = host.renderRoot as ShadowRoot;
    root.adoptedStyleSheets = [...root.adoptedStyleSheets, choiceStyles.styleSheet!];
  }

  hostDisconnected(): void {
    this.reset();
  }

  hostUpdated(): void {
    for (const { field, open, active } of this.#fields.values()) {
      if (open && active >= 0) {
        this.#host.renderRoot.querySelector(`#${field.id}-${active}`)?.scrollIntoView({ block: 'nearest' });
      }
    }
  }

  /** Forgets every field's choices (a close, or an app connected again): the next render reads anew. */
  reset(): void {
    for (const state of this.#fields.values()) {
      state.abort?.abort();
      clearTimeout(state.timer);
    }
    this.#fields.clear();
  }

  #update(state: FieldState, change: Partial<FieldState>): void {
    Object.assign(state, change);
    this.#host.requestUpdate();
  }

  /** Reads a page of choices: the first for `search`, or the one after those shown. */
  async #load(state: FieldState, search: string, more = false): Promise<void> {
    clearTimeout(state.timer);
    state.abort?.abort();
    const abort = new AbortController();
    this.#update(state, { abort, busy: true, failure: undefined, ...(more ? {} : { search }) });
    try {
      const page = await state.field.read(more ? { search, cursor: state.next! } : { search }, abort.signal);
      for (const option of page.options) labels.set(`${state.field.key}\n${option.value}`, option.label);
      const before = more ? state.options : [];
      this.#update(state, {
        options: [...before, ...page.options],
        next: page.next,
        loaded: true,
        // After "Load more" the first new option is where the arrow keys continue.
        active: more && page.options[0] ? before.length : more ? state.active : -1,
      });
    } catch (error) {
      if (abort.signal.aborted) return;
      const { type = '' } = error as ForgeApiError;
      this.#update(state, { failure: /(connection-refused|not-connected)$/.test(type) ? 'refused' : 'failed' });
    } finally {
      if (state.abort === abort) this.#update(state, { busy: false });
    }
  }

  #open(state: FieldState): void {
    this.#update(state, { open: true });
    if (!state.busy && (!state.loaded || state.failure)) void this.#load(state, state.search);
  }

  #close(state: FieldState): void {
    this.#update(state, { open: false, active: -1, text: undefined });
  }

  #choose(state: FieldState, option: VariableOption): void {
    state.field.choose(String(option.value));
    this.#close(state);
  }

  #more(state: FieldState): void {
    this.#host.renderRoot.querySelector<HTMLElement>(`#${state.field.id}`)?.focus();
    state.open = true;
    void this.#load(state, state.search, true);
  }

  #handleInput(state: FieldState, text: string): void {
    state.field.choose(text);
    clearTimeout(state.timer);
    // What an earlier search answers is of no use now: it must not land under the new text.
    state.abort?.abort();
    this.#update(state, {
      text,
      open: true,
      active: -1,
      busy: true,
      abort: undefined,
      timer: setTimeout(() => void this.#load(state, text.trim()), SEARCH_DELAY_MS),
    });
  }

  #handleKey(state: FieldState, event: KeyboardEvent): void {
    const { open, options, active, next } = state;
    const last = options.length - 1;
    let to: number | undefined;
    switch (event.key) {
      case 'ArrowDown':
        // Alt+Down opens the list and leaves the focus in the text.
        if (!open) to = event.altKey ? -1 : 0;
        else if (active < last) to = active + 1;
        else if (next && !state.busy) {
          // Past the last choice, the app's next page (as "Load more" does).
          event.preventDefault();
          this.#more(state);
          return;
        } else to = 0;
        break;
      case 'ArrowUp':
        to = !open || active <= 0 ? last : active - 1;
        break;
      case 'Enter':
        if (!open) return;
        // Enter in an open list never submits the form under it.
        event.preventDefault();
        if (options[active]) this.#choose(state, options[active]);
        else this.#close(state);
        return;
      case 'Escape':
        // Inside the modal's dialog: an Escape that closes the list must not close the dialog too.
        // With the list closed the dialog has the key: the APG's optional "Escape empties the
        // box" would, in a dialog, wipe a saved setting where the user meant to leave.
        if (!open) return;
        this.#close(state);
        event.preventDefault();
        event.stopPropagation();
        return;
      case 'Home':
      case 'End':
        // The caret moves in the text as usual; the visual focus returns to the text box.
        if (open) this.#update(state, { active: -1 });
        return;
      default:
        return;
    }
    event.preventDefault();
    if (!open) this.#open(state);
    // Nothing to point at before the first page has arrived.
    this.#update(state, { active: to <= last ? Math.max(-1, to) : -1 });
  }

  /** The combobox, its list of choices, and what it says while it loads, finds nothing or fails. */
  render(field: ChoiceField): TemplateResult {
    let state = this.#fields.get(field.key);
    if (!state) {
      state = { field, open: false, search: '', options: [], loaded: false, busy: false, active: -1 };
      this.#fields.set(field.key, state);
      // Read at once, not at the first key press: the chosen value's label, a connection the
      // app refuses, and the list shown without a wait. After this render, not during it.
      const first = state;
      queueMicrotask(() => {
        if (this.#fields.get(field.key) === first) void this.#load(first, '');
      });
    }
    state.field = field;
    const s = state;
    const { id, t, key, value, appName } = field;
    const { open, options, active, busy, failure } = s;
    let status: unknown = '';
    if (failure) status = html`${alertGlyph}${(failure === 'refused' ? t.choicesRefused : t.choicesFailed)(appName)}`;
    else if (open && busy) status = html`${spinner}${t.choicesLoading}`;
    else if (open && s.loaded && !options[0]) status = t.noChoices;
    return html`<div
      class="choices"
      @focusout=${({ currentTarget, relatedTarget }: FocusEvent) => {
        // Focus moving to the field's own buttons keeps the list open.
        if (!(currentTarget as Element).contains(relatedTarget as Node | null)) this.#close(s);
      }}
    >
      <input
        part="input"
        class="input"
        id=${id}
        type="text"
        role="combobox"
        autocomplete="off"
        spellcheck="false"
        aria-autocomplete="list"
        aria-expanded=${open}
        aria-controls="${id}-list"
        aria-activedescendant=${open && active >= 0 ? `${id}-${active}` : nothing}
        aria-invalid=${field.invalid}
        aria-describedby=${field.describedBy}
        ?required=${field.required}
        ?autofocus=${field.autofocus}
        .value=${s.text ?? labelOf(key, value) ?? value}
        @input=${({ target }: Event) => this.#handleInput(s, (target as HTMLInputElement).value)}
        @keydown=${(event: KeyboardEvent) => this.#handleKey(s, event)}
        @click=${() => (s.open ? this.#close(s) : this.#open(s))}
      />
      <ul
        class="choices-list"
        id="${id}-list"
        role="listbox"
        aria-labelledby="${id}-label"
        aria-busy=${s.busy}
        ?hidden=${!open || !options[0]}
      >
        ${options.map(
          (option, i) => html`<li
            id="${id}-${i}"
            role="option"
            class=${String(option.value) === value ? 'chosen' : ''}
            aria-selected=${i === active}
            @mousedown=${(event: Event) => event.preventDefault()}
            @click=${() => this.#choose(s, option)}
          >
            ${option.label}
          </li>`,
        )}
      </ul>
      <p class="choices-status ${failure ? 'danger' : 'muted'}" role="status">${status}</p>
      ${
        failure
          ? html`<button
              type="button"
              class="button"
              @click=${() => (failure === 'refused' ? field.reconnect() : void this.#load(s, s.search))}
            >
              ${failure === 'refused' ? t.reconnectApp(appName) : t.retry}
            </button>`
          : open && s.next && !busy
            ? // Out of the Tab order, as the list is (APG): the keys reach the next page past the last choice.
              html`<button
                type="button"
                class="button"
                tabindex="-1"
                @mousedown=${(event: Event) => event.preventDefault()}
                @click=${() => this.#more(s)}
              >
                ${t.loadMore}
              </button>`
            : nothing
      }
    </div>`;
  }
}
