import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { Integration, OAuthResultMessage } from 'forge-embed/client';
import { badRequest, escapeHtml, HTML_HEADERS, notFound, REDIRECT_HEADERS, rateLimited } from '../http.js';
import { confirmGrant, holdGrant, OAUTH_STATE_TTL_MS, openAuthorizeLink } from '../oauth-grants.js';
import { ConnectedIntegrationSchema, IntegrationParams, RateLimitedResponse } from '../schemas.js';
import { bodyObject, FieldChecker, isPlainObject } from '../validate.js';
import { API_PREFIX, LOCAL_PROVIDER_PREFIX } from '../views.js';
import { baseOf, type RoutePlugin } from './context.js';

/** The path of the small OAuth provider the service ships for the catalog's OAuth integrations. */

const OAuthQuerySchema = Type.Object({
  state: Type.Optional(Type.String({ description: 'The one-time state of the flow.' })),
  code: Type.Optional(Type.String()),
  error: Type.Optional(Type.String()),
  redirect_uri: Type.Optional(Type.String()),
});
const HtmlPage = {
  description: 'An HTML page for the OAuth popup.',
  content: { 'text/html': { schema: Type.String() } },
};
const Redirect = { description: 'A redirect to the next page of the OAuth flow.', type: 'null' };

const credentials: RoutePlugin = async (api, { store, catalog, secrets, allowedOrigins, limits, oauthGrantTtlMs }) => {
  const limitWrites = async (userId: string) =>
    rateLimited(await limits.hit('credentials', userId), 'This user saved credentials too often.');

  const integrationNamed = (name: string): Integration => {
    const integration = catalog.integrations.get(name);
    if (!integration) {
      throw notFound(`No integration ${name}. Integration names are the name of entries in a workflow's integrations.`);
    }
    return integration;
  };

  api.get(
    '/credentials',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Which integrations the token’s user has connected (never the secrets)',
        tags: ['credentials', 'embed'],
        response: { 200: Type.Object({ data: Type.Array(ConnectedIntegrationSchema) }) },
      },
    },
    async (request) => ({ data: await store.listCredentials(request.principal.userId) }),
  );

  api.post(
    '/credentials/:integration',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Store the required parameters of an integration (sealed at rest)',
        tags: ['credentials', 'embed'],
        params: IntegrationParams,
        // The fields are the integration's requiredParameters, which the catalog decides.
        body: Type.Unknown({
          description: 'An object of the integration’s requiredParameters names → values (strings).',
          examples: [{ apiKey: '…' }],
        }),
        response: { 200: ConnectedIntegrationSchema, 429: RateLimitedResponse('credential writes by this user') },
      },
    },
    async (request) => {
      const integration = integrationNamed(request.params.integration);
      if (integration.type === 'oauth2') {
        throw badRequest(
          `${integration.displayName} connects through OAuth: POST ${API_PREFIX}/credentials/${integration.name}/oauth.`,
        );
      }
      const wanted = integration.requiredParameters ?? [];
      const example = `{${wanted.map((p) => `"${p.name}": "…"`).join(', ')}}`;
      const fields = new FieldChecker(bodyObject(request.body, example));
      const values: Record<string, string> = {};
      for (const parameter of wanted) values[parameter.name] = fields.string(parameter.name, { max: 2000 });
      fields.onlyKnown(wanted.map((p) => p.name));
      fields.done();
      const { userId } = request.principal;
      await limitWrites(userId);
      const sealed = secrets.seal({ kind: 'parameters', values });
      const connectedAt = await store.saveCredential(userId, integration.name, sealed);
      return { integration: integration.name, connectedAt };
    },
  );

  api.post(
    '/credentials/:integration/oauth',
    {
      config: { access: 'user' },
      schema: {
        summary: 'A one-time, short-lived authorization URL for the OAuth popup',
        tags: ['credentials', 'embed'],
        params: IntegrationParams,
        response: {
          200: Type.Object({ url: Type.String(), expiresAt: Type.String({ format: 'date-time' }) }),
          429: RateLimitedResponse('sign-in windows started by this user'),
        },
      },
    },
    async (request) => {
      const integration = integrationNamed(request.params.integration);
      if (integration.type !== 'oauth2') {
        throw badRequest(
          `${integration.displayName} does not use OAuth; POST its required parameters to ${API_PREFIX}/credentials/${integration.name}.`,
        );
      }
      // The callback page posts its result to exactly this origin, so it must be one we serve.
      const origin = request.headers.origin;
      if (!origin || !allowedOrigins.includes(origin)) {
        throw badRequest(
          `Start OAuth from a page on an allowed origin (FORGE_ALLOWED_ORIGINS); this request came from ${origin ?? 'no origin'}.`,
        );
      }
      const { userId } = request.principal;
      rateLimited(await limits.hit('oauth', userId), 'This user started too many sign-in windows.');
      const { state, expiresAt } = await store.createOAuthState(userId, integration.name, origin, OAUTH_STATE_TTL_MS);
      return {
        url: `${baseOf(request)}${API_PREFIX}/oauth/authorize?state=${state}`,
        expiresAt: new Date(expiresAt).toISOString(),
      };
    },
  );

  // The element confirms the grant the callback page handed to it (server/oauth-grants.ts).
  api.post(
    '/credentials/:integration/oauth/confirm',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Confirm an OAuth grant: only a confirmed grant becomes the user’s credential',
        description:
          'The sign-in window posts a one-time grant value to the page that opened it; that page confirms it here with the same user’s token, from the same origin, within minutes.',
        tags: ['credentials', 'embed'],
        params: IntegrationParams,
        body: Type.Object(
          { grant: Type.String({ maxLength: 200, description: 'The value the sign-in window posted.' }) },
          { additionalProperties: false, examples: [{ grant: '<the value the sign-in window posted>' }] },
        ),
        response: { 200: ConnectedIntegrationSchema, 429: RateLimitedResponse('credential writes by this user') },
      },
    },
    async (request) => {
      const integration = integrationNamed(request.params.integration);
      const { grant } = request.body;
      const { userId } = request.principal;
      await limitWrites(userId);
      const connectedAt = await confirmGrant(store, grant, {
        userId,
        integration: integration.name,
        origin: request.headers.origin,
      });
      if (!connectedAt) {
        throw badRequest(
          `This ${integration.displayName} sign-in could not be confirmed: it was already used, has expired, or was started by another user or page. Choose Connect again.`,
        );
      }
      return { integration: integration.name, connectedAt };
    },
  );

  // The popup's first stop: a one-time state turns into a redirect to the provider's consent page.
  api.get(
    '/oauth/authorize',
    {
      config: { access: 'public' },
      schema: {
        summary: 'The OAuth popup’s first page',
        tags: ['oauth'],
        querystring: OAuthQuerySchema,
        response: { 302: Redirect, 400: HtmlPage },
      },
    },
    async (request, reply) => {
      const { state = '' } = request.query;
      // The link works once: a second visit (a replay, or an attacker's link opened again) finds nothing.
      const found = await openAuthorizeLink(store, state);
      if (!found) return expiredLink(reply);
      const base = baseOf(request);
      const redirect = new URL(`${base}${LOCAL_PROVIDER_PREFIX}/${found.integration}/authorize`);
      redirect.search = new URLSearchParams({
        response_type: 'code',
        client_id: 'forge-local-service',
        redirect_uri: `${base}${API_PREFIX}/oauth/callback`,
        state,
      }).toString();
      return reply.code(302).headers(REDIRECT_HEADERS).header('Location', redirect.toString()).send();
    },
  );

  api.get(
    '/oauth/callback',
    {
      config: { access: 'public' },
      schema: {
        summary: 'The OAuth popup’s last page: posts the result to the page that opened it',
        tags: ['oauth'],
        querystring: OAuthQuerySchema,
        response: { 200: HtmlPage, 400: HtmlPage },
      },
    },
    async (request, reply) => {
      const { query } = request;
      const found = await store.takeOAuthState(query.state ?? '');
      if (!found) return expiredLink(reply);
      const integration = catalog.integrations.get(found.integration);
      let message: OAuthResultMessage;
      if (query.error) {
        message = {
          type: 'forge-oauth',
          integration: found.integration,
          status: 'denied',
          message: 'Access was denied, so nothing was connected. Close this window; you can choose Connect again.',
        };
      } else if (!found.code || query.code !== found.code) {
        message = {
          type: 'forge-oauth',
          integration: found.integration,
          status: 'error',
          message:
            'The sign-in could not be confirmed, so nothing was connected. Close this window and choose Connect again.',
        };
      } else {
        // The local provider stands in for the token exchange. The grant waits for the element
        // that started the flow; only the opener on its origin learns how to confirm it.
        const grant = { kind: 'oauth2', accessToken: randomBytes(24).toString('base64url'), scope: 'default' };
        message = {
          type: 'forge-oauth',
          integration: found.integration,
          status: 'authorized',
          grant: await holdGrant(store, secrets, found, grant, oauthGrantTtlMs),
        };
      }
      const title =
        message.status === 'authorized'
          ? `${integration?.displayName ?? found.integration} access allowed`
          : 'Not connected';
      // JSON inside a script: escape "<" so no value can close the script element.
      const json = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');
      return sendPage(
        reply,
        200,
        page(
          title,
          `<p>${escapeHtml(message.message ?? 'The page that opened this window finishes connecting. You can close this window.')}</p>
<script>
if (window.opener) window.opener.postMessage(${json(message)}, ${json(found.openerOrigin)});
window.close();
</script>`,
        ),
      );
    },
  );
};

