/**
 * An independent OAuth 2.0 authorization server for the service's tests: oidc-provider (a
 * certified implementation), started inside the test process on loopback. Its interaction
 * finishes login and consent at once, or denies when asked; it counts the requests made to its
 * token endpoint.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface TestProvider {
  issuer: string;
  /** Requests to the token endpoint, by grant type. */
  tokenRequests: { authorization_code: number; refresh_token: number };
  /** The next consent is refused (access_denied). */
  denyNext: boolean;
  /** Fields added to every token answer, as providers add their own (Slack's `team`). */
  tokenAnswerExtras: Record<string, unknown>;
  close(): Promise<void>;
}

export interface ProviderClient {
  client_id: string;
  client_secret: string;
  token_endpoint_auth_method: 'client_secret_basic' | 'client_secret_post';
}

/** Starts listening first: the clients' redirect URI is known only once the service listens. */
export async function startProvider(): Promise<{
  issuer: string;
  configure(clients: ProviderClient[], redirectUri: string, accessTokenTtlSeconds?: number): TestProvider;
}> {
  let handler:
    | ((req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void)
    | undefined;
  const server: Server = createServer((req, res) => (handler ? handler(req, res) : res.writeHead(503).end()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    configure(clients, redirectUri, accessTokenTtlSeconds = 3600) {
      const provider = new Provider(issuer, {
        clients: clients.map((c) => ({
          ...c,
          redirect_uris: [redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
        })),
        scopes: ['read', 'write'],
        clockTolerance: 0,
        pkce: { required: () => true },
        issueRefreshToken: () => true,
        rotateRefreshToken: true,
        ttl: { AccessToken: accessTokenTtlSeconds, Interaction: 600, Session: 600, Grant: 600, RefreshToken: 86400 },
        features: { revocation: { enabled: true }, devInteractions: { enabled: false } },
        interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
        findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id }) }),
      });
      const state: TestProvider = {
        issuer,
        tokenRequests: { authorization_code: 0, refresh_token: 0 },
        denyNext: false,
        tokenAnswerExtras: {},
        close: () =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            // Keep-alive connections (the test's own fetches) would hold the close open.
            server.closeAllConnections();
          }),
      };
      // Counted after the provider has read the request: its parsed parameters name the grant.
      provider.use(
        async (
          ctx: { path: string; method: string; body?: unknown; oidc?: { params?: { grant_type?: string } } },
          next: () => Promise<void>,
        ) => {
          await next();
          const grant = ctx.oidc?.params?.grant_type as keyof TestProvider['tokenRequests'] | undefined;
          if (ctx.method === 'POST' && ctx.path === '/token' && grant && grant in state.tokenRequests) {
            state.tokenRequests[grant]++;
            const answer = ctx.body as Record<string, unknown> | undefined;
            if (answer?.access_token) ctx.body = { ...answer, ...state.tokenAnswerExtras };
          }
        },
      );
      const callback = provider.callback();
      handler = (req, res) => {
        if (req.url?.startsWith('/interaction/')) return void interact(provider, state, req, res);
        callback(req, res);
      };
      return state;
    },
  };
}

async function interact(
  provider: InstanceType<typeof Provider>,
  state: TestProvider,
  req: import('node:http').IncomingMessage,
  res: import('node:http').ServerResponse,
): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  if (state.denyNext) {
    state.denyNext = false;
    await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'The user said no.' });
    return;
  }
  if (details.prompt.name === 'login') {
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: 'user-1' } },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  const grant = new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
  grant.addOIDCScope(String(details.params.scope ?? ''));
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

/** A browser in miniature: follows redirects and keeps cookies, until `stopAt` is reached. */
export async function followRedirects(start: string, stopAt: string): Promise<string> {
  const jar = new Map<string, string>();
  let url = start;
  for (let hop = 0; hop < 20; hop++) {
    if (url.startsWith(stopAt)) return url;
    const response = await fetch(url, {
      redirect: 'manual',
      headers: { Cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';');
      const at = pair.indexOf('=');
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
    const location = response.headers.get('location');
    if (!location) throw new Error(`${url} answered ${response.status} without a redirect: ${await response.text()}`);
    url = new URL(location, url).toString();
  }
  throw new Error(`too many redirects from ${start}`);
}
