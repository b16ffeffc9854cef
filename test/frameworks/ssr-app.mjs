import React from 'react';
import { ForgeConfigModal, ForgeIntegrationList, ForgeWorkflowList } from '../../dist/src/react/index.js';

/**
 * The page a React 19 app renders on its server (react-dom/server) and hydrates in the browser
 * (hydrateRoot), as Next.js does: the three elements twice, once through `forge-embed/react` and once
 * used directly. The same code runs on both sides, so the markup matches; the functions the
 * server gets are stand-ins it never calls (it cannot send functions anyway).
 *
 * `config`: `apiBase`, `tokenUrl`, `workflowId` (a parent for the modals), and the values whose
 * arrival the test checks: `tokenProvider`, `strings`, `modalStrings`, `gridStrings`, `onToggle`,
 * `onAfterShow`, `onConnect`.
 */
export function SsrApp({ config }) {
  const { apiBase, tokenUrl, workflowId, tokenProvider, strings, modalStrings, gridStrings } = config;
  const { onToggle, onAfterShow, onConnect } = config;
  const h = React.createElement;
  return h(
    'main',
    null,
    h(
      'section',
      { id: 'wrapped' },
      h(ForgeWorkflowList, {
        apiBase,
        tokenProvider,
        strings,
        onForgeToggle: (event) => onToggle('wrapped', event.detail),
      }),
      h(ForgeConfigModal, {
        apiBase,
        tokenUrl,
        workflowId,
        strings: modalStrings,
        onForgeAfterShow: () => onAfterShow('wrapped'),
      }),
      h(ForgeIntegrationList, {
        apiBase,
        tokenProvider,
        strings: gridStrings,
        onForgeConnect: (event) => onConnect('wrapped', event.detail),
      }),
    ),
    h(
      'section',
      { id: 'direct' },
      h('forge-workflow-list', {
        'api-base': apiBase,
        'token-url': tokenUrl,
        tokenProvider,
        strings,
        'onforge-toggle': (event) => onToggle('direct', event.detail),
      }),
      h('forge-config-modal', {
        'api-base': apiBase,
        'token-url': tokenUrl,
        'workflow-id': workflowId,
        strings: modalStrings,
        'onforge-after-show': () => onAfterShow('direct'),
      }),
      h('forge-integration-list', {
        'api-base': apiBase,
        'token-url': tokenUrl,
        tokenProvider,
        strings: gridStrings,
        'onforge-connect': (event) => onConnect('direct', event.detail),
      }),
    ),
  );
}
