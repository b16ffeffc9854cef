import type { ServiceDeps } from '../app.js';
import { MAX_TOKEN_TTL_SECONDS } from '../auth.js';
import { conflict, notFound, rateLimited } from '../http.js';
import type { Router } from '../router.js';
import { uniqueViolation } from '../store/store.js';
import { bodyObject, FieldChecker, queryInteger } from '../validate.js';
import { childSummaryView, parentOf } from '../views.js';

const noUser = (id: string) => notFound(`No user ${id}. User ids come from POST /user (userId) or GET /user (_id).`);

const emailTaken = (email: string) =>
  conflict(`A user with the e-mail ${email} already exists. E-mails are unique; use another or update that user.`);

export function registerUsers(router: Router, { store, catalog, credentials, limits }: ServiceDeps): void {
  /** Only the API key, or the token of this very user; anyone else's id is simply not there. */
  const visibleUser = (userId: string, principal: { kind: string; userId?: string }) => {
    const user = store.getUser(userId);
    if (!user || (principal.kind === 'user' && principal.userId !== userId)) throw noUser(userId);
    return user;
  };

  router.add('POST', '/user', 'apiKey', async ({ body }) => {
    const fields = new FieldChecker(bodyObject(await body(), '{"name": "Ada Lovelace", "email": "ada@example.com"}'));
    const name = fields.string('name');
    const email = fields.email('email');
    fields.onlyKnown(['name', 'email']);
    fields.done();
    try {
      return { body: { userId: store.createUser(name, email) } };
    } catch (error) {
      if (uniqueViolation(error) !== null) throw emailTaken(email);
      throw error;
    }
  });

  router.add('GET', '/user', 'apiKey', () => ({ body: { data: store.listUsers() } }));

  router.add('GET', '/user/:userId', 'any', ({ params, principal, base }) => {
    const user = visibleUser(params.userId!, principal);
    const workflows = store.listChildren(user._id).map((child) =>
      childSummaryView(
        child,
        parentOf(child, (id) => catalog.get(id)),
        base,
      ),
    );
    return { body: { _id: user._id, fullName: user.fullName, email: user.email, workflows } };
  });

  router.add('PATCH', '/user/:userId', 'apiKey', async ({ params, body }) => {
    const user = visibleUser(params.userId!, { kind: 'apiKey' });
    const fields = new FieldChecker(
      bodyObject(await body(), '{"email": "ada@example.com", "fullName": "Ada Lovelace"}'),
    );
    const email = fields.email('email');
    const fullName = fields.string('fullName');
    fields.onlyKnown(['email', 'fullName']);
    fields.done();
    try {
      store.updateUser(user._id, fullName, email);
    } catch (error) {
      if (uniqueViolation(error) !== null) throw emailTaken(email);
      throw error;
    }
    return { body: { _id: user._id, fullName, email } };
  });

  router.add('DELETE', '/user/:userId', 'apiKey', ({ params }) => {
    if (!store.deleteUser(params.userId!)) throw noUser(params.userId!);
    return { body: { success: true } };
  });

  router.add('GET', '/user/:userId/token', 'apiKey', async ({ params, query }) => {
    const user = visibleUser(params.userId!, { kind: 'apiKey' });
    rateLimited(limits.hit('token', user._id), `Too many tokens were asked for user ${user._id}.`);
    // Extension: a host (or a test) may ask for a shorter life; never longer than 30 minutes.
    const ttl = queryInteger(query, 'expiresIn', {
      min: 1,
      max: MAX_TOKEN_TTL_SECONDS,
      fallback: MAX_TOKEN_TTL_SECONDS,
    });
    return { body: { token: await credentials.signUserToken(user._id, ttl) } };
  });

  router.add('PATCH', '/user/:userId/disableWorkflows', 'apiKey', ({ params }) => {
    const user = visibleUser(params.userId!, { kind: 'apiKey' });
    const count = store.deactivateUserChildren(user._id);
    return {
      body: { message: `Disabled ${count} active workflow${count === 1 ? '' : 's'} of user ${user._id}.` },
    };
  });
}
