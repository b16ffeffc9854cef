import { expect, fixture, html } from '@open-wc/testing';
import { ForgeClient } from '../../src/api/index.js';
import type { ForgeConfigModal } from '../../src/config-modal/config-modal.js';
import '../../src/config-modal/define.js';
import { configModalEvents, type ForgeEventName } from '../../src/events.js';
import { allByPart, byPart, byRole, Harness } from './harness.js';

export { allByPart, allByRole, byPart, byRole, Harness } from './harness.js';

import {
  authorizeOAuth,
  createUser,
  hostApi,
  serviceInfo,
  TYPED_WORKFLOW,
  tokenUrl,
  typedUser,
  userToken,
} from './forge.js';

/** Demo catalog workflows (server/catalog/demo.json). */
export const STRIPE_TO_SLACK = '64b14ff1704e5bc1057506db';
export const HUBSPOT_TO_SLACK = '64b1d6aac655b8a937b7db20';
export const STRIPE_SUMMARY_TO_SLACK = '64b1aa96c495decefd1bbaa5';
/** The variables blocks of STRIPE_TO_SLACK and of HUBSPOT_TO_SLACK. */
export const SETTINGS_BLOCK = '5364f548-790c-4f1d-92dd-633c040ea16d';
export const HUBSPOT_SETTINGS_BLOCK = '549587b4-6b90-4ddd-b5f8-4c92d085d839';

/** Values a user would type for the catalog's required-parameter integrations. */
const PARAMETERS: Record<string, Record<string, string>> = {
  stripe: { secretKey: 'sk_test_123' },
  mailchimp: { apiKey: 'mc-key', serverPrefix: 'us21' },
};

/** Connects accounts for a user the way the modal would, without the modal (setup for other tests). */
export async function connectAccounts(userId: string, integrations: string[]): Promise<void> {
  const { apiBase } = await serviceInfo();
  const client = new ForgeClient({ baseUrl: apiBase, credential: await userToken(userId) });
  for (const name of integrations) {
    if (PARAMETERS[name]) await client.saveCredential(name, PARAMETERS[name]);
    else await client.confirmOAuth(name, await authorizeOAuth((await client.startOAuth(name)).url));
  }
}

/** Installs a workflow for a user without the modal; answers the child's id. */
export async function install(
  userId: string,
  parentId: string,
  variables?: Record<string, Record<string, string | number>>,
) {
  const { apiBase } = await serviceInfo();
  const client = new ForgeClient({ baseUrl: apiBase, credential: await userToken(userId) });
  return (await client.installWorkflow(parentId, variables ? { variables } : {})).workflowId;
}

/** A new user with Stripe and Slack connected: a STRIPE_TO_SLACK modal opens straight on the settings. */
export async function connectedUser(): Promise<string> {
  const userId = await createUser();
  await connectAccounts(userId, ['stripe', 'slack']);
  return userId;
}

interface UserBody {
  workflows: Array<{ _id: string; parentId: string; active: boolean }>;
}
interface ChildBody {
  blocks: Array<{ id: string; parameters: { variables?: Array<{ name: string; value: unknown }> } }>;
}

/** The user's child workflows, read with the API key as the host would. */
export async function childrenOf(userId: string) {
  return (await hostApi<UserBody>('GET', `/user/${userId}`)).body.workflows;
}

/** The values a child workflow holds in its variables block (STRIPE_TO_SLACK's unless named), by name. */
export async function variablesOf(childId: string, blockId = SETTINGS_BLOCK) {
  const { body } = await hostApi<ChildBody>('GET', `/workflow/${childId}`);
  const block = body.blocks.find((b) => b.id === blockId)!;
  return Object.fromEntries(block.parameters.variables!.map((v) => [v.name, v.value]));
}

export interface ModalOptions {
  userId: string;
  workflowId?: string;
  integration?: string;
  apiBase?: string;
}

/** A closed modal configured like a host page would, with the test page's token endpoint. */
export async function modalFixture({ userId, workflowId, integration, apiBase }: ModalOptions) {
  const base = apiBase ?? (await serviceInfo()).apiBase;
  return fixture<ForgeConfigModal>(html`<forge-config-modal
    api-base=${base}
    token-url=${tokenUrl(userId)}
    workflow-id=${workflowId ?? ''}
    integration=${integration ?? ''}
  ></forge-config-modal>`);
}

export const shadow = (el: HTMLElement) => el.shadowRoot!;

/** The modal's text as a user reads it. */
export const visibleText = (el: HTMLElement) => new Harness(el).text();

/** Waits until the modal shows a part named `part`; answers the first. */
export const untilPart = <E extends Element = HTMLElement>(el: HTMLElement, part: string) =>
  new Harness(el).until(() => byPart<E>(shadow(el), part), `part ${part}`);

