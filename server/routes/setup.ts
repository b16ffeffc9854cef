import { Type } from '@sinclair/typebox';
import { CatalogAnswers } from '../catalog/answers.js';
import { badRequest, sendJsonText } from '../http.js';
import { SetupSchema } from '../schemas.js';
import { childView } from '../views.js';
import { baseOf, type RoutePlugin } from './context.js';

/**
 * Everything `<forge-config-modal>` needs to open, in one answer: the parents on offer, the
 * token user's copies of exactly those, and the user's connected integrations. With only the
 * seed's endpoints the modal needs two round trips after the token (the catalog, the user and
 * the credentials, then each copy's values); this one needs a single round trip.
 */
const setup: RoutePlugin = async (api, { store, catalog }) => {
  const answers = new CatalogAnswers(catalog);
  api.get(
    '/setup',
    {
      // The credential check reads the user's children and connections with the user.
      config: { access: 'user', withTokenUser: 'childrenAndConnections' },
      schema: {
        summary: 'Everything one open of the configuration modal needs',
        description: 'Give exactly one of workflowId and integration.',
        tags: ['embed'],
        querystring: Type.Object({
          workflowId: Type.Optional(Type.String({ description: 'A parent workflow id from GET /workflow.' })),
          integration: Type.Optional(Type.String({ description: 'An integration name: the workflows that use it.' })),
        }),
        response: { 200: SetupSchema },
      },
    },
    async (request, reply) => {
      const { userId } = request.principal;
      // An empty value counts as absent (the query parser drops it), as GET /workflow treats `?integration=`.
      const { workflowId, integration } = request.query;
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
      const base = baseOf(request);
      // Read with the token's user, in one statement (issue 29); read here only if the route's
      // config stopped asking for them.
      const { children, connections: credentials } =
        request.tokenUserOwn ?? (await store.userWithChildrenAndConnections(userId));
      const installed = children
        .filter((child) => offered.has(child.parentId))
        .map((child) => childView(child, offered.get(child.parentId)!, base));
      // The parents on offer change only with the catalog: their JSON is made once (issue 29);
      // the answer is the text JSON.stringify makes of Setup, field for field in its order.
      const parents = answers.setupParents(
        base,
        workflowId === undefined ? { integration: integration! } : { workflowId },
        workflows,
      );
      return sendJsonText(
        reply,
        `{"workflows":${parents},"installed":${JSON.stringify(installed)},"credentials":${JSON.stringify(credentials)}}`,
      );
    },
  );
};

export default setup;
