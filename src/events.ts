import { type ForgeApiError, ORIGIN_NOT_ALLOWED } from './api/embed-client.js';
import type { ErrorKind } from './api/types.js';
import { type ErrorDetail, errorDetail, type ForgeErrorCode } from './errors.js';
import { textsOf } from './internal/localize.js';
import { type ProblemStrings, plainWords } from './internal/problem.js';

/**
 * Every event the elements fire, declared once: its name and its detail type here, which
 * element fires it in the lists below. The `GlobalEventHandlersEventMap` entries, the React
 * wrappers' `onForge…` props, the JSX and Vue handler types, the tests and the demo all derive
 * from these. Events are prefixed `forge-`, bubble and are composed (they cross shadow roots),
 * and fire for user actions only, never for property changes made in code; the one exception is
 * `forge-workflow-failing`, which reports what the service saw (a run that failed).
 */

/** Why the modal is closing. */
export type HideReason = 'button' | 'escape' | 'backdrop' | 'done' | 'method';

export interface ForgeEventDetails {
  'forge-show': Record<string, never>;
  'forge-after-show': Record<string, never>;
  /** Cancelable: `preventDefault()` keeps the modal open. */
  'forge-hide': { reason: HideReason };
  'forge-after-hide': { reason: HideReason };
  /** A workflow was installed for the user: `parentId` the template, `workflowId` the user's child. */
  'forge-install': { parentId: string; workflowId: string };
  /** An installed workflow's settings were saved; `blockIds` are the variable blocks changed. */
  'forge-update': { workflowId: string; blockIds: string[] };
  /** The service confirmed a switch of a child workflow on or off. */
  'forge-toggle': { workflowId: string; active: boolean };
  'forge-error': ErrorDetail;
  /**
   * A workflow whose last run had not failed (or that had not run) has now failed: what kind of
   * problem it met, and how many runs failed in the last 24 hours. Seen when the list refreshes.
   */
  'forge-workflow-failing': { workflowId: string; parentId: string; kind: ErrorKind; failedLast24h: number };
  /** The user connected an app (or connected it again); `account` is the provider's label for it, when it gave one. */
  'forge-connect': { integration: string; account?: string };
  /** The user disconnected an app; `switchedOff` are the child workflows the service switched off with it. */
  'forge-disconnect': { integration: string; switchedOff: string[] };
}

export type ForgeEventName = keyof ForgeEventDetails;
export type ForgeEvent<K extends ForgeEventName> = CustomEvent<ForgeEventDetails[K]>;

/** The events `<forge-config-modal>` fires. */
export const configModalEvents = [
  'forge-connect',
  'forge-disconnect',
  'forge-show',
  'forge-after-show',
  'forge-hide',
  'forge-after-hide',
  'forge-install',
  'forge-update',
  'forge-toggle',
  'forge-error',
] as const satisfies readonly ForgeEventName[];

/** The events `<forge-workflow-list>` fires, those bubbling out of the modal it opens included. */
export const workflowListEvents = [
  'forge-connect',
  'forge-disconnect',
  'forge-toggle',
  'forge-install',
  'forge-update',
  'forge-error',
  'forge-workflow-failing',
] as const satisfies readonly ForgeEventName[];

/** The events `<forge-integration-list>` fires, those bubbling out of the modal it opens included. */
export const integrationListEvents = [
  'forge-connect',
  'forge-disconnect',
  'forge-toggle',
  'forge-install',
  'forge-update',
  'forge-error',
] as const satisfies readonly ForgeEventName[];

export type ConfigModalEventName = (typeof configModalEvents)[number];
export type WorkflowListEventName = (typeof workflowListEvents)[number];
export type IntegrationListEventName = (typeof integrationListEvents)[number];

/** `forge-after-show` → `ForgeAfterShow`: the event's name in a framework's `onForgeAfterShow` prop. */
export type PascalCase<S extends string> = S extends `${infer Head}-${infer Tail}`
  ? `${Capitalize<Head>}${PascalCase<Tail>}`
  : Capitalize<S>;

/** Fires a forge event from `target`; answers false when a cancelable event was canceled. */
export function emit<K extends ForgeEventName>(
  target: EventTarget,
  name: K,
  detail: ForgeEventDetails[K],
  { cancelable = false }: { cancelable?: boolean } = {},
): boolean {
  return target.dispatchEvent(new CustomEvent(name, { detail, bubbles: true, composed: true, cancelable }));
}

/**
 * Fires `forge-error` for a failure, with its message for the host's developer, and answers what
 * the element shows the end user: the failure in plain words (`problem.ts`), which `describe`
 * may put in the element's own sentence. A page whose origin the service refuses is also told
 * on the console, where its developer looks first.
 */
export function reportError(
  target: EventTarget,
  error: unknown,
  code: ForgeErrorCode,
  describe = (message: string) => message,
): string {
  const detail = errorDetail(error, code);
  emit(target, 'forge-error', detail);
  if ((error as ForgeApiError).title === ORIGIN_NOT_ALLOWED) console.error(detail.message);
  // Both elements speak through a Localize, whose texts hold the problem strings.
  return describe(plainWords(textsOf(target) as ProblemStrings, error));
}

type ForgeEventMap = { [K in ForgeEventName]: ForgeEvent<K> };

declare global {
  interface GlobalEventHandlersEventMap extends ForgeEventMap {}
}
