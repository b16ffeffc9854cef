import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Integration, OAuthResultMessage } from 'forge-embed/client';
import type { AppConfig } from '../catalog/auth.js';
import { absoluteUrl, placeCredential } from '../engine/placement.js';
import { badRequest, escapeHtml, HttpProblem, notFound, REDIRECT_HEADERS, rateLimited } from '../http.js';
import {
  authorizeUrl,
  ClientNotConfigured,
  clientCredentials,
  finishAuthorization,
  identify,
  newCodeVerifier,
  type OAuthApp,
  ProviderFailure,
} from '../oauth/client.js';
import { expiredLink, HtmlPage, OAuthQuerySchema, page, Redirect, sendPage } from '../oauth/pages.js';
import { confirmGrant, type Flow, holdGrant, OAUTH_STATE_TTL_MS, openAuthorizeLink } from '../oauth-grants.js';
import { ConnectedIntegrationSchema, IntegrationParams, OAuthStartSchema, RateLimitedResponse } from '../schemas.js';
import { traced } from '../trace.js';
import { bodyObject, FieldChecker, isPlainObject } from '../validate.js';
import { API_PREFIX } from '../views.js';
import { baseOf, type RoutePlugin, redirectUri, serviceOrigin } from './context.js';

/** What an OAuth flow keeps, sealed, beside its state until the callback. */
interface SealedFlow {
  codeVerifier: string;
  connection: Record<string, string>;
  /**
   * The host's return page (on the opener's origin), for a popup the consent page cut from its
   * opener (Cross-Origin-Opener-Policy): the callback hands the result over through it.
   */
  returnUrl?: string;
}

/**
 * The optional `returnUrl` of a flow's start: the host's return page, which must be on the origin
 * that starts the flow (the result goes to that origin only, as with the opener).
 */
function returnPageOf(body: unknown, origin: string): string | undefined {
  const given = isPlainObject(body) ? body.returnUrl : undefined;
  if (given === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = typeof given === 'string' && given.length <= 2000 ? new URL(given) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || url.origin !== origin || url.username || url.password)
    throw badRequest(
      `returnUrl must be the address of the return page on this page's own origin (${origin}), such as ${origin}/forge-oauth-return.html.`,
    );
  url.hash = '';
  return url.toString();
}

/** The problem for an OAuth integration whose client the host has not configured. */
export function notConfigured(integration: Integration, variable: string): HttpProblem {
  return new HttpProblem(
    409,
    'integration-not-configured',
    'Integration not configured',
    `${integration.displayName} can't be connected right now: the service has no OAuth client for it. The host sets the environment variable ${variable} and restarts the service.`,
  );
}

