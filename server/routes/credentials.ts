import { randomBytes } from 'node:crypto';
import type { Integration, OAuthResultMessage } from '../../src/api/types.js';
import type { ServiceDeps } from '../app.js';
import { badRequest, escapeHtml, notFound, rateLimited, sendHtml } from '../http.js';
import { confirmGrant, holdGrant, OAUTH_STATE_TTL_MS, openAuthorizeLink } from '../oauth-grants.js';
import type { Router } from '../router.js';
import { bodyObject, FieldChecker } from '../validate.js';
import { API_PREFIX } from '../views.js';

/** The path of the small OAuth provider the service ships for the catalog's OAuth integrations. */
export const LOCAL_PROVIDER_PREFIX = '/local-oauth';

export function registerCredentials(
  router: Router,
  { store, catalog, secrets, allowedOrigins, limits, oauthGrantTtlMs }: ServiceDeps,
): void {
  const limitWrites = (userId: string) =>
    rateLimited(limits.hit('credentials', userId), 'This user saved credentials too often.');

  const integrationNamed = (name: string): Integration => {
    const integration = catalog.integrations.get(name);
    if (!integration) {
      throw notFound(`No integration ${name}. Integration names are the name of entries in a workflow's integrations.`);
    }
    return integration;
  };

  router.add('GET', '/credentials', 'user', ({ principal }) => ({
    body: { data: store.listCredentials((principal as { userId: string }).userId) },
  }));

  router.add('POST', '/credentials/:integration', 'user', async ({ params, principal, body }) => {
    const integration = integrationNamed(params.integration!);
    if (integration.type === 'oauth2') {
      throw badRequest(
        `${integration.displayName} connects through OAuth: POST ${API_PREFIX}/credentials/${integration.name}/oauth.`,
      );
    }
    const wanted = integration.requiredParameters ?? [];
    const example = `{${wanted.map((p) => `"${p.name}": "…"`).join(', ')}}`;
    const fields = new FieldChecker(bodyObject(await body(), example));
    const values: Record<string, string> = {};
    for (const parameter of wanted) values[parameter.name] = fields.string(parameter.name, { max: 2000 });
    fields.onlyKnown(wanted.map((p) => p.name));
    fields.done();
    const userId = (principal as { userId: string }).userId;
    limitWrites(userId);
    const connectedAt = store.saveCredential(userId, integration.name, secrets.seal({ kind: 'parameters', values }));
    return { body: { integration: integration.name, connectedAt } };
  });

  router.add('POST', '/credentials/:integration/oauth', 'user', ({ params, principal, req, base }) => {
    const integration = integrationNamed(params.integration!);
    if (integration.type !== 'oauth2') {
      throw badRequest(
        `${integration.displayName} does not use OAuth; POST its required parameters to ${API_PREFIX}/credentials/${integration.name}.`,
      );
    }
    // The callback page posts its result to exactly this origin, so it must be one we serve.
    const origin = req.headers.origin;
    if (!origin || !allowedOrigins.includes(origin)) {
      throw badRequest(
        `Start OAuth from a page on an allowed origin (FORGE_ALLOWED_ORIGINS); this request came from ${origin ?? 'no origin'}.`,
      );
    }
    const userId = (principal as { userId: string }).userId;
    rateLimited(limits.hit('oauth', userId), 'This user started too many sign-in windows.');
    const { state, expiresAt } = store.createOAuthState(userId, integration.name, origin, OAUTH_STATE_TTL_MS);
    return {
      body: {
        url: `${base}${API_PREFIX}/oauth/authorize?state=${state}`,
        expiresAt: new Date(expiresAt).toISOString(),
      },
    };
  });

  // The element confirms the grant the callback page handed to it (server/oauth-grants.ts).
  router.add('POST', '/credentials/:integration/oauth/confirm', 'user', async ({ params, principal, body, req }) => {
    const integration = integrationNamed(params.integration!);
    const fields = new FieldChecker(bodyObject(await body(), '{"grant": "<the value the sign-in window posted>"}'));
    const grant = fields.string('grant', { max: 200 });
    fields.onlyKnown(['grant']);
    fields.done();
    const userId = (principal as { userId: string }).userId;
    limitWrites(userId);
    const connectedAt = confirmGrant(store, grant, {
      userId,
      integration: integration.name,
      origin: req.headers.origin,
    });
    if (!connectedAt) {
      throw badRequest(
        `This ${integration.displayName} sign-in could not be confirmed: it was already used, has expired, or was started by another user or page. Choose Connect again.`,
      );
    }
    return { body: { integration: integration.name, connectedAt } };
  });

  // The popup's first stop: a one-time state turns into a redirect to the provider's consent page.
  router.add('GET', '/oauth/authorize', 'public', ({ query, res, base }) => {
    const found = openAuthorizeLink(store, query.get('state') ?? '');
    if (!found) return expiredLink(res);
    const redirect = new URL(`${base}${LOCAL_PROVIDER_PREFIX}/${found.integration}/authorize`);
    redirect.search = new URLSearchParams({
      response_type: 'code',
      client_id: 'forge-local-service',
      redirect_uri: `${base}${API_PREFIX}/oauth/callback`,
      state: query.get('state')!,
    }).toString();
    res.writeHead(302, { Location: redirect.toString(), ...REDIRECT_HEADERS });
    res.end();
    return undefined;
  });

  router.add('GET', '/oauth/callback', 'public', ({ query, res }) => {
    const found = store.takeOAuthState(query.get('state') ?? '');
    if (!found) return expiredLink(res);
    const integration = catalog.integrations.get(found.integration);
    let message: OAuthResultMessage;
    if (query.get('error')) {
      message = {
        type: 'forge-oauth',
        integration: found.integration,
        status: 'denied',
        message: 'Access was denied, so nothing was connected. Close this window; you can choose Connect again.',
      };
    } else if (!found.code || query.get('code') !== found.code) {
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
        grant: holdGrant(store, secrets, found, grant, oauthGrantTtlMs),
      };
    }
    const title =
      message.status === 'authorized'
        ? `${integration?.displayName ?? found.integration} access allowed`
        : 'Not connected';
    // JSON inside a script: escape "<" so no value can close the script element.
    const json = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');
    sendHtml(
      res,
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
    return undefined;
  });

  // The local OAuth provider: a consent page for the catalog's OAuth integrations.
  router.add('GET', `${LOCAL_PROVIDER_PREFIX}/:integration/authorize`, 'public', ({ params, query, res }) => {
    const integration = catalog.integrations.get(params.integration!);
    const state = query.get('state') ?? '';
    if (!integration || !store.getOAuthState(state)) return expiredLink(res);
    const action = `${LOCAL_PROVIDER_PREFIX}/${encodeURIComponent(integration.name)}/authorize?${query.toString()}`;
    sendHtml(
      res,
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
    return undefined;
  });

  router.add(
    'POST',
    `${LOCAL_PROVIDER_PREFIX}/:integration/authorize`,
    'public',
    async ({ params, query, req, res, base }) => {
      const state = query.get('state') ?? '';
      const redirectUri = query.get('redirect_uri') ?? '';
      // Like a real provider, redirect only to the registered callback: a code sent anywhere
      // else would leave the service.
      if (
        !catalog.integrations.get(params.integration!) ||
        !store.getOAuthState(state) ||
        redirectUri !== `${base}${API_PREFIX}/oauth/callback`
      ) {
        return expiredLink(res);
      }
      const form = new URLSearchParams(await readForm(req));
      const target = new URL(redirectUri);
      if (form.get('decision') === 'allow') {
        const code = randomBytes(16).toString('base64url');
        store.setOAuthCode(state, code);
        target.search = new URLSearchParams({ code, state }).toString();
      } else {
        target.search = new URLSearchParams({ error: 'access_denied', state }).toString();
      }
      res.writeHead(303, { Location: target.toString(), ...REDIRECT_HEADERS });
      res.end();
      return undefined;
    },
  );
}

async function readForm(req: import('node:http').IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req as AsyncIterable<Buffer>) {
    text += chunk.toString('utf8');
    if (text.length > 10_000) break;
  }
  return text;
}

/** The popup's redirects tell nobody where it came from: the URLs carry the state and the code. */
const REDIRECT_HEADERS = { 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' };

function expiredLink(res: import('node:http').ServerResponse): undefined {
  sendHtml(
    res,
    400,
    page(
      'This link has expired',
      '<p>This sign-in link was already used or has expired. Close this window and choose Connect again.</p>',
    ),
  );
  return undefined;
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
