import type { ErrorDetail } from './errors.js';

/**
 * Every event the elements fire: prefixed `forge-`, bubbling and composed (they cross shadow
 * roots), fired for user actions only, never for property changes made in code.
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
}

export type ForgeEventName = keyof ForgeEventDetails;
export type ForgeEvent<K extends ForgeEventName> = CustomEvent<ForgeEventDetails[K]>;

/** Fires a forge event from `target`; answers false when a cancelable event was canceled. */
export function emit<K extends ForgeEventName>(
  target: EventTarget,
  name: K,
  detail: ForgeEventDetails[K],
  { cancelable = false }: { cancelable?: boolean } = {},
): boolean {
  return target.dispatchEvent(new CustomEvent(name, { detail, bubbles: true, composed: true, cancelable }));
}

declare global {
  interface GlobalEventHandlersEventMap {
    'forge-show': ForgeEvent<'forge-show'>;
    'forge-after-show': ForgeEvent<'forge-after-show'>;
    'forge-hide': ForgeEvent<'forge-hide'>;
    'forge-after-hide': ForgeEvent<'forge-after-hide'>;
    'forge-install': ForgeEvent<'forge-install'>;
    'forge-update': ForgeEvent<'forge-update'>;
    'forge-toggle': ForgeEvent<'forge-toggle'>;
    'forge-error': ForgeEvent<'forge-error'>;
  }
}
