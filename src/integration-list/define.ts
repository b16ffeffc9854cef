// The grid opens <forge-config-modal> and connects accounts with the modal's own code, so it
// registers the modal with itself: in a bundle, the two share one chunk (and the CDN build has no
// third chunk for the connect flow, which the modal would load a round trip after its own).
import '../config-modal/define.js';
import { ForgeIntegrationList } from './integration-list.js';

if (!customElements.get('forge-integration-list')) {
  customElements.define('forge-integration-list', ForgeIntegrationList);
}

export { ForgeIntegrationList };

declare global {
  interface HTMLElementTagNameMap {
    'forge-integration-list': ForgeIntegrationList;
  }
}
