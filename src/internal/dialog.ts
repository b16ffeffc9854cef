import { html, nothing, type PropertyDeclarations, type PropertyValues, type TemplateResult } from 'lit';
import { emit, type HideReason } from '../events.js';
import { ForgeElement } from './forge-element.js';

/**
 * The native-dialog half of `<forge-config-modal>`: `open`, `show()`/`hide()` and their
 * events, Escape and backdrop clicks through the cancelable `forge-hide`, focus returning to
 * where it was. Subclasses start an open's work in `sessionStarted()` (before the first frame
 * of it renders), stop it in `sessionEnded()`, and render their content in `renderDialog()`.
 */
export abstract class ForgeModalDialog extends ForgeElement {
  static override properties: PropertyDeclarations = {
    open: { type: Boolean, reflect: true },
    theme: { reflect: true },
  };

  /** Whether the modal is open. Prefer `show()` and `hide()`, which answer when the transition is over. */
  open = false;

  /** Pins the colour scheme; without it the modal follows `prefers-color-scheme`. */
  theme?: 'light' | 'dark';

  #returnFocusTo?: HTMLElement | undefined;
  /** Set by a close the user asked for, once `forge-hide` was not canceled. */
  #closeReason?: HideReason | undefined;
  #pointerDownOnBackdrop = false;
  /** An open's work has started and not yet been stopped by a close or a removal. */
  #inSession = false;
  /** `close` events still to come from our own `dialog.close()` calls (they are dispatched later). */
  #ownCloseEvents = 0;
  #showWaiters: Array<() => void> = [];
  #hideWaiters: Array<() => void> = [];

  protected abstract sessionStarted(): void;
  protected abstract sessionEnded(): void;

  protected get dialog(): HTMLDialogElement {
    return this.renderRoot?.querySelector('dialog') as HTMLDialogElement;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    // Reattached while open: the removal ended the session, so start again.
    if (this.open && this.hasUpdated) this.requestUpdate();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    if (!this.open) return;
    this.#endSession();
    // A removed dialog keeps its `open` attribute but leaves the top layer; closing it lets a
    // reattached element show it as a modal again.
    this.#closeDialogElement();
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    super.willUpdate(changed);
    if (this.open && !this.#inSession && this.isConnected) {
      this.#inSession = true;
      this.sessionStarted();
    }
  }

  protected override updated(changed: PropertyValues<this>): void {
    super.updated(changed);
    if (this.open && !this.dialog.open && this.isConnected) this.#openDialog();
    else if (!this.open && changed.get('open')) this.#closeDialog();
  }

  /** Opens the modal; settles after `forge-after-show`. */
  show(): Promise<void> {
    if (this.open && this.dialog?.open) return Promise.resolve();
    this.open = true;
    return new Promise((resolve) => this.#showWaiters.push(resolve));
  }

  /** Closes the modal, stopping any work under way; settles after `forge-after-hide`. */
  hide(): Promise<void> {
    if (!this.open) return Promise.resolve();
    this.open = false;
    return new Promise((resolve) => this.#hideWaiters.push(resolve));
  }

  /** A close the user asked for: the host may keep the modal open by canceling `forge-hide`. */
  protected requestClose(reason: HideReason): void {
    if (!emit(this, 'forge-hide', { reason }, { cancelable: true })) return;
    this.#closeReason = reason;
    this.open = false;
  }

  protected renderDialog(content: unknown, describedBy: string | undefined): TemplateResult {
    return html`<dialog
      part="dialog"
      aria-labelledby="title"
      aria-describedby=${describedBy ?? nothing}
      @cancel=${this.#handleCancel}
      @close=${this.#handleNativeClose}
      @pointerdown=${this.#handlePointerDown}
      @click=${this.#handleDialogClick}
    >
      ${content}
    </dialog>`;
  }

  #openDialog(): void {
    let active = document.activeElement;
    // Inside shadow roots too, so focus can return to a button in one.
    while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
    this.#returnFocusTo = active as HTMLElement;
    emit(this, 'forge-show', {});
    this.dialog.showModal();
    void this.updateComplete.then(() => {
      if (!this.open) return;
      emit(this, 'forge-after-show', {});
      settle(this.#showWaiters);
    });
  }

  #closeDialog(): void {
    const reason = this.#closeReason ?? 'method';
    this.#closeReason = undefined;
    if (reason === 'method') emit(this, 'forge-hide', { reason });
    this.#endSession();
    this.#closeDialogElement();
    emit(this, 'forge-after-hide', { reason });
    if (this.#returnFocusTo?.isConnected) this.#returnFocusTo.focus();
    this.#returnFocusTo = undefined;
    settle(this.#hideWaiters);
    settle(this.#showWaiters);
  }

  #endSession(): void {
    this.#inSession = false;
    this.sessionEnded();
  }

  #closeDialogElement(): void {
    if (!this.dialog.open) return;
    this.#ownCloseEvents++;
    this.dialog.close();
  }

  #handleCancel(event: Event): void {
    // Chrome makes `cancel` uncancelable when Escape comes twice without other input in
    // between (https://github.com/whatwg/html/issues/10046); the dialog then closes by itself
    // and `#handleNativeClose` takes over.
    if (!event.cancelable) return;
    event.preventDefault();
    this.requestClose('escape');
  }

  #handleNativeClose(): void {
    if (this.#ownCloseEvents > 0) {
      this.#ownCloseEvents--;
      return;
    }
    if (!this.open) return;
    if (!emit(this, 'forge-hide', { reason: 'escape' }, { cancelable: true })) {
      this.dialog.showModal();
      return;
    }
    this.#closeReason = 'escape';
    this.open = false;
  }

  #handlePointerDown(event: PointerEvent): void {
    this.#pointerDownOnBackdrop = this.#isBackdropEvent(event);
  }

  #handleDialogClick(event: MouseEvent): void {
    // A drag that starts in a field and ends outside must not close the modal.
    if (this.#pointerDownOnBackdrop && this.#isBackdropEvent(event)) this.requestClose('backdrop');
    this.#pointerDownOnBackdrop = false;
  }

  /** Clicks on the backdrop target the dialog itself, outside the box its content fills. */
  #isBackdropEvent({ target, clientX: x, clientY: y }: MouseEvent): boolean {
    const { left, right, top, bottom } = this.dialog.getBoundingClientRect();
    return target === this.dialog && (x < left || x > right || y < top || y > bottom);
  }
}

function settle(waiters: Array<() => void>): void {
  for (const resolve of waiters.splice(0)) resolve();
}
