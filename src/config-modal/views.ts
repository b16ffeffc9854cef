import { html, nothing, type TemplateResult } from 'lit';
import type { Integration, OptionsPage, OptionsQuery } from '../api/types.js';
import type { HideReason } from '../events.js';
import { plainWords, technicalDetails } from '../internal/problem.js';
import type { Choices } from './choices.js';
import { secretParameter } from './connect.js';
import { type SettingField, settingFields, variableBlocks } from './settings.js';
import {
  chosen,
  type FocusTarget,
  type Loaded,
  missing,
  parameterKey,
  type Step,
  stepAfterChoosing,
  stepsOf,
  toConnect,
  type View,
} from './state.js';
import type { ConfigModalStrings } from './strings.js';
import { alertGlyph, checkGlyph, closeGlyph, iconImage, layout, spinner } from './templates.js';

/**
 * Marks with `autofocus` the one element focus moves to after this render: the first that
 * offers the wanted target, in document order, else the step's main button (rendered after
 * the body, so it is asked last).
 */
export class FocusMark {
  #want: FocusTarget | undefined;

  constructor(want: FocusTarget | undefined) {
    this.#want = want;
  }

  /** Whether the element offering `targets` takes focus; the main button offers `primary`. */
  at(...targets: FocusTarget[]): boolean {
    const want = this.#want;
    if (!want || !(targets.includes(want) || targets.includes('primary'))) return false;
    this.#want = undefined;
    return true;
  }
}

/** What the user can do in a step; the element answers each. */
export interface StepActions {
  close(reason: HideReason): void;
  goTo(step: Step): void;
  select(parentId: string, on: boolean): void;
  continueFromConnect(): void;
  /** Opens the integration's sign-in window, or while it is open, stops waiting for it (Cancel). */
  connectOAuth(integration: Integration): void;
  disconnect(integration: Integration): void;
  toggleForm(name: string): void;
  submitParameters(event: SubmitEvent, integration: Integration): void;
  setValue(key: string, value: string): void;
  /** A page of a setting's choices from the user's app. */
  options(
    field: SettingField,
    query: Pick<OptionsQuery, 'search' | 'cursor'>,
    signal: AbortSignal,
  ): Promise<OptionsPage>;
  /** The app of a setting's choices refused the connection: to the connect step, to connect it again. */
  reconnect(integration: string): void;
  save(event: Event): void;
  retryLoad(): void;
}

/** Everything a step's view reads: it renders from this alone. */
export interface StepContext {
  t: ConfigModalStrings;
  loaded: Loaded;
  view: View;
  saving: boolean;
  /** A connect run is under way for `view.connecting`. */
  connectBusy: boolean;
  /** A disconnect is under way for `view.connecting` (its confirmation included). */
  disconnectBusy: boolean;
  focus: FocusMark;
  on: StepActions;
  /** `A, B and C` in the element's locale. */
  list: (items: string[]) => string;
  /** The combobox of settings whose choices come from the app; loaded when the open has such a setting. */
  choices: Choices | undefined;
}

/** The header's title, subtitle and icons: what is being set up, once it is known. */
export function header(t: ConfigModalStrings, loaded: Loaded | undefined, close: () => void) {
  let title = t.titleLoading;
  let subtitle: string | undefined;
  if (loaded?.integration) {
    title = t.titleIntegration(loaded.integration.displayName);
    subtitle = t.subtitleIntegration;
  } else if (loaded) {
    const { name, description, workflowId } = loaded.workflows[0]!;
    const install = loaded.mode === 'install';
    title = (install ? t.titleInstall : t.titleEdit)(name);
    subtitle = install
      ? description || t.subtitleInstall
      : loaded.installed.get(workflowId)?.active === false
        ? t.subtitleEditInactive
        : t.subtitleEdit;
  }
  const content = html`<header part="header" class="header">
    ${
      loaded
        ? html`<div class="header-icons">
            ${(loaded.integration ? [loaded.integration] : loaded.workflows[0]!.integrations)
              .slice(0, 3)
              .map((i) => iconImage(i.icon))}
          </div>`
        : nothing
    }
    <div class="heading">
      <h2 part="title" id="title">${title}</h2>
      ${subtitle ? html`<p part="subtitle" id="subtitle" class="muted">${subtitle}</p>` : nothing}
    </div>
    <button part="close-button" class="close" aria-label=${t.close} @click=${close}>${closeGlyph}</button>
  </header>`;
  return { content, described: !!subtitle };
}

