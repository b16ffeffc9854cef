/**
 * `forge-embed/react`: the elements as React components, through `@lit/react`, for React 18
 * (which sets every prop on a custom element as a string attribute and cannot listen to custom
 * events). Props reach the element as properties (`tokenProvider`, `strings` included), and each
 * `forge-*` event has a typed `onForge…` prop. React 19 can use the elements directly instead:
 * see `forge-embed/jsx` for their JSX types. Importing this module registers both elements.
 */
// The wrappers run hooks in the browser, so React Server Components (Next.js's App Router) must
// treat this module as a client module: it may be rendered from a server component, not run there.
'use client';

import { createComponent, type EventName } from '@lit/react';
// The default import is the one both React's CommonJS build and bundlers' interop agree on.
import React from 'react';
import '../config-modal/define.js';
import { ForgeConfigModal as ForgeConfigModalElement } from '../config-modal/config-modal.js';
import type { ForgeEvent, ForgeEventName } from '../events.js';
import '../workflow-list/define.js';
import { ForgeWorkflowList as ForgeWorkflowListElement } from '../workflow-list/workflow-list.js';

/** Types the handler prop of an event: `onForgeToggle` gets a `CustomEvent<{workflowId, active}>`. */
const event = <K extends ForgeEventName>(name: K) => name as EventName<ForgeEvent<K>>;

export const ForgeConfigModal = createComponent({
  react: React,
  tagName: 'forge-config-modal',
  elementClass: ForgeConfigModalElement,
  displayName: 'ForgeConfigModal',
  events: {
    onForgeShow: event('forge-show'),
    onForgeAfterShow: event('forge-after-show'),
    onForgeHide: event('forge-hide'),
    onForgeAfterHide: event('forge-after-hide'),
    onForgeInstall: event('forge-install'),
    onForgeUpdate: event('forge-update'),
    onForgeToggle: event('forge-toggle'),
    onForgeError: event('forge-error'),
  },
});

export const ForgeWorkflowList = createComponent({
  react: React,
  tagName: 'forge-workflow-list',
  elementClass: ForgeWorkflowListElement,
  displayName: 'ForgeWorkflowList',
  events: {
    onForgeToggle: event('forge-toggle'),
    onForgeInstall: event('forge-install'),
    onForgeUpdate: event('forge-update'),
    onForgeError: event('forge-error'),
  },
});