/** Waits until the modal shows an element with `role` (and accessible name `name`); answers it. */
export const untilRole = <E extends Element = HTMLElement>(el: HTMLElement, role: string, name?: string | RegExp) =>
  new Harness(el).until(() => byRole<E>(shadow(el), role, name), `role ${role}${name ? ` "${name}"` : ''}`);

/** The button whose accessible name (its text or aria-label) is `name`. */
export const button = (el: HTMLElement, name: string) => byRole<HTMLButtonElement>(shadow(el), 'button', name);

export const untilButton = (el: HTMLElement, name: string) => untilRole<HTMLButtonElement>(el, 'button', name);

/** The input labelled `label`. */
export const field = (el: HTMLElement, label: string): HTMLInputElement => new Harness(el).field(label);

/** Types into a field as far as the element can tell (value set, `input` fired). */
export function fill(el: HTMLElement, label: string, value: string): void {
  const input = field(el, label);
  input.value = value;
  input.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
}

/** The connect step's row of an integration, by its name. */
export function integrationRow(el: HTMLElement, name: string): HTMLElement {
  const row = allByPart(shadow(el), 'integration').find((r) => new Harness(el).text(r).startsWith(name));
  if (!row) throw new Error(`No row for ${name}: ${visibleText(el)}`);
  return row;
}

/** Whether a connect row says its account is connected. */
export const saysConnected = (row: Element) => /\bConnected\b/.test(row.textContent!);

/** How many connect rows say their account is connected. */
export const connectedCount = (el: HTMLElement) => allByPart(shadow(el), 'integration').filter(saysConnected).length;

/** Every forge-* event the element fires, in order. */
export function recordEvents(el: HTMLElement, names: ForgeEventName[]) {
  const events: Array<{ type: string; detail: unknown }> = [];
  for (const name of names)
    el.addEventListener(name, (e) => events.push({ type: e.type, detail: (e as CustomEvent).detail }));
  return events;
}

export const ALL_EVENTS: ForgeEventName[] = [...configModalEvents];

export interface RecordedRequest {
  url: string;
  method: string;
  body: string;
  authorization: string | null;
}

/**
 * The page's fetches while `action` runs, watched without changing them (each call goes through
 * to the real fetch), so a test can check what went over the wire. The real fetch is put back
 * even when `action` fails, so one failing test cannot spoil the next.
 */
export async function requestsDuring(action: () => Promise<void>): Promise<RecordedRequest[]> {
  const realFetch = window.fetch;
  const requests: RecordedRequest[] = [];
  window.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    requests.push({
      url: request.url,
      method: request.method,
      body: typeof init?.body === 'string' ? init.body : '',
      authorization: request.headers.get('Authorization'),
    });
    return realFetch(input, init);
  };
  try {
    await action();
  } finally {
    window.fetch = realFetch;
  }
  return requests;
}

/**
 * Contrast is measured on what is painted: resolves once every open dialog's opening fade-in is
 * over — the modal's, and a confirmation's opened over it. Only the dialogs' own animations: the
 * shadow root's also hold the spinner's, which never ends.
 */
export const fadedIn = (el: ForgeConfigModal) =>
  Promise.all(
    [...shadow(el).querySelectorAll('dialog[open]')]
      .flatMap((dialog) => dialog.getAnimations())
      .map((animation) => animation.finished),
  );

/** axe over the element (its shadow root and the open dialog in it), in both colour schemes. */
export async function expectAccessible(el: ForgeConfigModal): Promise<void> {
  await fadedIn(el);
  for (const theme of ['light', 'dark'] as const) {
    el.theme = theme;
    await el.updateComplete;
    await expect(el, `${theme}: ${visibleText(el)}`).to.be.accessible();
  }
}

/** The variables block of the typed-settings service's workflow (test/support/forge.ts TYPED_WORKFLOW). */
export const TYPED_BLOCK = '3f2b8e4c-5a1d-4c7e-9b6a-0d4e8f1a2b3c';

/** The modal over the typed-settings service's workflow, for a new user or `existing`, at its settings. */
export async function typedModal(existing?: Awaited<ReturnType<typeof typedUser>>) {
  const { typedBase } = await serviceInfo();
  const user = existing ?? (await typedUser());
  const el = await fixture<ForgeConfigModal>(
    html`<forge-config-modal api-base=${typedBase} workflow-id=${TYPED_WORKFLOW}></forge-config-modal>`,
  );
  el.tokenProvider = user.token;
  await el.show();
  await untilRole(el, 'form', 'Settings');
  return { el, user, userId: user.userId };
}