export const loadingView = (t: ConfigModalStrings) =>
  layout(html`<div class="loading muted" role="status">${spinner}${t.loading}</div>`, undefined, true);

export function loadErrorView(t: ConfigModalStrings, error: Error, focus: FocusMark, on: StepActions) {
  return layout(
    html`<div part="message" class="message" role="alert">
      ${alertGlyph}
      <div>
        <p class="message-title">${t.loadFailed}</p>
        <p>${plainWords(t, error)}</p>
        ${technicalDetails(t, error)}
      </div>
    </div>`,
    html`<button class="button" @click=${() => on.close('button')}>${t.close}</button>
      <button class="button primary" ?autofocus=${focus.at('primary')} @click=${on.retryLoad}>${t.retry}</button>`,
  );
}

export function doneView({ t, loaded, view, focus, on, list }: StepContext) {
  const names = list(chosen(loaded, view).map((parent) => parent.name));
  // Saving the integration view with every workflow off is no success to celebrate: say what is so.
  const none = !names && loaded.integration;
  const title = none
    ? t.nothingOn
    : { install: t.successInstall, edit: t.successEdit, integration: t.successIntegration }[loaded.mode];
  return layout(
    html`<div class="success" role="status">
      ${none ? nothing : html`<span class="success-mark">${checkGlyph}</span>`}
      <h3>${title}</h3>
      ${
        none
          ? html`<p class="muted">${t.nothingOnText(loaded.integration!.displayName)}</p>`
          : names
            ? html`<p class="muted">${t.successText(names)}</p>`
            : nothing
      }
      <slot name="success"></slot>
    </div>`,
    html`<button class="button primary" ?autofocus=${focus.at('primary')} @click=${() => on.close('done')}>
      ${t.done}
    </button>`,
  );
}

/** The list of steps and the step's intro, above its content. */
function intro({ t, loaded, view }: StepContext, text: string) {
  const steps = stepsOf(loaded, view);
  const current = steps.indexOf(view.step);
  const names = { choose: t.stepChoose, connect: t.stepConnect, configure: t.stepConfigure };
  const stepList = steps[1]
    ? html`<ol part="steps" class="steps" aria-label=${t.stepsLabel}>
        ${steps.map(
          (step, i) =>
            html`<li class=${i < current ? 'past' : ''} aria-current=${i === current ? 'step' : nothing}>
              ${names[step as keyof typeof names]}
            </li>`,
        )}
      </ol>`
    : nothing;
  return html`${stepList}<p class="intro muted">${text}</p>`;
}

function back({ t, loaded, view, on }: StepContext) {
  const steps = stepsOf(loaded, view);
  const previous = steps[steps.indexOf(view.step) - 1];
  return previous ? html`<button class="button" @click=${() => on.goTo(previous)}>${t.back}</button>` : nothing;
}

const stepMessage = ({ t, view }: StepContext) =>
  view.message
    ? html`<div part="message" class="message" role="alert">
        ${alertGlyph}
        <div>
          <p>${view.message}</p>
          ${view.technical ? technicalDetails(t, { message: view.technical }) : nothing}
        </div>
      </div>`
    : nothing;

