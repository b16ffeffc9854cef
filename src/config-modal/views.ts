import { html, nothing } from 'lit';
import { ifDefined } from 'lit/directives/if-defined.js';
import { live } from 'lit/directives/live.js';
import type { Integration } from '../api/types.js';
import type { HideReason } from '../events.js';
import { type SettingField, settingFields, variableBlocks } from './settings.js';
import { type Mode, type Setup, type Step, selectedWorkflows } from './setup.js';
import type { ConfigModalStrings } from './strings.js';
import { alertGlyph, checkGlyph, layout, renderField, spinner } from './templates.js';

/** What the step views show, and what they call back; the element builds one per render. */
export interface StepView {
  text: ConfigModalStrings;
  setup: Setup;
  mode: Mode;
  step: Step;
  /** The steps of this open, in order. */
  steps: Step[];
  selected: ReadonlySet<string>;
  connected: ReadonlySet<string>;
  values: ReadonlyMap<string, string>;
  parameters: ReadonlyMap<string, string>;
  fieldErrors: ReadonlyMap<string, string>;
  /** Connected required-parameter integrations whose form is open again. */
  reconnecting: ReadonlySet<string>;
  stepMessage?: string | undefined;
  connectFailure?: { integration: string; message: string } | undefined;
  /** The integration being connected right now. */
  connecting?: string | undefined;
  saving: boolean;
  on: StepActions;
}

export interface StepActions {
  close(reason: HideReason): void;
  goTo(step: Step): void;
  continueFromChoose(): void;
  continueFromConnect(): void;
  toggleWorkflow(parentId: string, on: boolean): void;
  connectOAuth(integration: Integration): void;
  submitParameters(event: SubmitEvent, integration: Integration): void;
  toggleReconnect(integration: string): void;
  setParameter(key: string, value: string): void;
  setValue(key: string, value: string): void;
  save(event: Event): void;
}

export function renderSteps({ steps, step, text }: StepView) {
  if (steps.length < 2) return nothing;
  const names = { choose: text.stepChoose, connect: text.stepConnect, configure: text.stepConfigure, done: '' };
  const current = steps.indexOf(step);
  return html`<ol part="steps" class="steps" aria-label=${text.stepsLabel}>
    ${steps.map(
      (s, i) =>
        html`<li class=${i < current ? 'past' : ''} aria-current=${ifDefined(i === current ? 'step' : undefined)}>
          ${names[s]}
        </li>`,
    )}
  </ol>`;
}

/** The message about the whole step, if there is one. */
export function renderStepMessage({ stepMessage }: StepView) {
  return stepMessage
    ? html`<div part="message" class="message error" role="alert">${alertGlyph}<p>${stepMessage}</p></div>`
    : nothing;
}

export function renderChoose(view: StepView) {
  const { text, setup, selected, on } = view;
  const name = setup.integration!.displayName;
  if (setup.workflows.length === 0) {
    return layout(
      html`<p class="empty">${text.noWorkflows(name)}</p>`,
      html`<button class="button primary" @click=${() => on.close('button')}>${text.close}</button>`,
    );
  }
  return layout(
    html`${renderSteps(view)}
      <p class="intro">${text.chooseIntro(name)}</p>
      <ul class="rows" role="list">
        ${setup.workflows.map(
          ({ parent }, i) => html`<li part="workflow" class="row">
            <label class="workflow">
              <span class="row-text">
                <span class="row-name" id="workflow-${i}">${parent.name}</span>
                ${parent.description ? html`<span class="help" id="workflow-${i}-help">${parent.description}</span>` : nothing}
              </span>
              <input
                part="switch"
                class="switch"
                type="checkbox"
                role="switch"
                aria-labelledby="workflow-${i}"
                aria-describedby=${ifDefined(parent.description ? `workflow-${i}-help` : undefined)}
                .checked=${live(selected.has(parent.workflowId))}
                @change=${(event: Event) => on.toggleWorkflow(parent.workflowId, (event.target as HTMLInputElement).checked)}
              />
            </label>
          </li>`,
        )}
      </ul>`,
    html`<button class="button primary" @click=${() => on.continueFromChoose()}>${text.continue}</button>`,
  );
}

export function renderConfigure(view: StepView) {
  const { text, setup, selected, steps, mode, saving, on } = view;
  const previous = steps[steps.indexOf('configure') - 1];
  let index = 0;
  const field = (setting: SettingField) =>
    renderField({
      id: `field-${index++}`,
      label: setting.label,
      description: setting.description,
      error: view.fieldErrors.get(setting.key),
      value: view.values.get(setting.key) ?? '',
      type: setting.numeric ? 'number' : 'text',
      onInput: (value) => on.setValue(setting.key, value),
    });
  const sections = selectedWorkflows(setup, selected).map(({ parent }) => {
    const fields = settingFields(parent);
    const blocks = variableBlocks(parent.blocks);
    // Several blocks are told apart by their names; a single one needs no heading of its own.
    const content =
      blocks.length > 1
        ? blocks.map(
            (block) => html`<fieldset part="block" class="block">
              <legend>${block.name}</legend>
              ${fields.filter((f) => f.blockId === block.id).map(field)}
            </fieldset>`,
          )
        : html`<div part="block" class="block">${fields.map(field)}</div>`;
    return html`<section>
      ${setup.integration ? html`<h3 class="section-title">${parent.name}</h3>` : nothing}${content}
    </section>`;
  });
  const label = mode === 'install' ? text.enable : mode === 'edit' ? text.saveChanges : text.apply;
  return layout(
    html`${renderSteps(view)}
      <p class="intro">${index === 0 ? text.noSettings : text.configureIntro}</p>
      ${renderStepMessage(view)}
      <form id="settings" class="settings" novalidate @submit=${(event: Event) => on.save(event)}>${sections}</form>`,
    html`${previous ? html`<button class="button" @click=${() => on.goTo(previous)}>${text.back}</button>` : nothing}
      <button class="button primary" type="submit" form="settings" aria-disabled=${saving ? 'true' : 'false'}>
        ${saving ? html`${spinner}${text.saving}` : label}
      </button>`,
    { busy: saving },
  );
}

export function renderDone({ text, setup, selected, mode, on }: StepView) {
  const names = selectedWorkflows(setup, selected)
    .map((w) => w.parent.name)
    .join(', ');
  const title = mode === 'install' ? text.successInstall : mode === 'edit' ? text.successEdit : text.successIntegration;
  return layout(
    html`<div class="success" role="status">
      <span class="success-mark">${checkGlyph}</span>
      <h3 class="success-title">${title}</h3>
      ${names ? html`<p>${text.successText(names)}</p>` : nothing}
      <slot name="success"></slot>
    </div>`,
    html`<button class="button primary" @click=${() => on.close('done')}>${text.done}</button>`,
  );
}
