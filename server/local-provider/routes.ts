import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { escapeHtml, REDIRECT_HEADERS } from '../http.js';
import { HtmlPage, page, Redirect, sendPage } from '../oauth/pages.js';
import type { ServiceDeps } from '../routes/context.js';
import { IntegrationParams } from '../schemas.js';
import { isPlainObject } from '../validate.js';
import { LOCAL_PROVIDER_PREFIX } from '../views.js';
import { type LocalProvider, OAuthError } from './provider.js';

/**
 * The local OAuth 2.0 authorization server's endpoints, beside the API under
 * LOCAL_PROVIDER_PREFIX, one set per catalog app (`/local-oauth/<app>/…`): the consent page and
 * its answer, the token endpoint, revocation (RFC 7009), introspection (RFC 7662), and the app's
 * own "remove access" (what the demo's Revoke does). The service reaches it like any provider,
 * through the catalog's `auth` and oauth4webapi; the rules live in ./provider.ts.
 */

export interface LocalProviderDeps {
  localProvider: LocalProvider;
  /** Sent with the consent page when set: `same-origin` cuts the popup from its opener, as Microsoft's login does. */
  consentOpenerPolicy?: string | undefined;
}

const AuthorizeQuery = Type.Record(Type.String(), Type.String(), {
  description: 'The authorization request (RFC 6749 §4.1.1, PKCE per RFC 7636).',
});
const OAuthErrorBody = Type.Object({ error: Type.String(), error_description: Type.Optional(Type.String()) });
const TokenAnswer = Type.Object({
  access_token: Type.String(),
  token_type: Type.String(),
  expires_in: Type.Integer(),
  refresh_token: Type.String(),
  scope: Type.Optional(Type.String()),
});
const IntrospectionAnswer = Type.Object({
  active: Type.Boolean(),
  app: Type.Optional(Type.String()),
  scope: Type.Optional(Type.String()),
  client_id: Type.Optional(Type.String()),
  exp: Type.Optional(Type.Integer()),
});
// Token answers are never cached (RFC 6749 §5.1).
const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

