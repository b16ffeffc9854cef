import { css, html, nothing, type ReactiveController, type ReactiveControllerHost } from 'lit';

/** The texts of the confirmation before an app is disconnected. */
export interface DisconnectStrings {
  /** The button that asks to disconnect, and the dialog's button that does it. */
  disconnect: string;
  /** The dialog's button that keeps the connection (connect.ts has it). */
  cancel: string;
  disconnectTitle: (app: string) => string;
  /** When no workflow of the user's needs the app. */
  disconnectText: (app: string) => string;
  /** Before the list of the workflows that need the app, which the disconnect switches off. */
  disconnectSwitchesOff: (app: string) => string;
  /** Said when the service did not disconnect it; the connection stays as it was. */
  disconnectFailed: (app: string, reason: string) => string;
  /** Said after a disconnect the app could not be told about: the service forgot the account, the app may still allow it. */
  disconnectNotRevoked: (app: string) => string;
}

export const defaultDisconnectStrings: Omit<DisconnectStrings, 'cancel'> = {
  disconnect: 'Disconnect',
  disconnectTitle: (app) => `Disconnect ${app}?`,
  disconnectText: (app) => `No workflow of yours uses ${app} now. You can connect it again at any time.`,
  disconnectSwitchesOff: (app) => `These workflows need ${app}. Disconnecting switches them off:`,
  disconnectFailed: (app, reason) => `${app} was not disconnected. ${reason}`,
  disconnectNotRevoked: (app) =>
    `${app} is disconnected here, but ${app} could not be told to end the access. You can remove it in your ${app} account settings.`,
};

interface Question {
  app: string;
  workflows: string[];
  answer: (confirmed: boolean) => void;
  /** Where focus was when the question came: it goes back there after the answer. */
  opener: HTMLElement | undefined;
}

/** The element focus is in, through shadow roots. */
function focused(): HTMLElement | undefined {
  let active = document.activeElement;
  while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
  return (active as HTMLElement | null) ?? undefined;
}

/**
 * The confirmation before an app is disconnected: a native modal `<dialog>`, labelled by its
 * title and described by what it says, naming the workflows the disconnect switches off. Focus
 * starts on Cancel (the safe answer), Escape cancels, and focus returns to where it was. The
 * element renders `render()` in its template and adds `disconnectConfirmStyles` to its styles.
 */
export class DisconnectConfirm implements ReactiveController {
  readonly #host: ReactiveControllerHost & HTMLElement & { renderRoot: ParentNode };
  #question?: Question | undefined;

  constructor(host: ReactiveControllerHost & HTMLElement & { renderRoot: ParentNode }) {
    this.#host = host;
    host.addController(this);
  }

  /** Asks whether to disconnect `app`, which the `workflows` (their names) need; answers true for yes. */
  ask(app: string, workflows: string[]): Promise<boolean> {
    this.#question?.answer(false);
    return new Promise((answer) => {
      this.#question = { app, workflows, answer, opener: focused() };
      this.#host.requestUpdate();
    });
  }

  /** Answers an open question with no: for an element whose view the question belonged to has closed. */
  cancel(): void {
    this.#settle(false);
  }

  get #dialog(): HTMLDialogElement | null {
    return this.#host.renderRoot.querySelector('dialog[part~="confirm"]');
  }

  hostUpdated(): void {
    const dialog = this.#dialog;
    if (dialog && !dialog.open) dialog.showModal();
  }

  hostDisconnected(): void {
    this.#settle(false);
  }

  #settle(confirmed: boolean): void {
    const question = this.#question;
    if (!question) return;
    this.#question = undefined;
    this.#host.requestUpdate();
    question.answer(confirmed);
    if (question.opener?.isConnected) question.opener.focus();
  }

  readonly #handleClose = ({ target }: Event): void =>
    this.#settle((target as HTMLDialogElement).returnValue === 'disconnect');

  render(t: DisconnectStrings) {
    const question = this.#question;
    if (!question) return nothing;
    const { app, workflows } = question;
    return html`<dialog
      part="confirm"
      class="confirm"
      aria-labelledby="confirm-title"
      aria-describedby="confirm-text"
      @close=${this.#handleClose}
    >
      <form method="dialog">
        <h2 id="confirm-title" class="confirm-title">${t.disconnectTitle(app)}</h2>
        <div id="confirm-text">
          ${
            workflows[0]
              ? html`<p>${t.disconnectSwitchesOff(app)}</p>
                  <ul>
                    ${workflows.map((name) => html`<li>${name}</li>`)}
                  </ul>`
              : html`<p>${t.disconnectText(app)}</p>`
          }
        </div>
        <div class="confirm-actions">
          <button class="button" value="cancel" autofocus>${t.cancel}</button>
          <button class="button danger-button" value="disconnect">${t.disconnect}</button>
        </div>
      </form>
    </dialog>`;
  }
}

export const disconnectConfirmStyles = css`
  .confirm {
    width: min(26rem, calc(100vw - 2rem));
    padding: var(--_space);
    border: 1px solid var(--_border);
    border-radius: var(--_radius);
    background: var(--_surface);
    color: var(--_text);
  }
  .confirm::backdrop {
    background: var(--forge-color-backdrop, rgb(15 17 21 / 0.55));
  }
  .confirm form {
    display: grid;
    gap: 0.75rem;
  }
  .confirm-title {
    margin: 0;
    font-size: 1.125em;
  }
  .confirm ul {
    margin: 0.5rem 0 0;
    padding-inline-start: 1.25rem;
  }
  .confirm-actions {
    display: flex;
    flex-wrap: wrap;
    justify-content: flex-end;
    gap: 0.5rem;
  }
  .danger-button {
    border-color: var(--_danger);
    background: var(--_danger);
    color: var(--_surface);
  }
  .danger-button:hover {
    background: color-mix(in srgb, var(--_danger) 85%, var(--_text));
  }
`;
