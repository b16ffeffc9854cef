import { Type } from '@sinclair/typebox';
import type { ChildWorkflowSummary, User } from 'forge-embed/client';
import { MAX_TOKEN_TTL_SECONDS } from '../auth.js';
import { normalizeEmail } from '../email.js';
import { conflict, notFound, rateLimited } from '../http.js';
import {
  CreateUserBody,
  MessageSchema,
  RateLimitedResponse,
  SuccessSchema,
  UpdateUserBody,
  UserIdParams,
  UserSchema,
  UserWithWorkflowsSchema,
} from '../schemas.js';
import { uniqueViolation } from '../store/store.js';
import { UseOrderedMap } from '../use-order.js';
import { childSummaryView, parentOf, userView } from '../views.js';
import { baseOf, type RoutePlugin } from './context.js';

const noUser = (id: string) => notFound(`No user ${id}. User ids come from POST /user (userId) or GET /user (_id).`);

const emailTaken = (email: string) =>
  conflict(`A user with the e-mail ${email} already exists. E-mails are unique; use another or update that user.`);

/** Users whose workflows GET /user/:userId keeps at once; the least recently read go first. */
const KEPT_USERS = 10_000;

const users: RoutePlugin = async (api, { store, catalog, authKeys, limits }) => {
  /** Only the API key, or the token of this very user; anyone else's id is simply not there. */
  const visibleUser = async (userId: string, principal: { kind: string; userId?: string }, tokenUser?: User) => {
    // A user token's own user was read by the credential check a moment ago.
    const user = tokenUser?._id === userId ? tokenUser : await store.users.get(userId);
    if (!user || (principal.kind === 'user' && principal.userId !== userId)) throw noUser(userId);
    return user;
  };

  /**
   * GET /user/:userId's workflows for a user token (issue 29): they are made of the user's
   * workflows rows and the catalog and of nothing else, so they are kept per user at the version
   * of those rows (`users.own_version`, which the credential check reads with the token's user),
   * by origin (the icons' addresses), and that user's next read is one statement, not two. With
   * the API key, or at another version, they are read.
   */
  const kept = new UseOrderedMap<string, { version: number; base: string; workflows: ChildWorkflowSummary[] }>();
  const workflowsOf = async (userId: string, base: string, version: number | undefined) => {
    const known = version === undefined ? undefined : kept.get(userId);
    if (known && known.version === version && known.base === base) return known.workflows;
    // Read after the version: as new as it or newer.
    const workflows = (await store.children.list(userId)).map((child) =>
      childSummaryView(
        child,
        parentOf(child, (id) => catalog.get(id)),
        base,
      ),
    );
    // A read that began at an older version than the one kept may end after it: it is not kept.
    if (version !== undefined && !(known && known.version > version)) {
      kept.setWithin(userId, { version, base, workflows }, KEPT_USERS);
    }
    return workflows;
  };

  api.post(
    '/user',
    {
      config: { access: 'apiKey' },
      schema: {
        summary: 'Create a user',
        tags: ['users'],
        body: CreateUserBody,
        response: {
          200: Type.Object({ userId: Type.String() }),
          429: RateLimitedResponse('users created with this API key'),
        },
      },
    },
    async (request) => {
      // One API key per service: its users share one count.
      rateLimited(await limits.hit('user', 'apiKey'), 'Too many users were created with this API key.');
      const { body } = request;
      const email = normalizeEmail(body.email);
      try {
        return { userId: await store.users.create(body.name.trim(), email) };
      } catch (error) {
        if (uniqueViolation(error) !== null) throw emailTaken(email);
        throw error;
      }
    },
  );

  api.get(
    '/user',
    {
      config: { access: 'apiKey' },
      schema: {
        summary: 'List users',
        tags: ['users'],
        response: { 200: Type.Object({ data: Type.Array(UserSchema) }) },
      },
    },
    async () => ({ data: await store.users.list() }),
  );

  api.get(
    '/user/:userId',
    {
      config: { access: 'any', withTokenUser: 'ownVersion' },
      schema: {
        summary: 'Get a user with their child workflows',
        description: 'With a user token, only that user.',
        tags: ['users', 'embed'],
        params: UserIdParams,
        response: { 200: UserWithWorkflowsSchema },
      },
    },
    async (request) => {
      const user = await visibleUser(request.params.userId, request.principal, request.tokenUser);
      return userView(user, await workflowsOf(user._id, baseOf(request), request.tokenUserOwnVersion));
    },
  );

  api.patch(
    '/user/:userId',
    {
      config: { access: 'apiKey' },
      schema: {
        summary: 'Update a user',
        tags: ['users'],
        params: UserIdParams,
        body: UpdateUserBody,
        response: { 200: UserSchema },
      },
    },
    async (request) => {
      const user = await visibleUser(request.params.userId, { kind: 'apiKey' });
      const { body } = request;
      const email = normalizeEmail(body.email);
      const fullName = body.fullName.trim();
      try {
        await store.users.update(user._id, fullName, email);
      } catch (error) {
        if (uniqueViolation(error) !== null) throw emailTaken(email);
        throw error;
      }
      return { _id: user._id, fullName, email };
    },
  );

  api.delete(
    '/user/:userId',
    {
      config: { access: 'apiKey' },
      schema: {
        summary: 'Delete a user and all their workflows',
        tags: ['users'],
        params: UserIdParams,
        response: { 200: SuccessSchema },
      },
    },
    async (request) => {
      const { userId } = request.params;
      if (!(await store.users.delete(userId))) throw noUser(userId);
      return { success: true };
    },
  );

  api.get(
    '/user/:userId/token',
    {
      config: { access: 'apiKey' },
      schema: {
        summary: 'Mint a user token',
        tags: ['users'],
        params: UserIdParams,
        // Extension: a host (or a test) may ask for a shorter life; never longer than 30 minutes.
        querystring: Type.Object({
          expiresIn: Type.Integer({
            minimum: 1,
            maximum: MAX_TOKEN_TTL_SECONDS,
            default: MAX_TOKEN_TTL_SECONDS,
            description: 'Seconds the token lives, at most 1800.',
          }),
        }),
        response: {
          200: Type.Object({ token: Type.String({ description: 'An ES256 JWT.' }) }),
          429: RateLimitedResponse('tokens for this user'),
        },
      },
    },
    async (request) => {
      const user = await visibleUser(request.params.userId, { kind: 'apiKey' });
      rateLimited(await limits.hit('token', user._id), `Too many tokens were asked for user ${user._id}.`);
      const { expiresIn } = request.query;
      return { token: await authKeys.signUserToken(user._id, expiresIn) };
    },
  );

  api.patch(
    '/user/:userId/disableWorkflows',
    {
      config: { access: 'apiKey' },
      schema: {
        summary: 'Switch off every workflow of a user',
        tags: ['users'],
        params: UserIdParams,
        response: { 200: MessageSchema },
      },
    },
    async (request) => {
      const user = await visibleUser(request.params.userId, { kind: 'apiKey' });
      const count = await store.children.deactivateAllOf(user._id);
      return { message: `Disabled ${count} active workflow${count === 1 ? '' : 's'} of user ${user._id}.` };
    },
  );
};

export default users;
