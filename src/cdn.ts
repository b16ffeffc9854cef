/**
 * The entry of the CDN bundle (`dist/cdn/forge-embed.min.js`): what `forge-embed` registers and
 * exports, for a page that loads it with one `<script type="module">`, except two things.
 * - `<forge-config-modal>` lives in a chunk beside this file and registers when it arrives: at
 *   once if the page already holds one, else when the browser is idle (the list also fetches it
 *   on intent, pointer or focus on a row). A page that shows only the list renders without
 *   waiting for the modal's code. Code that calls `show()` right at load awaits
 *   `customElements.whenDefined('forge-config-modal')` first.
 * - `<forge-integration-list>` is a chunk of its own too, loaded once the page holds one (now or
 *   later): a page that never shows it pays only the few lines below. One rendered inside another
 *   element's shadow root is out of their sight; such a page calls `loadIntegrationList()`.
 * - `ForgeClient`: its extra operations take the host's API key, which belongs on the host's
 *   backend and never in a page, so the bundle carries only the embed surface's
 *   `ForgeEmbedClient` (`npm install forge-embed` still has both, in `forge-embed/client`).
 */
import { loadConfigModal, prefetchConfigModal, prefetchConfigModalWhenIdle } from './internal/load-modal.js';
import './workflow-list/define.js';

if (document.querySelector('forge-config-modal')) prefetchConfigModal();
else prefetchConfigModalWhenIdle();

/** Registers `<forge-integration-list>` (and the modal it opens), loading both chunks side by side. */
export const loadIntegrationList = () =>
  Promise.all([import('./integration-list/define.js'), loadConfigModal()]).then(([module]) => module);
// A live collection: looking at its first item is cheap, whatever else the page changes.
const integrationLists = document.getElementsByTagName('forge-integration-list');
const lookForIntegrationList = () => {
  if (!integrationLists[0]) return;
  pageWatch.disconnect();
  void loadIntegrationList();
};
const pageWatch = new MutationObserver(lookForIntegrationList);
pageWatch.observe(document, { childList: true, subtree: true });
lookForIntegrationList();

export { API_VERSION_PATH, ForgeApiError, ForgeEmbedClient } from './api/embed-client.js';
export { ConfigError, TokenError } from './errors.js';
export { loadConfigModal } from './internal/load-modal.js';
export { registerStrings } from './internal/localize.js';
export { ForgeWorkflowList } from './workflow-list/workflow-list.js';
