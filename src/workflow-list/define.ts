// The list opens <forge-config-modal>, so registering the list registers the modal too.
import '../config-modal/define.js';
import { ForgeWorkflowList } from './workflow-list.js';

if (!customElements.get('forge-workflow-list')) customElements.define('forge-workflow-list', ForgeWorkflowList);

export { ForgeWorkflowList };

declare global {
  interface HTMLElementTagNameMap {
    'forge-workflow-list': ForgeWorkflowList;
  }
}
