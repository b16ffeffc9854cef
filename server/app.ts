import { createReadStream, existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, join } from 'node:path';
import { Credentials, type Principal } from './auth.js';
import { Catalog } from './catalog/catalog.js';
import { Delivery, type DeliveryOptions } from './engine/delivery.js';
import { Engine } from './engine/engine.js';
import { forbidden, HttpProblem, notFound, originOfHost, sendJson, sendProblem, unauthorized } from './http.js';
import { DEMO_CATALOG } from './paths.js';
import { RateLimiter, type RateLimits } from './rate-limit.js';
import { type Access, bodyOf, checkAccess, Router } from './router.js';
import { LOCAL_PROVIDER_PREFIX, registerCredentials } from './routes/credentials.js';
import { registerHooks } from './routes/hooks.js';
import { registerSettings } from './routes/settings.js';
import { registerSetup } from './routes/setup.js';
import { registerUsers } from './routes/users.js';
import { registerWorkflows } from './routes/workflows.js';
import { DEFAULT_SANDBOX_URL } from './sandbox.js';
import { SecretBox } from './secrets.js';
import { Store } from './store/store.js';
import { API_PREFIX } from './views.js';

export interface ServiceOptions {
  /** TCP port; 0 picks a free one. Default 4010. */
  port?: number;
  host?: string;
  /** SQLite file, or `:memory:`. Default `forge.db` in the working directory. */
  db?: string;
  /** Catalog file of the host account's parent workflows. Default: the demo catalog. */
  catalog?: string;
  /** The host's API key; otherwise the stored one, or a new one. */
  apiKey?: string;
  /** Origins the embed surface answers cross-origin (CORS). */
  allowedOrigins?: string[];
  /** Where request logs go; default nowhere. */
  log?: (line: string) => void;
  /** What `{{env.SANDBOX_URL}}` in block parameters stands for: the sandbox the demo catalog's HTTP blocks call. */
  sandboxUrl?: string;
  /** Run schedule blocks at every minute. Default true; tests turn it off and call `engine.tick(date)`. */
  scheduler?: boolean;
  /** Retry backoff and attempt timeout of error deliveries to the host. */
  delivery?: Pick<DeliveryOptions, 'backoff' | 'timeoutMs'>;
  /** How long an HTTP block waits for an answer, in ms. Default 10 s. */
  httpTimeoutMs?: number;
  /**
   * Let the error webhook point at loopback, private and link-local addresses. Off by default:
   * otherwise it can probe the service's own network. The demo turns it on.
   */
  allowPrivateWebhooks?: boolean;
  /** Limits per action (token, credentials, oauth, webhook); the defaults are generous. */
  rateLimits?: RateLimits;
  /** How long an OAuth grant waits for the element's confirmation, in ms. Default 5 minutes. */
  oauthGrantTtlMs?: number;
}

export interface ServiceDeps {
  store: Store;
  catalog: Catalog;
  credentials: Credentials;
  secrets: SecretBox;
  allowedOrigins: string[];
  allowPrivateWebhooks: boolean;
  limits: RateLimiter;
  oauthGrantTtlMs: number | undefined;
}

export interface RunningService extends ServiceDeps {
  server: Server;
  /** `http://localhost:<port>`. */
  url: string;
  /**
   * The API key when the service knows it: the configured one, or one it generated on this
   * start. Otherwise undefined: the database keeps only a hash of a generated key.
   */
  apiKey: string | undefined;
  apiKeyGenerated: boolean;
  /** The routes it answers; tests walk `router.table` so that no endpoint is left out. */
  router: Router;
  /** Runs workflows: `engine.tick(date)` runs what is scheduled in that minute. */
  engine: Engine;
  delivery: Delivery;
  close(): Promise<void>;
}

/** Embed-surface routes answer browsers on the allowed origins; nothing else does. */
const crossOrigin = (access: Access) => access === 'any' || access === 'user';

