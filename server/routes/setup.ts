import { Type } from '@sinclair/typebox';
import { CatalogAnswers, type SetupFilter } from '../catalog/answers.js';
import { badRequest, sendJsonText } from '../http.js';
import { KeptAnswers } from '../kept-answers.js';
import { SetupSchema } from '../schemas.js';
import { childView } from '../views.js';
import { baseOf, type RoutePlugin } from './context.js';

/**
 * Everything `<forge-config-modal>` needs to open, in one answer: the parents on offer, the
 * token user's copies of exactly those, and the user's connected integrations. With only the
 * seed's endpoints the modal needs two round trips after the token (the catalog, the user and
 * the credentials, then each copy's values); this one needs a single round trip.
 */
/**
 * All the answers kept take at most this many bytes together: the demo catalog's answers are 2 to
 * 10 KB, so this keeps a few thousand users' opens of the modal.
 */
const KEPT_BYTES = 16 * 1024 * 1024;

const setup: RoutePlugin = async (api, { store, catalog }) => {
  const answers = new CatalogAnswers(catalog);
  // Answers as sent, per user at the version of their workflows and connections (issue 29).
  const kept = new KeptAnswers(KEPT_BYTES);
  api.get(
    '/setup',
    {
      // The credential check reads the version of the user's workflows and connections with the user.
      config: { access: 'user', withTokenUser: 'ownVersion' },
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
      // then says that no workflow uses it yet. An unknown parent is refused here, kept or not.
      const one = workflowId === undefined ? undefined : catalog.active(workflowId);
      const by: SetupFilter = one ? { workflowId: one.workflowId } : { integration: integration! };
      const base = baseOf(request);
      // The answer is made of the catalog (which does not change while the service runs), the
      // origin, the filter and the user's workflows and connections, and of nothing else (no
      // clock, no other query): kept per user at their version, by origin and filter.
      const version = request.tokenUserOwnVersion;
      const key = `${base}\n${answers.setupFilter(by)}`;
      const known = version === undefined ? undefined : kept.get(userId, version, key);
      if (known) return sendJsonText(reply, known);
      const workflows = one ? [one] : catalog.list(integration);
      const offered = new Map(workflows.map((parent) => [parent.workflowId, parent]));
      // Read in one statement, after the version: as new as it or newer.
      const { children, connections: credentials } = await store.childrenAndConnections(userId);
      const installed = children
        .filter((child) => offered.has(child.parentId))
        .map((child) => childView(child, offered.get(child.parentId)!, base));
      // The parents on offer change only with the catalog: their JSON is made once (issue 29);
      // the answer is the text JSON.stringify makes of Setup, field for field in its order.
      const body = Buffer.from(
        `{"workflows":${answers.setupParents(base, by, workflows)},"installed":${JSON.stringify(installed)},"credentials":${JSON.stringify(credentials)}}`,
      );
      if (version !== undefined) kept.keep(userId, version, key, body);
      return sendJsonText(reply, body);
    },
  );
};

export default setup;
