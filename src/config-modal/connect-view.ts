import { html, nothing } from 'lit';
import type { Integration } from '../api/types.js';
import { integrationsToConnect, parameterKey, selectedWorkflows } from './setup.js';
import { alertGlyph, checkGlyph, iconImage, layout, renderField, spinner } from './templates.js';
import { renderStepMessage, renderSteps, type StepView } from './views.js';

/** Keys and secrets are masked; other parameters (a server prefix) are easier to check when visible. */
const SECRET_NAME = /key|secret|token|password/i;

/** The connect step: one row per integration that needs an account. */
export function renderConnect(view: StepView) {
  const { text, setup, selected, connected, on } = view;
  const integrations = integrationsToConnect(selectedWorkflows(setup, selected));
  const allConnected = integrations.every((i) => connected.has(i.name));
  return layout(
    html`${renderSteps(view)}
      <p class="intro">${text.connectIntro}</p>
      <ul class="rows" role="list">
        ${integrations.map((integration, i) => renderIntegration(view, integration, `integration-${i}`))}
      </ul>
      ${renderStepMessage(view)}`,
    html`${setup.integration ? html`<button class="button" @click=${() => on.goTo('choose')}>${text.back}</button>` : nothing}
      <button class="button ${allConnected ? 'primary' : ''}" @click=${() => on.continueFromConnect()}>
        ${text.continue}
      </button>`,
  );
}

function renderIntegration(view: StepView, integration: Integration, id: string) {
  const { text, on } = view;
  const name = integration.displayName;
  const connected = view.connected.has(integration.name);
  const busy = view.connecting === integration.name;
  const failure = view.connectFailure?.integration === integration.name ? view.connectFailure.message : undefined;
  const hasParameters = (integration.requiredParameters?.length ?? 0) > 0;
  const formOpen = hasParameters && (!connected || view.reconnecting.has(integration.name));
  const status = busy && !hasParameters ? text.waitingForPopup(name) : connected ? text.connected : text.notConnected;
  let action: unknown = nothing;
  if (!hasParameters) {
    action = html`<button
      class="button ${connected ? '' : 'tonal'}"
      aria-describedby="${id}-name ${id}-status"
      aria-disabled=${busy ? 'true' : 'false'}
      @click=${() => on.connectOAuth(integration)}
    >
      ${busy ? spinner : nothing} ${failure ? text.retry : connected ? text.reconnect : text.connect}
    </button>`;
  } else if (connected) {
    action = html`<button
      class="button"
      aria-describedby="${id}-name"
      aria-expanded=${formOpen ? 'true' : 'false'}
      @click=${() => on.toggleReconnect(integration.name)}
    >
      ${formOpen ? text.cancel : text.reconnect}
    </button>`;
  }
  return html`<li part="integration" class="row integration">
    <div class="row-head">
      ${iconImage(integration.icon)}
      <span class="row-text">
        <span class="row-name" id="${id}-name">${name}</span>
        <span class="status ${connected ? 'connected' : ''}" id="${id}-status">
          ${connected && !busy ? checkGlyph : nothing}${status}
        </span>
      </span>
      ${action}
    </div>
    ${formOpen ? renderParameterForm(view, integration, id, busy) : nothing}
    ${failure ? html`<p class="row-error" role="alert">${alertGlyph}<span>${failure}</span></p>` : nothing}
  </li>`;
}

function renderParameterForm(view: StepView, integration: Integration, id: string, busy: boolean) {
  const { text, on } = view;
  return html`<form
    class="parameters"
    novalidate
    @submit=${(event: SubmitEvent) => on.submitParameters(event, integration)}
  >
    ${(integration.requiredParameters ?? []).map((parameter, i) => {
      const key = parameterKey(integration.name, parameter.name);
      return renderField({
        id: `${id}-parameter-${i}`,
        label: parameter.displayName,
        description: parameter.description,
        error: view.fieldErrors.get(key),
        value: view.parameters.get(key) ?? '',
        type: SECRET_NAME.test(parameter.name) ? 'password' : 'text',
        onInput: (value) => on.setParameter(key, value),
      });
    })}
    <div class="form-actions">
      <button class="button tonal" type="submit" aria-describedby="${id}-name" aria-disabled=${busy ? 'true' : 'false'}>
        ${busy ? html`${spinner}${text.saving}` : text.saveParameters}
      </button>
    </div>
  </form>`;
}
