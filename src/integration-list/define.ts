import { ForgeIntegrationList } from './integration-list.js';

// The grid registers <forge-config-modal> itself, from the modal's own chunk, when it is about
// to open one (internal/load-modal.ts).
if (!customElements.get('forge-integration-list')) {
  customElements.define('forge-integration-list', ForgeIntegrationList);
}

export { ForgeIntegrationList };

declare global {
  interface HTMLElementTagNameMap {
    'forge-integration-list': ForgeIntegrationList;
  }
}