export async function startService(options: ServiceOptions = {}): Promise<RunningService> {
  const dbPath = options.db ?? 'forge.db';
  const catalog = new Catalog(options.catalog ?? DEMO_CATALOG);
  const secrets = SecretBox.open(dbPath);
  const store = new Store(dbPath);
  const { credentials, apiKey, generated } = await Credentials.load(store, secrets, options.apiKey);
  const deps: ServiceDeps = {
    store,
    catalog,
    credentials,
    secrets,
    allowedOrigins: options.allowedOrigins ?? [],
    allowPrivateWebhooks: options.allowPrivateWebhooks ?? false,
    limits: new RateLimiter(options.rateLimits),
    oauthGrantTtlMs: options.oauthGrantTtlMs,
  };
  const delivery = new Delivery({
    store,
    secrets,
    ...options.delivery,
    allowPrivateTargets: deps.allowPrivateWebhooks,
    log: options.log,
  });
  const engine = new Engine({
    store,
    catalog,
    secrets: deps.secrets,
    delivery,
    env: { SANDBOX_URL: (options.sandboxUrl ?? DEFAULT_SANDBOX_URL).replace(/\/+$/, '') },
    httpTimeoutMs: options.httpTimeoutMs,
    log: options.log,
  });
  const router = new Router();
  registerUsers(router, deps);
  registerWorkflows(router, deps);
  registerCredentials(router, deps);
  registerSetup(router, deps);
  registerHooks(router, engine, deps.limits);
  registerSettings(router, deps, delivery);
  router.add('GET', '/.well-known/jwks.json', 'public', () => ({ body: credentials.jwks }));
  router.add('GET', '/icons/:file', 'public', ({ params, res }) => serveIcon(catalog, params.file!, res));
  router.add('GET', '/icons/blocks/:file', 'public', ({ params, res }) =>
    serveIcon(catalog, `blocks/${params.file!}`, res),
  );

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://service');
    const base = originOfHost(req.headers.host) ?? `http://localhost:${port}`;
    const method = req.method ?? 'GET';
    let path: string;
    if (url.pathname.startsWith(`${API_PREFIX}/`)) path = url.pathname.slice(API_PREFIX.length);
    else if (url.pathname.startsWith(`${LOCAL_PROVIDER_PREFIX}/`)) path = url.pathname;
    else {
      throw notFound(`No endpoint at ${url.pathname}. Every path of the service begins with ${API_PREFIX}.`);
    }
    const origin = req.headers.origin;
    const lookup = router.match(
      method === 'OPTIONS' ? (req.headers['access-control-request-method'] ?? 'GET') : method,
      path,
    );
    const corsAllowed =
      !!lookup.found && crossOrigin(lookup.found.route.access) && !!origin && deps.allowedOrigins.includes(origin);
    if (corsAllowed) {
      res.setHeader('Access-Control-Allow-Origin', origin!);
      res.setHeader('Vary', 'Origin');
    }
    if (method === 'OPTIONS') {
      if (corsAllowed) {
        res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE');
        res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type');
        res.setHeader('Access-Control-Max-Age', '600');
      }
      res.writeHead(204).end();
      return;
    }
    if (!lookup.found) {
      if (lookup.allowed.length > 0) {
        throw new HttpProblem(
          405,
          'method-not-allowed',
          'Method not allowed',
          `${url.pathname} answers ${lookup.allowed.join(', ')}, not ${method}.`,
          undefined,
          {
            Allow: lookup.allowed.join(', '),
          },
        );
      }
      throw notFound(`No endpoint ${method} ${url.pathname}. See the API section of the README for the endpoints.`);
    }
    const { route, params } = lookup.found;
    let principal: Principal = { kind: 'apiKey' };
    if (route.access !== 'public') {
      principal = await credentials.authenticate(req.headers.authorization);
      // An API key never belongs in a browser: a request that a page sent is refused.
      if (principal.kind === 'apiKey' && sentByBrowser(req)) {
        throw forbidden(
          'API keys must stay on your backend; this request came from a browser page. Use a user token there.',
        );
      }
      if (principal.kind === 'user' && !store.getUser(principal.userId)) {
        throw unauthorized('The user of this token no longer exists. Create the user again and fetch a new token.');
      }
      checkAccess(route.access, principal);
    }
    const reply = await route.handler({
      req,
      res,
      params,
      query: url.searchParams,
      base,
      principal,
      body: bodyOf(req),
    });
    if (reply) sendJson(res, reply.status ?? 200, reply.body);
  };

  const server = createServer((req, res) => {
    const started = performance.now();
    handle(req, res)
      .catch((error: unknown) => {
        if (error instanceof HttpProblem) return sendProblem(res, error);
        // Never leak internals: the log gets the error, the caller a problem document.
        console.error(error);
        if (!res.headersSent) {
          sendProblem(
            res,
            new HttpProblem(
              500,
              'internal',
              'Internal error',
              'The service failed to answer. Try again; if it keeps failing, see the service log.',
            ),
          );
        } else res.destroy();
      })
      .finally(() => {
        options.log?.(`${req.method} ${req.url} ${res.statusCode} ${(performance.now() - started).toFixed(1)}ms`);
      });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 4010, options.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  // Entries a previous run could not deliver go out now.
  delivery.start();
  if (options.scheduler !== false) engine.startScheduler();

  return {
    ...deps,
    server,
    url: `http://localhost:${port}`,
    apiKey,
    apiKeyGenerated: generated,
    router,
    engine,
    delivery,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await engine.stop();
      await delivery.stop();
      store.close();
    },
  };
}

/**
 * Browsers send Origin with every cross-origin request and every same-origin one that can
 * change data, and Sec-Fetch-Site / Sec-Fetch-Dest with every request (same-origin GETs too).
 * Sec-Fetch-Mode alone proves nothing: Node's fetch sends it from a backend.
 */
function sentByBrowser(req: IncomingMessage): boolean {
  return ['origin', 'sec-fetch-site', 'sec-fetch-dest', 'sec-fetch-user'].some(
    (name) => req.headers[name] !== undefined,
  );
}

const ICON_TYPES: Record<string, string> = { '.svg': 'image/svg+xml', '.png': 'image/png' };

function serveIcon(catalog: Catalog, file: string, res: ServerResponse): undefined {
  const name = file.replace(/^blocks\//, '');
  const type = ICON_TYPES[name.slice(name.lastIndexOf('.'))];
  // basename() keeps a request inside the icons folder whatever it names.
  const path = join(catalog.iconsDir, file.startsWith('blocks/') ? 'blocks' : '', basename(name));
  if (!type || !existsSync(path)) throw notFound(`No icon ${file}.`);
  res.writeHead(200, {
    'Content-Type': type,
    'Cache-Control': 'public, max-age=86400',
    'X-Content-Type-Options': 'nosniff',
    // SVGs are images here, never documents that run script.
    'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
    'Cross-Origin-Resource-Policy': 'cross-origin',
  });
  createReadStream(path).pipe(res);
  return undefined;
}