export function chooseView(context: StepContext) {
  const { t, loaded, view, focus, on } = context;
  const name = loaded.integration!.displayName;
  if (!loaded.workflows[0]) {
    return layout(
      html`<p class="empty muted">${t.noWorkflows(name)}</p>`,
      html`<button class="button primary" ?autofocus=${focus.at('primary')} @click=${() => on.close('button')}>
        ${t.close}
      </button>`,
    );
  }
  return layout(
    html`${intro(context, t.chooseIntro(name))}
      <ul class="rows" role="list">
        ${loaded.workflows.map(
          ({ workflowId, name, description }, i) => html`<li part="workflow" class="row">
            <label class="row-head">
              <span class="row-text">
                <span class="row-name" id="workflow-${i}">${name}</span>
                ${description ? html`<span class="help muted" id="workflow-${i}-help">${description}</span>` : nothing}
              </span>
              <input
                part="switch"
                class="switch"
                type="checkbox"
                role="switch"
                aria-labelledby="workflow-${i}"
                aria-describedby=${description ? `workflow-${i}-help` : nothing}
                ?autofocus=${focus.at('body')}
                .checked=${view.selected.has(workflowId)}
                @change=${({ target }: Event) => on.select(workflowId, (target as HTMLInputElement).checked)}
              />
            </label>
          </li>`,
        )}
      </ul>`,
    html`<button
      class="button primary"
      ?autofocus=${focus.at('primary')}
      @click=${() => on.goTo(stepAfterChoosing(loaded, view))}
    >
      ${t.continue}
    </button>`,
  );
}

export function connectView(context: StepContext) {
  const { t, loaded, view, focus, on } = context;
  const fieldIds = fieldNumbering();
  const body = html`${intro(context, t.connectIntro)}
    <ul class="rows" role="list">
      ${toConnect(loaded, view).map((integration, i) => integrationRow(context, integration, `integration-${i}`, fieldIds))}
    </ul>
    ${stepMessage(context)}`;
  return layout(
    body,
    html`${back(context)}
      <button
        class="button ${missing(loaded, view)[0] ? '' : 'primary'}"
        ?autofocus=${focus.at('primary')}
        @click=${on.continueFromConnect}
      >
        ${t.continue}
      </button>`,
  );
}

/** The connect step's row for one integration: its state, its action, and its parameters' form. */
function integrationRow(context: StepContext, integration: Integration, id: string, fieldIds: () => string) {
  const { t, loaded, view, connectBusy, disconnectBusy, focus, on } = context;
  const { name, displayName } = integration;
  const parameters = integration.requiredParameters ?? [];
  const connected = loaded.connected.has(name);
  // Stored, but not usable: the app refused it (or the list opened this to reconnect it).
  const connection = loaded.connections.get(name);
  const broken = !!connection && !connected;
  const busy = connectBusy && view.connecting === name;
  const disconnecting = disconnectBusy && view.connecting === name;
  const failure = view.errors.get(name);
  const formOpen = parameters[0] && (!connected || view.reopened.has(name));
  let action: unknown = nothing;
  if (!parameters[0]) {
    // While its sign-in window is open the button cancels the wait (connectOAuth knows).
    action = html`<button
      class="button ${connected ? '' : 'tonal'}"
      aria-describedby="${id}-name ${id}-status"
      ?autofocus=${focus.at('body')}
      @click=${() => on.connectOAuth(integration)}
    >
      ${busy ? t.cancel : failure ? t.retry : connection ? t.reconnect : t.connect}
    </button>`;
  } else if (connected) {
    action = html`<button
      class="button"
      aria-describedby="${id}-name"
      aria-expanded=${!!formOpen}
      ?autofocus=${focus.at('body')}
      @click=${() => on.toggleForm(name)}
    >
      ${formOpen ? t.cancel : t.reconnect}
    </button>`;
  }
  return html`<li part="integration" class="row integration">
    <div class="row-head">
      ${iconImage(integration.icon)}
      <span class="row-text">
        <span class="row-name" id="${id}-name">${displayName}</span>
        <span class="status ${connected ? 'connected' : broken ? 'danger' : 'muted'}" id="${id}-status">
          ${busy ? nothing : connected ? checkGlyph : broken ? alertGlyph : nothing}
          ${
            busy && !parameters[0]
              ? t.waitingForPopup(displayName)
              : connected
                ? connection?.account
                  ? t.connectedAs(connection.account)
                  : t.connected
                : broken
                  ? t.broken
                  : t.notConnected
          }
        </span>
      </span>
      <span class="row-actions">
        ${action}
        ${
          connection
            ? html`<button
                class="button"
                aria-describedby="${id}-name"
                aria-disabled=${disconnecting}
                @click=${() => on.disconnect(integration)}
              >
                ${disconnecting ? spinner : nothing} ${t.disconnect}
              </button>`
            : nothing
        }
      </span>
    </div>
    ${
      formOpen
        ? html`<form class="parameters" novalidate @submit=${(event: SubmitEvent) => on.submitParameters(event, integration)}>
            ${parameters.map((p) =>
              field(
                context,
                fieldIds(),
                parameterKey(name, p.name),
                p.displayName,
                p.description,
                secretParameter(p.name) ? 'password' : 'text',
              ),
            )}
            <button class="button tonal" type="submit" aria-describedby="${id}-name" aria-disabled=${busy}>
              ${busy ? html`${spinner}${t.saving}` : t.saveParameters}
            </button>
          </form>`
        : nothing
    }
    ${failure ? html`<p class="row-error danger" role="alert">${alertGlyph}<span>${failure}</span></p>` : nothing}
    ${
      view.rowNote?.[0] === name
        ? html`<p class="row-error danger" role="alert">${alertGlyph}<span>${view.rowNote[1]}</span></p>`
        : nothing
    }
  </li>`;
}

