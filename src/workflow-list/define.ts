import { ForgeWorkflowList } from './workflow-list.js';

// The list registers <forge-config-modal> itself, from the modal's own chunk, when it is about
// to open one (internal/load-modal.ts).
if (!customElements.get('forge-workflow-list')) customElements.define('forge-workflow-list', ForgeWorkflowList);

export { ForgeWorkflowList };

declare global {
  interface HTMLElementTagNameMap {
    'forge-workflow-list': ForgeWorkflowList;
  }
}