const credentials: RoutePlugin = async (api, deps) => {
  const { store, catalog, secrets, allowedOrigins, limits, oauthGrantTtlMs, env, log, tracing } = deps;
  /** The integration's OAuth client (every OAuth integration has one: server/catalog/auth.ts). */
  const oauthAppOf = (name: string, request: FastifyRequest): OAuthApp | undefined => {
    const auth = catalog.apps.get(name)?.auth;
    return auth?.kind === 'oauth2'
      ? { integration: name, auth, serviceUrl: serviceOrigin(deps, request.server) }
      : undefined;
  };
  const limitWrites = async (userId: string) =>
    rateLimited(await limits.hit('credentials', userId), 'This user saved credentials too often.');

  const integrationNamed = (name: string): Integration => {
    const integration = catalog.integrations.get(name);
    if (!integration) {
      throw notFound(`No integration ${name}. Integration names are the name of entries in a workflow's integrations.`);
    }
    return integration;
  };

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
      const app = catalog.apps.get(integration.name) ?? { parameters: [] };
      for (const parameter of wanted) {
        const value = fields.string(parameter.name, { max: 2000 });
        values[parameter.name] = value;
        // A value that goes into a URL must fit its pattern, so it can never move the credential elsewhere.
        const rule = app.parameters.find((p) => p.name === parameter.name);
        if (value && rule?.pattern && !rule.pattern.test(value)) {
          // The modal shows this next to the field: plain words, never the expression.
          fields.errors.push({
            path: `body.${parameter.name}`,
            message: rule.patternMessage ?? `This is not a valid ${parameter.displayName}: check it and try again.`,
          });
        }
      }
      fields.onlyKnown(wanted.map((p) => p.name));
      fields.done();
      const { userId } = request.principal;
      await limitWrites(userId);
      await verifyKey(integration, app, values);
      const sealed = secrets.seal({ kind: 'parameters', values });
      const connectedAt = await store.credentials.save(userId, integration.name, sealed);
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
          200: OAuthStartSchema,
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
      const oauthApp = oauthAppOf(integration.name, request);
      const connection: Record<string, string> = {};
      if (oauthApp) {
        try {
          clientCredentials(oauthApp, env);
        } catch (error) {
          if (error instanceof ClientNotConfigured) throw notConfigured(integration, error.variable);
          throw error;
        }
        // Values that are part of the provider's own URLs (a Shopify shop) come before the redirect.
        const { returnUrl: _returnUrl, ...given } = isPlainObject(request.body) ? request.body : {};
        const fields = new FieldChecker(given);
        for (const [name, pattern] of Object.entries(oauthApp.auth.connectionValues)) {
          const value = fields.string(name, { max: 200 });
          if (value && !new RegExp(pattern, 'u').test(value))
            fields.errors.push({
              path: `body.${name}`,
              message: `This is not a valid ${name}: check it and try again.`,
            });
          connection[name] = value;
        }
        fields.onlyKnown(Object.keys(oauthApp.auth.connectionValues));
        fields.done();
      }
      const returnUrl = returnPageOf(request.body, origin);
      const { userId } = request.principal;
      rateLimited(await limits.hit('oauth', userId), 'This user started too many sign-in windows.');
      const flow: SealedFlow = { codeVerifier: newCodeVerifier(), connection, ...(returnUrl ? { returnUrl } : {}) };
      const { state, expiresAt } = await store.oauth.createState(
        userId,
        integration.name,
        origin,
        OAUTH_STATE_TTL_MS,
        secrets.seal(flow),
      );
      return {
        url: `${baseOf(request)}${API_PREFIX}/oauth/authorize?state=${state}`,
        expiresAt: new Date(expiresAt).toISOString(),
      };
    },
  );

  /**
   * The provider's answer, exchanged for tokens server-side. The grant then waits for the element
   * that started the flow (server/oauth-grants.ts); denied or failed, nothing is stored.
   */
  const finishFlow = async (
    oauthApp: OAuthApp,
    found: Flow & { sealedFlow: string },
    request: FastifyRequest,
    callback: URLSearchParams,
  ): Promise<OAuthResultMessage> => {
    const displayName = catalog.integrations.get(found.integration)?.displayName ?? found.integration;
    const base = { type: 'forge-oauth', integration: found.integration } as const;
    try {
      const flow = secrets.open<SealedFlow>(found.sealedFlow);
      const exchanged = await traced(
        tracing,
        `oauth code exchange ${found.integration}`,
        { kind: 'client', attributes: { 'forge.integration': found.integration } },
        () =>
          finishAuthorization(oauthApp, env, callback, {
            state: callback.get('state') ?? '',
            ...flow,
            redirectUri: redirectUri(deps, request),
          }),
      );
      const credential = await identify(oauthApp, exchanged);
      return {
        ...base,
        status: 'authorized',
        grant: await holdGrant(store, secrets, found, credential, oauthGrantTtlMs),
      };
    } catch (error) {
      if (!(error instanceof ProviderFailure || error instanceof ClientNotConfigured)) throw error;
      const answer = error instanceof ProviderFailure ? error.providerAnswer : error.message;
      log(`oauth ${found.integration}: sign-in not completed: ${answer}`);
      if (error instanceof ProviderFailure && error.reason === 'denied') {
        return {
          ...base,
          status: 'denied',
          message: 'Access was denied, so nothing was connected. Close this window; you can choose Connect again.',
        };
      }
      return {
        ...base,
        status: 'error',
        message: `${displayName} could not be connected (${error instanceof ProviderFailure ? error.message : "it can't be connected right now"}), so nothing was connected. Close this window and choose Connect again.`,
      };
    }
  };

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
      const connectedAt = await confirmGrant(
        store,
        grant,
        { userId, integration: integration.name, origin: request.headers.origin },
        (sealed) => secrets.open<{ account?: string }>(sealed).account ?? null,
      );
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
      const oauthApp = oauthAppOf(found.integration, request);
      if (oauthApp && found.sealedFlow) {
        let location: string;
        try {
          location = await authorizeUrl(oauthApp, env, {
            state,
            ...secrets.open<SealedFlow>(found.sealedFlow),
            redirectUri: redirectUri(deps, request),
          });
        } catch (error) {
          if (!(error instanceof ClientNotConfigured || error instanceof ProviderFailure)) throw error;
          log(`oauth ${found.integration}: cannot start the sign-in: ${error.message}`);
          return sendPage(
            reply,
            400,
            page('Not connected', "<p>This app can't be connected right now. Close this window.</p>"),
          );
        }
        return reply.code(302).headers(REDIRECT_HEADERS).header('Location', location).send();
      }
      return expiredLink(reply);
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
      const found = await store.oauth.takeState(query.state ?? '');
      if (!found) return expiredLink(reply);
      const integration = catalog.integrations.get(found.integration);
      let message: OAuthResultMessage;
      const oauthApp = oauthAppOf(found.integration, request);
      if (oauthApp && found.sealedFlow) {
        message = await finishFlow(
          oauthApp,
          found as typeof found & { sealedFlow: string },
          request,
          new URLSearchParams(request.query),
        );
      } else {
        // A flow started before this integration's client existed (a state from an older version).
        message = {
          type: 'forge-oauth',
          integration: found.integration,
          status: 'error',
          message:
            'The sign-in could not be confirmed, so nothing was connected. Close this window and choose Connect again.',
        };
      }
      const returnUrl = found.sealedFlow ? secrets.open<SealedFlow>(found.sealedFlow).returnUrl : undefined;
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
<p id="detached" hidden>This window lost its link to the page that opened it, so that page cannot finish connecting. Close this window and choose Connect again.</p>
<script>
if (window.opener) {
  window.opener.postMessage(${json(message)}, ${json(found.openerOrigin)});
  window.close();
} else if (${json(returnUrl ?? null)}) {
  // The consent page cut this window from its opener (Cross-Origin-Opener-Policy): the host's
  // return page, on the opener's origin, hands the result to it. The fragment never reaches a server.
  location.replace(${json(returnUrl ?? '')} + '#' + encodeURIComponent(JSON.stringify(${json(message)})));
} else {
  document.getElementById('detached').hidden = false;
}
</script>`,
        ),
      );
    },
  );
};

export default credentials;

/**
 * An API key whose `auth` has a `verify` request is tried before it is stored: an app that
 * refuses it makes the save a 400 now rather than a failed run later.
 */
async function verifyKey(integration: Integration, app: AppConfig, values: Record<string, string>): Promise<void> {
  const verify = app.auth && app.auth.kind !== 'oauth2' ? app.auth.verify : undefined;
  if (!verify) return;
  const access = placeCredential(app, { kind: 'parameters', values });
  const url = access?.baseUrl ? new URL(absoluteUrl(verify.path, access.baseUrl)!) : undefined;
  if (!access || !url)
    throw badRequest(`${integration.displayName} cannot be checked: its API address is missing a value.`);
  for (const [name, value] of Object.entries(access.query)) url.searchParams.set(name, value);
  let status: number;
  try {
    const response = await fetch(url, {
      method: verify.method ?? 'GET',
      headers: access.headers,
      redirect: 'manual',
      signal: AbortSignal.timeout(VERIFY_TIMEOUT_MS),
    });
    await response.body?.cancel();
    status = response.status;
  } catch (error) {
    throw badRequest(
      `${integration.displayName} could not be reached to check these values (${(error as Error).name === 'TimeoutError' ? 'no answer in time' : 'network error'}), so nothing was saved. Try again.`,
    );
  }
  if (status === 401 || status === 403) {
    throw badRequest(
      `${integration.displayName} refused these values (${status}), so nothing was saved. Check them and try again.`,
    );
  }
  if (status >= 300) {
    throw badRequest(
      `${integration.displayName} answered ${status} when these values were checked, so nothing was saved. Try again.`,
    );
  }
}

const VERIFY_TIMEOUT_MS = 10_000;
