/**
 * `forge-embed/react`: the elements as React components, through `@lit/react`, for React 18
 * (which sets every prop on a custom element as a string attribute and cannot listen to custom
 * events). Props reach the element as properties (`tokenProvider`, `strings` included), and each
 * `forge-*` event has a typed `onForge…` prop. React 19 can use the elements directly instead:
 * see `forge-embed/jsx` for their JSX types. Importing this module registers the three elements.
 */
// The wrappers run hooks in the browser, so React Server Components (Next.js's App Router) must
// treat this module as a client module: it may be rendered from a server component, not run there.
'use client';

import { createComponent, type EventName } from '@lit/react';
// The default import is the one both React's CommonJS build and bundlers' interop agree on.
import React from 'react';
import '../config-modal/define.js';
import { ForgeConfigModal as ForgeConfigModalElement } from '../config-modal/config-modal.js';
import {
  configModalEvents,
  type ForgeEvent,
  type ForgeEventName,
  integrationListEvents,
  type PascalCase,
  workflowListEvents,
} from '../events.js';
import '../integration-list/define.js';
import { ForgeIntegrationList as ForgeIntegrationListElement } from '../integration-list/integration-list.js';
import '../workflow-list/define.js';
import { ForgeWorkflowList as ForgeWorkflowListElement } from '../workflow-list/workflow-list.js';

/**
 * The `events` map of `createComponent` for an element's events (`events.ts`): `onForgeToggle`
 * listens to `forge-toggle` and gets a `CustomEvent<{workflowId, active}>`.
 */
function reactEvents<N extends ForgeEventName>(names: readonly N[]) {
  const props = names.map((name) => [
    `on${name.replace(/(?:^|-)(\w)/g, (_, first: string) => first.toUpperCase())}`,
    name,
  ]);
  return Object.fromEntries(props) as { [K in N as `on${PascalCase<K>}`]: EventName<ForgeEvent<K>> };
}

export const ForgeConfigModal = createComponent({
  react: React,
  tagName: 'forge-config-modal',
  elementClass: ForgeConfigModalElement,
  displayName: 'ForgeConfigModal',
  events: reactEvents(configModalEvents),
});

export const ForgeWorkflowList = createComponent({
  react: React,
  tagName: 'forge-workflow-list',
  elementClass: ForgeWorkflowListElement,
  displayName: 'ForgeWorkflowList',
  events: reactEvents(workflowListEvents),
});

export const ForgeIntegrationList = createComponent({
  react: React,
  tagName: 'forge-integration-list',
  elementClass: ForgeIntegrationListElement,
  displayName: 'ForgeIntegrationList',
  events: reactEvents(integrationListEvents),
});
