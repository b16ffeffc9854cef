import { Type } from '@sinclair/typebox';
import { disconnect } from '../engine/connections.js';
import { notFound, rateLimited } from '../http.js';
import {
  DisconnectedSchema,
  IntegrationParams,
  RateLimitedResponse,
  UserConnectionSchema,
  UserIdParams,
} from '../schemas.js';
import { type RoutePlugin, serviceOrigin } from './context.js';

/**
 * The user's connections to apps as the end user and the host read and end them (issue 24,
 * item 5): the user token reaches only its own user's (`/credentials`), the API key any user's
 * (`/user/:userId/credentials`, as the other API-key routes address a user). Connecting lives in
 * credentials.ts; what a disconnect does, in server/engine/connections.ts.
 */
const connections: RoutePlugin = async (api, deps) => {
  const { store, catalog, limits } = deps;

  const integrationNamed = (name: string) => {
    const integration = catalog.integrations.get(name);
    if (!integration) {
      throw notFound(`No integration ${name}. Integration names are the name of entries in a workflow's integrations.`);
    }
    return integration;
  };

  const userNamed = async (userId: string) => {
    if (!(await store.users.get(userId))) {
      throw notFound(`No user ${userId}. User ids come from POST /user (userId) or GET /user (_id).`);
    }
  };

  const end = async (userId: string, name: string) => {
    const integration = integrationNamed(name);
    const done = await disconnect({ ...deps, serviceUrl: () => serviceOrigin(deps, api) }, userId, integration.name);
    if (!done)
      throw notFound(`${integration.displayName} is not connected for this user, so there is nothing to disconnect.`);
    return done;
  };

  const ListSchema = Type.Object({ data: Type.Array(UserConnectionSchema) });
  const disconnectDescription =
    'Asks the app to revoke the grant when it has a revocation endpoint, then deletes the stored credential and switches off the user’s child workflows that use the integration. A revocation that fails does not stop the disconnect (`revocation: "failed"`). 404 when the user has no connection to it.';

  api.get(
    '/credentials',
    {
      config: { access: 'user' },
      schema: {
        summary: 'The token user’s connections: when, whether they still work, as which account (never the secrets)',
        tags: ['credentials', 'embed'],
        response: { 200: ListSchema },
      },
    },
    async (request) => ({ data: await store.credentials.list(request.principal.userId) }),
  );

  api.delete(
    '/credentials/:integration',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Disconnect one of the token user’s apps',
        description: disconnectDescription,
        tags: ['credentials', 'embed'],
        params: IntegrationParams,
        response: { 200: DisconnectedSchema, 429: RateLimitedResponse('credential writes by this user') },
      },
    },
    async (request) => {
      const { userId } = request.principal;
      integrationNamed(request.params.integration);
      rateLimited(await limits.hit('credentials', userId), 'This user saved credentials too often.');
      return end(userId, request.params.integration);
    },
  );

  api.get(
    '/user/:userId/credentials',
    {
      config: { access: 'apiKey' },
      schema: {
        summary: 'A user’s connections, as GET /credentials answers them for the user',
        tags: ['credentials', 'users'],
        params: UserIdParams,
        response: { 200: ListSchema },
      },
    },
    async (request) => {
      await userNamed(request.params.userId);
      return { data: await store.credentials.list(request.params.userId) };
    },
  );

  api.delete(
    '/user/:userId/credentials/:integration',
    {
      config: { access: 'apiKey' },
      schema: {
        summary: 'Disconnect one of a user’s apps, as DELETE /credentials/:integration does for the user',
        description: disconnectDescription,
        tags: ['credentials', 'users'],
        params: Type.Object({ ...UserIdParams.properties, ...IntegrationParams.properties }),
        response: { 200: DisconnectedSchema },
      },
    },
    async (request) => {
      await userNamed(request.params.userId);
      return end(request.params.userId, request.params.integration);
    },
  );
};

export default connections;
