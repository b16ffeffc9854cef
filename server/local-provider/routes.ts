import { randomBytes } from 'node:crypto';
import { escapeHtml, REDIRECT_HEADERS } from '../http.js';
import { expiredLink, HtmlPage, OAuthQuerySchema, page, Redirect, sendPage } from '../oauth/pages.js';
import { baseOf, type RoutePlugin } from '../routes/context.js';
import { IntegrationParams } from '../schemas.js';
import { isPlainObject } from '../validate.js';
import { API_PREFIX, LOCAL_PROVIDER_PREFIX } from '../views.js';

/**
 * The local OAuth provider, beside the API (registered under LOCAL_PROVIDER_PREFIX): a consent
 * page for the catalog's OAuth integrations, and the form it posts (the only form body the
 * service reads, hence its own parser in this plugin's own scope).
 */
const localProvider: RoutePlugin = async (app, { store, catalog }) => {
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
      if (!integration || !(await store.oauth.getState(query.state ?? ''))) return expiredLink(reply);
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
        !(await store.oauth.getState(state)) ||
        redirectUri !== `${baseOf(request)}${API_PREFIX}/oauth/callback`
      ) {
        return expiredLink(reply);
      }
      const target = new URL(redirectUri);
      if (isPlainObject(request.body) && request.body.decision === 'allow') {
        const code = randomBytes(16).toString('base64url');
        await store.oauth.setCode(state, code);
        target.search = new URLSearchParams({ code, state }).toString();
      } else {
        target.search = new URLSearchParams({ error: 'access_denied', state }).toString();
      }
      return reply.code(303).headers(REDIRECT_HEADERS).header('Location', target.toString()).send();
    },
  );
};

export default localProvider;
