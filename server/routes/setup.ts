import type { Setup } from '../../src/api/types.js';
import type { ServiceDeps } from '../app.js';
import { badRequest } from '../http.js';
import type { Router } from '../router.js';
import { childView, parentView } from '../views.js';

/**
 * Everything `<forge-config-modal>` needs to open, in one answer: the parents on offer, the
 * token user's copies of exactly those, and the user's connected integrations. With only the
 * seed's endpoints the modal needs two round trips after the token (the catalog, the user and
 * the credentials, then each copy's values); this one needs a single round trip.
 */
export function registerSetup(router: Router, { store, catalog }: ServiceDeps): void {
  router.add('GET', '/setup', 'user', ({ query, principal, base }) => {
    const userId = (principal as { userId: string }).userId;
    // An empty value counts as absent, as GET /workflow treats `?integration=`.
    const workflowId = query.get('workflowId') || undefined;
    const integration = query.get('integration') || undefined;
    if ((workflowId === undefined) === (integration === undefined)) {
      const both = workflowId !== undefined;
      const message = both ? 'Give only one of workflowId and integration.' : 'Give workflowId or integration.';
      throw badRequest(
        `Pass exactly one of workflowId (a parent workflow id from GET /workflow) or integration (an integration name); this request gave ${both ? 'both' : 'neither'}.`,
        [
          { path: 'query.workflowId', message },
          { path: 'query.integration', message },
        ],
      );
    }
    // An unknown integration answers no workflows, as GET /workflow's filter does: the modal
    // then says that no workflow uses it yet.
    const workflows = workflowId === undefined ? catalog.list(integration) : [catalog.active(workflowId)];
    const offered = new Map(workflows.map((parent) => [parent.workflowId, parent]));
    const installed = store
      .listChildren(userId)
      .filter((child) => offered.has(child.parentId))
      .map((child) => childView(child, offered.get(child.parentId)!, base));
    const setup: Setup = {
      workflows: workflows.map((parent) => parentView(parent, base)),
      installed,
      credentials: store.listCredentials(userId),
    };
    return { body: setup };
  });
}