export function configureView(context: StepContext) {
  const { t, loaded, view, saving, focus, on } = context;
  const fieldIds = fieldNumbering();
  let fieldCount = 0;
  const fieldOf = (f: SettingField) => {
    fieldCount++;
    return settingField(context, fieldIds(), f);
  };
  const sections = chosen(loaded, view).map((parent) => {
    const fields = settingFields(parent);
    const blocks = variableBlocks(parent.blocks);
    return html`<section>
      ${loaded.integration ? html`<h3 class="section-title">${parent.name}</h3>` : nothing}
      ${
        // Several blocks are told apart by their names; a single one needs no heading of its own.
        blocks[1]
          ? blocks.map(
              (block) => html`<fieldset part="block" class="block">
                <legend class="muted">${block.name}</legend>
                ${fields.filter((f) => f.block === block.id).map(fieldOf)}
              </fieldset>`,
            )
          : html`<div part="block" class="block">${fields.map(fieldOf)}</div>`
      }
    </section>`;
  });
  return layout(
    html`${intro(context, fieldCount ? t.configureIntro : t.noSettings)} ${stepMessage(context)}
      <form id="settings" aria-label=${t.stepConfigure} novalidate @submit=${on.save}>${sections}</form>`,
    html`${back(context)}
      <button
        class="button primary"
        type="submit"
        form="settings"
        aria-disabled=${saving}
        ?autofocus=${focus.at('primary')}
      >
        ${saving ? html`${spinner}${t.saving}` : { install: t.enable, edit: t.saveChanges, integration: t.apply }[loaded.mode]}
      </button>`,
    saving,
  );
}

/** Ids for the fields of one render. */
function fieldNumbering(): () => string {
  let count = 0;
  return () => `field-${count++}`;
}

/** The input types of a setting's type; the others have controls of their own (settingField). */
const INPUT_TYPES: Record<string, string> = { number: 'number', email: 'email', url: 'url' };

/**
 * A setting's control, as its type says: a switch for a boolean, a native `<select>` for fixed
 * choices, a textarea for `text`, an input of the matching type for the rest. What the user
 * chose is kept as text (a switch's as `true`/`false`); the shared rules read it on save.
 */
