/**
 * The entry of the single-file CDN bundle (`dist/cdn/forge-embed.min.js`): what `forge-embed`
 * registers and exports, for a page that loads it with one `<script type="module">`, except
 * `ForgeClient`. Its extra operations take the host's API key, which belongs on the host's
 * backend and never in a page, so the bundle carries only the embed surface's
 * `ForgeEmbedClient` (`npm install forge-embed` still has both, in `forge-embed/client`).
 */
import './config-modal/define.js';
import './workflow-list/define.js';

export { API_VERSION_PATH, ForgeApiError, ForgeEmbedClient } from './api/embed-client.js';
export { ForgeConfigModal } from './config-modal/config-modal.js';
export { ConfigError, TokenError } from './errors.js';
export { registerStrings } from './internal/localize.js';
export { ForgeWorkflowList } from './workflow-list/workflow-list.js';