const localProviderRoutes: FastifyPluginAsyncTypebox<ServiceDeps & LocalProviderDeps> = async (app, deps) => {
  const { catalog, localProvider: provider } = deps;
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 10_000 },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
  const formOf = (body: unknown): Record<string, string | undefined> => (isPlainObject(body) ? body : {}) as never;
  const oauthError = (reply: FastifyReply, error: unknown, basic = false) => {
    if (!(error instanceof OAuthError)) throw error;
    if (error.status === 401 && basic) reply.header('WWW-Authenticate', 'Basic realm="local-oauth"');
    return reply
      .code(error.status)
      .headers(NO_STORE)
      .send({ error: error.error, error_description: error.description });
  };
  const appNamed = (name: string) => {
    const integration = catalog.integrations.get(name);
    return integration?.type === 'oauth2' ? integration : undefined;
  };
  const refused = (reply: FastifyReply, message: string) =>
    sendPage(reply, 400, page('This sign-in cannot go on', `<p>${escapeHtml(message)} Close this window.</p>`));

  /** Checks the request; answers the reply when it cannot go on (an error page, or back to the client). */
  const authorizationProblem = (reply: FastifyReply, name: string, query: Record<string, string>) => {
    if (!appNamed(name)) return refused(reply, `There is no app ${name} here.`);
    const { redirectTo, problem } = provider.checkAuthorization(query);
    if (!problem) return undefined;
    if (!redirectTo) return refused(reply, problem.description);
    const target = new URL(redirectTo);
    target.search = new URLSearchParams({
      error: problem.error,
      error_description: problem.description,
      ...(query.state ? { state: query.state } : {}),
    }).toString();
    return reply.code(303).headers(REDIRECT_HEADERS).header('Location', target.toString()).send();
  };

  app.get(
    '/:integration/authorize',
    {
      config: { access: 'public' },
      schema: {
        summary: 'The local OAuth provider’s consent page',
        tags: ['oauth'],
        params: IntegrationParams,
        querystring: AuthorizeQuery,
        response: { 200: HtmlPage, 303: Redirect, 400: HtmlPage },
      },
    },
    async (request, reply) => {
      const { integration: name } = request.params;
      const stopped = authorizationProblem(reply, name, request.query);
      if (stopped) return stopped;
      const { displayName } = appNamed(name)!;
      if (deps.consentOpenerPolicy) reply.header('Cross-Origin-Opener-Policy', deps.consentOpenerPolicy);
      // The form posts back to this very address: the request is checked again when answered.
      const action = `${LOCAL_PROVIDER_PREFIX}/${encodeURIComponent(name)}/authorize?${new URLSearchParams(request.query)}`;
      const scope = request.query.scope ? ` (${escapeHtml(request.query.scope)})` : '';
      return sendPage(
        reply,
        200,
        page(
          `Allow access to your ${displayName} account?`,
          `<p>The integration will be able to read and send data on your behalf${scope}. This consent page is served by the local Forge service's OAuth provider, standing in for ${escapeHtml(displayName)}.</p>
<form method="post" action="${escapeHtml(action)}">
  <button name="decision" value="allow" class="primary" autofocus>Allow</button>
  <button name="decision" value="deny">Deny</button>
</form>`,
        ),
      );
    },
  );

  app.post(
    '/:integration/authorize',
    {
      config: { access: 'public' },
      schema: {
        summary: 'The consent form’s answer: back to the client with a code, or with access_denied',
        tags: ['oauth'],
        params: IntegrationParams,
        querystring: AuthorizeQuery,
        response: { 303: Redirect, 400: HtmlPage },
      },
    },
    async (request, reply) => {
      const { integration: name } = request.params;
      const { query } = request;
      const stopped = authorizationProblem(reply, name, query);
      if (stopped) return stopped;
      const target = new URL(query.redirect_uri!);
      const allowed = formOf(request.body).decision === 'allow';
      target.search = new URLSearchParams({
        ...(allowed ? { code: provider.issueCode(name, query) } : { error: 'access_denied' }),
        ...(query.state ? { state: query.state } : {}),
      }).toString();
      return reply.code(303).headers(REDIRECT_HEADERS).header('Location', target.toString()).send();
    },
  );

  app.post(
    '/:integration/token',
    {
      config: { access: 'public' },
      schema: {
        summary: 'The local OAuth provider’s token endpoint (authorization_code, refresh_token)',
        description:
          'A form (application/x-www-form-urlencoded) as RFC 6749 §4.1.3 and §6 say; the client authenticates with client_secret_basic or client_secret_post.',
        tags: ['oauth'],
        params: IntegrationParams,
        response: { 200: TokenAnswer, 400: OAuthErrorBody, 401: OAuthErrorBody },
      },
    },
    async (request, reply) => {
      const body = formOf(request.body);
      const { authorization } = request.headers;
      try {
        if (!appNamed(request.params.integration)) throw new OAuthError(400, 'invalid_request', 'No such app.');
        provider.authenticate(authorization, body);
        return reply.headers(NO_STORE).send(provider.token(request.params.integration, body));
      } catch (error) {
        return oauthError(reply, error, /^Basic /i.test(authorization ?? ''));
      }
    },
  );

  app.post(
    '/:integration/revoke',
    {
      config: { access: 'public' },
      schema: {
        summary: 'Revocation (RFC 7009): the grant of the token ends',
        description: 'A form with `token` (and `token_type_hint`); the client authenticates as at the token endpoint.',
        tags: ['oauth'],
        params: IntegrationParams,
        response: { 200: Type.Object({}), 401: OAuthErrorBody },
      },
    },
    async (request, reply) => {
      const { authorization } = request.headers;
      try {
        provider.authenticate(authorization, formOf(request.body));
      } catch (error) {
        return oauthError(reply, error, /^Basic /i.test(authorization ?? ''));
      }
      provider.revoke(request.params.integration, formOf(request.body).token ?? '');
      return {};
    },
  );

  // Unauthenticated, like Google's tokeninfo: it tells only about the token presented, which
  // whoever asks already holds. The sandbox asks it before it serves an OAuth app's request.
  app.post(
    '/:integration/introspect',
    {
      config: { access: 'public' },
      schema: {
        summary: 'Introspection (RFC 7662’s answer): whether an access token is active, for which app',
        description: 'A form with `token`.',
        tags: ['oauth'],
        params: IntegrationParams,
        response: { 200: IntrospectionAnswer },
      },
    },
    async (request, reply) => {
      const answer = provider.introspect(formOf(request.body).token ?? '');
      return reply
        .headers(NO_STORE)
        .send(answer.active && answer.app !== request.params.integration ? { active: false } : answer);
    },
  );

  // The app's own settings page, where a user removes an integration's access: the grant of the
  // access token presented ends, so the service's next refresh is refused and the connection breaks.
  app.post(
    '/:integration/remove-access',
    {
      config: { access: 'public' },
      schema: {
        summary:
          'The user removes the access they gave (as in the app’s own settings): by an access token of the grant',
        tags: ['oauth'],
        params: IntegrationParams,
        response: { 204: { description: 'The access was removed.', type: 'null' }, 401: OAuthErrorBody },
      },
    },
    async (request, reply) => {
      const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '';
      const active = provider.introspect(token);
      if (!active.active || active.app !== request.params.integration || !provider.revokeByAccessToken(token))
        return reply.code(401).send({ error: 'invalid_token', error_description: 'No active access token.' });
      return reply.code(204).send();
    },
  );
};

export default localProviderRoutes;