function settingField(context: StepContext, id: string, f: SettingField): TemplateResult {
  const { view, on } = context;
  const { key, variable } = f;
  const value = view.values.get(key) ?? '';
  const set = ({ target }: Event) => on.setValue(key, (target as HTMLInputElement).value);
  const a = controlAttributes(context, id, key, f.description);
  let control: TemplateResult;
  const source = variable.source?.integration;
  if (source && context.choices) {
    control = context.choices.render({
      key,
      id,
      value,
      required: !!variable.required,
      ...a,
      appName:
        context.loaded.workflows.flatMap((w) => w.integrations).find((i) => i.name === source)?.displayName ?? source,
      t: context.t,
      read: (query, signal) => on.options(f, query, signal),
      choose: (chosen) => on.setValue(key, chosen),
      reconnect: () => on.reconnect(source),
    });
  } else if (variable.type === 'boolean') {
    control = html`<input
      part="switch"
      class="switch"
      type="checkbox"
      role="switch"
      id=${id}
      aria-describedby=${a.describedBy}
      ?autofocus=${a.autofocus}
      .checked=${value === 'true'}
      @change=${({ target }: Event) => on.setValue(key, String((target as HTMLInputElement).checked))}
    />`;
  } else if (variable.options) {
    // A choice not made yet (or one that may stay unmade) is an empty first option.
    const blank = !variable.required || !variable.options.some((o) => String(o.value) === value);
    control = html`<select
      part="input"
      class="input"
      id=${id}
      ?required=${variable.required}
      aria-invalid=${a.invalid}
      aria-describedby=${a.describedBy}
      ?autofocus=${a.autofocus}
      @change=${set}
    >
      ${blank ? html`<option value="" ?selected=${value === ''}></option>` : nothing}
      ${variable.options.map(
        (o) => html`<option value=${String(o.value)} ?selected=${String(o.value) === value}>${o.label}</option>`,
      )}
    </select>`;
  } else if (variable.type === 'text') {
    control = html`<textarea
      part="input"
      class="input"
      id=${id}
      rows="3"
      ?required=${variable.required}
      .value=${value}
      aria-invalid=${a.invalid}
      aria-describedby=${a.describedBy}
      ?autofocus=${a.autofocus}
      @input=${set}
    ></textarea>`;
  } else {
    control = input(a, id, INPUT_TYPES[variable.type ?? ''] ?? 'text', value, set, variable.required);
  }
  return fieldFrame(context, id, key, f.label, f.description, control, {
    required: variable.required,
    inline: variable.type === 'boolean',
  });
}

interface ControlAttributes {
  invalid: boolean;
  describedBy: string | typeof nothing;
  autofocus: boolean;
}

/** What every control of a field carries: its error state, what describes it, and whether it takes focus. */
function controlAttributes(
  { view, focus }: StepContext,
  id: string,
  key: string,
  description: string | undefined,
): ControlAttributes {
  const error = view.errors.get(key);
  const describedBy = [description && `${id}-help`, error && `${id}-error`].filter(Boolean).join(' ');
  return {
    invalid: !!error,
    describedBy: describedBy || nothing,
    autofocus: focus.at('body', ...(error ? (['invalid'] as const) : [])),
  };
}

function input(
  a: ControlAttributes,
  id: string,
  type: string,
  value: string,
  onInput: (event: Event) => void,
  required = false,
): TemplateResult {
  return html`<input
    part="input"
    class="input"
    id=${id}
    type=${type}
    step=${type === 'number' ? 'any' : nothing}
    autocomplete="off"
    spellcheck="false"
    ?required=${required}
    .value=${value}
    aria-invalid=${a.invalid}
    aria-describedby=${a.describedBy}
    ?autofocus=${a.autofocus}
    @input=${onInput}
  />`;
}

/**
 * A control with its label, help text and, after a failed check or save, its error, both tied
 * to the control through `aria-describedby` so a screen reader reads them with the field. A
 * required field's label shows so; the control says it to assistive technology (`required`).
 */
function fieldFrame(
  { t, view }: StepContext,
  id: string,
  key: string,
  label: string,
  description: string | undefined,
  control: TemplateResult,
  { required = false, inline = false } = {},
): TemplateResult {
  const error = view.errors.get(key);
  return html`<div part="field" class="field${inline ? ' inline' : ''}">
    <label part="label" id="${id}-label" for=${id}
      >${label}${required ? html`<span class="required muted" aria-hidden="true">(${t.requiredMark})</span>` : nothing}</label
    >
    ${control}
    ${description ? html`<p part="help" class="help muted" id="${id}-help">${description}</p>` : nothing}
    ${error ? html`<p part="field-error" class="field-error danger" id="${id}-error">${alertGlyph}${error}</p>` : nothing}
  </div>`;
}

/** A labelled text input (the connect step's parameters). */
function field(
  context: StepContext,
  id: string,
  key: string,
  label: string,
  description: string | undefined,
  type: string,
): TemplateResult {
  const a = controlAttributes(context, id, key, description);
  const set = ({ target }: Event) => context.on.setValue(key, (target as HTMLInputElement).value);
  const control = input(a, id, type, context.view.values.get(key) ?? '', set);
  return fieldFrame(context, id, key, label, description, control);
}
