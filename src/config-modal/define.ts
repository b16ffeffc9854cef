import { ForgeConfigModal } from './config-modal.js';

if (!customElements.get('forge-config-modal')) customElements.define('forge-config-modal', ForgeConfigModal);

export { ForgeConfigModal };

declare global {
  interface HTMLElementTagNameMap {
    'forge-config-modal': ForgeConfigModal;
  }
}