export default credentials;

/**
 * The local OAuth provider, beside the API (registered under LOCAL_PROVIDER_PREFIX): a consent
 * page for the catalog's OAuth integrations, and the form it posts (the only form body the
 * service reads, hence its own parser in this plugin's own scope).
 */
export const localProvider: RoutePlugin = async (app, { store, catalog }) => {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 10_000 },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );

  app.get(
    '/:integration/authorize',
    {
      config: { access: 'public' },
      schema: {
        summary: 'The local OAuth provider’s consent page',
        tags: ['oauth'],
        params: IntegrationParams,
        querystring: OAuthQuerySchema,
        response: { 200: HtmlPage, 400: HtmlPage },
      },
    },
    async (request, reply) => {
      const integration = catalog.integrations.get(request.params.integration);
      const { query } = request;
      if (!integration || !(await store.getOAuthState(query.state ?? ''))) return expiredLink(reply);
      const search = new URLSearchParams(query).toString();
      const action = `${LOCAL_PROVIDER_PREFIX}/${encodeURIComponent(integration.name)}/authorize?${search}`;
      return sendPage(
        reply,
        200,
        page(
          `Allow access to your ${integration.displayName} account?`,
          `<p>The integration will be able to read and send data on your behalf. This consent page is served by the local Forge service, standing in for ${escapeHtml(integration.displayName)}.</p>
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
        summary: 'The consent form’s answer: a redirect to the callback with a code, or with access_denied',
        tags: ['oauth'],
        params: IntegrationParams,
        querystring: OAuthQuerySchema,
        response: { 303: Redirect, 400: HtmlPage },
      },
    },
    async (request, reply) => {
      const { state = '', redirect_uri: redirectUri = '' } = request.query;
      // Like a real provider, redirect only to the registered callback: a code sent anywhere
      // else would leave the service.
      if (
        !catalog.integrations.get(request.params.integration) ||
        !(await store.getOAuthState(state)) ||
        redirectUri !== `${baseOf(request)}${API_PREFIX}/oauth/callback`
      ) {
        return expiredLink(reply);
      }
      const target = new URL(redirectUri);
      if (isPlainObject(request.body) && request.body.decision === 'allow') {
        const code = randomBytes(16).toString('base64url');
        await store.setOAuthCode(state, code);
        target.search = new URLSearchParams({ code, state }).toString();
      } else {
        target.search = new URLSearchParams({ error: 'access_denied', state }).toString();
      }
      return reply.code(303).headers(REDIRECT_HEADERS).header('Location', target.toString()).send();
    },
  );
};

function sendPage(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply.code(status).headers(HTML_HEADERS).send(html);
}

function expiredLink(reply: FastifyReply): FastifyReply {
  return sendPage(
    reply,
    400,
    page(
      'This link has expired',
      '<p>This sign-in link was already used or has expired. Close this window and choose Connect again.</p>',
    ),
  );
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
  body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: Canvas; color: CanvasText; }
  main { max-width: 26rem; padding: 2rem; }
  h1 { font-size: 1.25rem; margin: 0 0 .75rem; }
  p { line-height: 1.5; }
  form { display: flex; gap: .75rem; margin-top: 1.5rem; }
  button { font: inherit; padding: .6rem 1.25rem; border-radius: .5rem; border: 1px solid #8886; background: transparent; color: inherit; cursor: pointer; }
  button.primary { background: #4f46e5; border-color: #4f46e5; color: white; }
  button:focus-visible { outline: 3px solid #818cf8; outline-offset: 2px; }
</style></head>
<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
}
