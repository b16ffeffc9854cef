import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import underPressure from '@fastify/under-pressure';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import { AuthKeys } from './auth.js';
import { Catalog } from './catalog/catalog.js';
import { type Clock, systemClock } from './clock.js';
import { Connections } from './engine/connections.js';
import { Delivery, type DeliveryOptions } from './engine/delivery.js';
import { Engine } from './engine/engine.js';
import { DEFAULT_WEBHOOK_SECRET_GRACE_MS } from './engine/host-settings.js';
import type { HttpRetryPolicy } from './engine/http-retry.js';
import { OptionsReader } from './engine/options.js';
import { HttpProblem, MAX_BODY_BYTES } from './http.js';
import {
  LOCAL_CLIENT_ID_ENV,
  LOCAL_CLIENT_SECRET_ENV,
  type LocalClient,
  LocalProvider,
  localClient,
} from './local-provider/provider.js';
import localProviderRoutes from './local-provider/routes.js';
import { serviceLogger } from './log.js';
import { Metrics } from './metrics.js';
import { DEMO_CATALOG } from './paths.js';
import auth from './plugins/auth.js';
import openapi from './plugins/openapi.js';
import problems, { clientErrorHandler, frameworkErrors } from './plugins/problems.js';
import requestChecks from './plugins/request-checks.js';
import requestGuards from './plugins/request-guards.js';
import requestLog, { type LogStream } from './plugins/request-log.js';
import routeTable, { type RouteEntry } from './plugins/route-table.js';
import shutdown from './plugins/shutdown.js';
import validation from './plugins/validation.js';
import { RateLimiter, type RateLimits } from './rate-limit.js';
import connections from './routes/connections.js';
import { type RoutePlugin, type ServiceDeps, serviceOrigin as serviceOriginOf } from './routes/context.js';
import credentials from './routes/credentials.js';
import health from './routes/health.js';
import hooks from './routes/hooks.js';
import meta, { probes } from './routes/meta.js';
import settings from './routes/settings.js';
import setup from './routes/setup.js';
import users from './routes/users.js';
import workflows from './routes/workflows.js';
import { DEFAULT_SANDBOX_URL } from './sandbox.js';
import { SecretBox } from './secrets.js';
import { type JobQueue, SqliteJobQueue } from './store/jobs.js';
import { PgBossJobQueue } from './store/pg-boss-queue.js';
import type { PoolOptions } from './store/postgres.js';
import { isPostgresUrl, Store } from './store/store.js';
import type { Tracing } from './trace.js';
import { API_PREFIX, LOCAL_PROVIDER_PREFIX } from './views.js';

/** The service interface's route modules, in the order of the route table and the OpenAPI document. */
const API_ROUTES: RoutePlugin[] = [users, workflows, credentials, connections, setup, hooks, health, settings, meta];

export type { Access, RouteEntry } from './plugins/route-table.js';
export { baseOf, type ServiceDeps } from './routes/context.js';

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
  /**
   * Where the structured request log (JSON lines, one per request, with its id) goes; default
   * nowhere. `main.ts` passes stdout.
   */
  logStream?: LogStream;
  /**
   * The lowest level written to `logStream` (pino's: trace, debug, info, warn, error, fatal).
   * Default info; "warn" leaves out the line per request and per scheduled minute.
   */
  logLevel?: string;
  /** Where the OAuth client's notes go; default the service log (warn). */
  log?: (line: string) => void;
  /** Write the line per request to `logStream`. Default true; FORGE_LOG=off turns it off. */
  requestLog?: boolean;
  /** What `{{env.SANDBOX_URL}}` in block parameters stands for: the sandbox the demo catalog's HTTP blocks call. */
  sandboxUrl?: string;
  /** Run schedule blocks at every minute. Default true; tests turn it off and call `engine.tick(date)`. */
  scheduler?: boolean;
  /** Retry backoff, attempt timeout and attempts before a dead letter of error deliveries to the host. */
  delivery?: Pick<DeliveryOptions, 'backoff' | 'timeoutMs' | 'maxAttempts'>;
  /**
   * On close, how long /readyz answers 503 while the service still serves everything else,
   * before it stops accepting: the time a load balancer needs to see it and send requests
   * elsewhere. Default 0.
   */
  drainDelayMs?: number;
  /**
   * On close, how long workflow runs in progress get to finish and be stored; those still running
   * then are cut short and their jobs go back to the queue for another instance (or this one's
   * next start), not recorded as failed. Default 10 s.
   */
  stopGraceMs?: number;
  /**
   * Backpressure: past these bounds every request but /healthz gets 503 with Retry-After, and
   * /readyz says not ready, until the process recovers. 0 (the default) switches a bound off.
   */
  pressure?: { maxEventLoopDelayMs?: number; maxHeapUsedBytes?: number; sampleIntervalMs?: number };
  /** PostgreSQL's pool size and query timeout. */
  pool?: PoolOptions;
  /** How long an HTTP block waits for an answer, in ms. Default 10 s. */
  httpTimeoutMs?: number;
  /** When an HTTP block tries a request again: attempts, backoff, the longest Retry-After honoured (docs/executions.md). */
  httpRetry?: Partial<HttpRetryPolicy>;
  /**
   * Let the error webhook point at loopback, private and link-local addresses. Off by default:
   * otherwise it can probe the service's own network. The demo turns it on.
   */
  allowPrivateWebhooks?: boolean;
  /** Limits per action (token, credentials, oauth, webhook); the defaults are generous. */
  rateLimits?: RateLimits;
  /** How long the error webhook's previous secret still signs after a rotation, in ms. Default 24 hours. */
  webhookSecretGraceMs?: number;
  /** How long an OAuth grant waits for the element's confirmation, in ms. Default 5 minutes. */
  oauthGrantTtlMs?: number;
  /**
   * The service's public origin (`--public-url`, FORGE_PUBLIC_URL): OAuth redirect URIs are
   * `<public url>/forge/2021-12/oauth/callback`. https, except on loopback. Default
   * http://localhost:<port>.
   */
  publicUrl?: string;
  /** Where OAuth clients' ids and secrets are read (by the names in the catalog). Default process.env. */
  env?: NodeJS.ProcessEnv;
  /**
   * What "now" is for scheduled minutes, token lifetimes, signing-key retirement, delivery leases
   * and rate-limit windows. Default: the system clock; tests pass one they control.
   */
  clock?: Clock;
  /** Prometheus metrics (server/metrics.ts) and GET /metrics. Default true; FORGE_METRICS=off turns them off. */
  metrics?: boolean;
  /**
   * Also serve GET /metrics, without the API key, on this port (`--metrics-port`): for a scraper
   * that holds no key. Default: no such listener. It listens on `metricsHost`.
   */
  metricsPort?: number;
  /** The interface of the metrics listener. Default 127.0.0.1: not public unless asked. */
  metricsHost?: string;
  /** Spans (server/tracing.ts, which main.ts loads when OTEL_EXPORTER_OTLP_ENDPOINT is set). Default none. */
  tracing?: Tracing;
  /**
   * The local OAuth provider (server/local-provider/): how long its access tokens live, in
   * seconds (FORGE_LOCAL_OAUTH_TOKEN_TTL; default 3600; a few seconds shows refresh at work),
   * and a Cross-Origin-Opener-Policy for its consent page (tests: `same-origin` cuts the popup
   * from its opener, as some providers' login pages do).
   */
  localProvider?: { accessTokenTtlSeconds?: number; consentOpenerPolicy?: string };
}

export interface Service extends ServiceDeps {
  /** The local OAuth provider the catalog's apps without their own provider connect to. */
  localProvider: LocalProvider;
  app: FastifyInstance;
  /**
   * The API key when the service knows it: the configured one, or one it generated on this
   * start. Otherwise undefined: the database keeps only a hash of a generated key.
   */
  apiKey: string | undefined;
  apiKeyGenerated: boolean;
  /** Every route, as Fastify registered it; tests walk it so that no endpoint is left out. */
  routes: RouteEntry[];
  /** The service's metrics; undefined when they are off. */
  metrics: Metrics | undefined;
}

export interface RunningService extends Service {
  /** `http://localhost:<port>`. */
  url: string;
  /** `http://<metrics host>:<port>/metrics` when `metricsPort` was given. */
  metricsUrl: string | undefined;
  /**
   * Stops accepting connections, lets requests and workflow runs in flight finish, then closes
   * the database. What SIGTERM does.
   */
  close(): Promise<void>;
}

/**
 * The service as a Fastify instance with every route, not yet listening: what `startService`
 * runs and what the build writes the OpenAPI document from.
 */
export async function buildService(options: ServiceOptions = {}): Promise<Service> {
  const dbPath = options.db ?? 'forge.db';
  const logger = serviceLogger(options.logStream, options.logLevel);
  // Fastify's, whose children log each request: the same stream and level, but the cheaper redaction.
  const requestsLogger = serviceLogger(options.logStream, options.logLevel, { nested: false });
  const catalog = new Catalog(options.catalog ?? DEMO_CATALOG);
  const secrets = SecretBox.open(dbPath);
  const client = localClient((label) => secrets.derive(label));
  const store = await Store.open(dbPath, options.pool);
  const metrics = options.metrics === false ? undefined : new Metrics(store, options.clock);
  const tracing = options.tracing;
  const { authKeys, apiKey, generated } = await AuthKeys.load(store, secrets, options.apiKey, options.clock);
  // Names this process in the claims and leases it takes, so a row says which instance holds it.
  const instanceId = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  // The queue every run is a job on: pg-boss on PostgreSQL, a table beside the data on SQLite.
  const jobs: JobQueue = isPostgresUrl(dbPath)
    ? await PgBossJobQueue.open(dbPath, logger.child({ component: 'jobs' })).catch(async (error) => {
        await store.close();
        throw error;
      })
    : new SqliteJobQueue(store, instanceId);
  // What the route modules are given, but for the engine and delivery, which need some of it first.
  const base: Omit<ServiceDeps, 'engine' | 'delivery' | 'options'> = {
    store,
    catalog,
    authKeys,
    secrets,
    allowedOrigins: options.allowedOrigins ?? [],
    allowPrivateWebhooks: options.allowPrivateWebhooks ?? false,
    limits: new RateLimiter(store, options.rateLimits, options.clock),
    oauthGrantTtlMs: options.oauthGrantTtlMs,
    clock: options.clock ?? systemClock,
    webhookSecretGraceMs: options.webhookSecretGraceMs ?? DEFAULT_WEBHOOK_SECRET_GRACE_MS,
    lifecycle: { stopping: false },
    publicUrl: options.publicUrl === undefined ? undefined : checkPublicUrl(options.publicUrl),
    env: withLocalClient(options.env ?? process.env, client),
    // The OAuth client's notes (a provider's refusal, a refresh that failed) go to the service log.
    log: options.log ?? ((line) => logger.warn({ component: 'oauth' }, line)),
    tracing,
  };
  for (const [name, app] of catalog.apps) {
    if (app.auth?.kind !== 'oauth2') continue;
    const missing = [app.auth.clientIdEnv, app.auth.clientSecretEnv].filter((variable) => !base.env[variable]);
    if (missing.length)
      base.log(
        `warning: ${name} can't be connected until ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} set (its OAuth client)`,
      );
  }
  const delivery = new Delivery({
    store,
    secrets,
    ...options.delivery,
    allowPrivateTargets: base.allowPrivateWebhooks,
    instanceId,
    clock: options.clock,
    logger: logger.child({ component: 'delivery' }),
    metrics,
    tracing,
  });
  const connections = new Connections({
    store,
    catalog,
    secrets,
    env: base.env,
    log: base.log,
    metrics,
    tracing,
    serviceUrl: () => serviceOrigin(),
  });
  /** What `{{env.X}}` stands for in the catalog (block parameters, an options source's URL). */
  const catalogEnv = { SANDBOX_URL: (options.sandboxUrl ?? DEFAULT_SANDBOX_URL).replace(/\/+$/, '') };
  const engine = new Engine({
    store,
    catalog,
    connections,
    secrets,
    delivery,
    env: catalogEnv,
    httpTimeoutMs: options.httpTimeoutMs,
    httpRetry: options.httpRetry,
    jobs,
    clock: options.clock,
    // No `component` bound here: each scheduler and worker line names its own, and a run's lines
    // carry its execution id (a bound key written again by a line would be in it twice).
    logger,
    metrics,
    tracing,
  });
  if (metrics) metrics.engine = engine;
  const deps: ServiceDeps = { ...base, engine, delivery, options: new OptionsReader(connections, catalogEnv) };
  // The service's own origin, once it listens: the local provider's paths in `auth` are on it.
  const serviceOrigin = () => serviceOriginOf(deps, app);
  const localProvider = new LocalProvider({
    client,
    redirectUri: () => `${serviceOrigin()}${API_PREFIX}/oauth/callback`,
    accessTokenTtlSeconds: options.localProvider?.accessTokenTtlSeconds,
    // Grants outlive a restart beside a SQLite file; in memory otherwise (docs/design-notes.md).
    stateFile: dbPath === ':memory:' || isPostgresUrl(dbPath) ? undefined : `${dbPath}.local-oauth.json`,
  });

  const app = Fastify({
    loggerInstance: requestsLogger as FastifyBaseLogger,
    // One line per request, written when it is answered (see the request log plugin), not two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: MAX_BODY_BYTES,
    // Ids the service hands out are short; this only keeps an absurd one from being a 404 "no endpoint".
    routerOptions: {
      maxParamLength: 2048,
      // An empty value counts as absent (`?integration=` lists everything, as before).
      querystringParser: (text) => {
        const query: Record<string, string | string[]> = {};
        // Most requests have no query (find-my-way's own parser answers these at once too).
        if (text === '') return query;
        for (const [key, value] of new URLSearchParams(text)) {
          if (value === '') continue;
          const had = query[key];
          query[key] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
        }
        return query;
      },
    },
    frameworkErrors,
    clientErrorHandler,
  });

  // The order is the stack's: each plugin's hooks run in the order registered, and a route gets
  // only what is registered before it. Those that need an earlier one name it (fastify-plugin's
  // `dependencies`), so a wrong order fails at start.
  // First, so that every other hook and the handler run inside the request's span.
  tracing?.traceRequests(app);
  const closing = { closing: false };
  await app.register(shutdown, {
    closing,
    store,
    engine,
    delivery,
    jobs,
    options: deps.options,
    stopGraceMs: options.stopGraceMs,
  });
  // Request duration by route and status, for every request (404s and probes too: "unmatched").
  // Where the request log is written too, its onResponse hook observes it: one hook, not two.
  const observeDuration =
    metrics &&
    ((request: FastifyRequest, reply: FastifyReply) =>
      metrics.requestDuration.observe(
        request.method,
        // The credential check's read of the route, or (a request answered before it) Fastify's.
        (request.routeConfig ?? request.routeOptions.config).url ?? 'unmatched',
        reply.statusCode,
        reply.elapsedTime / 1000,
      ));
  const requestLogOn = options.logStream !== undefined && options.requestLog !== false;
  if (observeDuration && !requestLogOn) {
    app.addHook('onResponse', (request, reply, done) => {
      observeDuration(request, reply);
      done();
    });
  }
  await app.register(underPressure, {
    maxEventLoopDelay: options.pressure?.maxEventLoopDelayMs ?? 0,
    maxHeapUsedBytes: options.pressure?.maxHeapUsedBytes ?? 0,
    sampleInterval: options.pressure?.sampleIntervalMs ?? 1000,
    retryAfter: 5,
    customError: ServiceBusy,
  });
  await app.register(validation);
  await app.register(routeTable);
  await app.register(openapi);
  await app.register(requestGuards);
  await app.register(auth);
  // CORS, the URL guards, the credential check and the body's encoding, in that order, in one hook.
  await app.register(requestChecks, { allowedOrigins: deps.allowedOrigins, authKeys, store });
  await app.register(problems, {
    unlogged: options.logStream ? undefined : serviceLogger(process.stderr as LogStream, 'error'),
    closing,
  });
  if (requestLogOn) await app.register(requestLog, { stream: options.logStream!, observe: observeDuration });

  for (const routes of API_ROUTES) await app.register(routes, { ...deps, prefix: API_PREFIX });
  await app.register(probes, deps);
  // Prometheus text. Not public: the API key, like the rest of the host's operations (or the
  // separate listener startService opens on --metrics-port).
  if (metrics) {
    app.get(
      '/metrics',
      { config: { access: 'apiKey', probe: true }, schema: { hide: true } },
      async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
    );
  }
  await app.register(localProviderRoutes, {
    ...deps,
    localProvider,
    consentOpenerPolicy: options.localProvider?.consentOpenerPolicy,
    prefix: LOCAL_PROVIDER_PREFIX,
  });

  return { ...deps, localProvider, app, apiKey, apiKeyGenerated: generated, routes: app.routeTable.entries, metrics };
}

/** The environment with the local provider's client filled in where the host set none. */
function withLocalClient(env: NodeJS.ProcessEnv, client: LocalClient): NodeJS.ProcessEnv {
  return {
    ...env,
    [LOCAL_CLIENT_ID_ENV]: env[LOCAL_CLIENT_ID_ENV] || client.clientId,
    [LOCAL_CLIENT_SECRET_ENV]: env[LOCAL_CLIENT_SECRET_ENV] || client.clientSecret,
  };
}

/** A public URL the redirect URI can be made from: an origin, https except on loopback. */
export function checkPublicUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`FORGE_PUBLIC_URL (--public-url) must be a URL such as https://forge.example.com; got "${text}".`);
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    throw new Error(`FORGE_PUBLIC_URL (--public-url) must be https (http only on localhost); got "${text}".`);
  if (url.pathname !== '/' || url.search || url.hash)
    throw new Error(`FORGE_PUBLIC_URL (--public-url) is the service's origin, without a path; got "${text}".`);
  return url.origin;
}

/** The redirect URI each provider must have registered, exactly. */
export const oauthRedirectUri = (publicUrl: string) => `${publicUrl}${API_PREFIX}/oauth/callback`;

export async function startService(options: ServiceOptions = {}): Promise<RunningService> {
  const service = await buildService(options);
  const { app, engine, delivery } = service;
  await app.listen({ port: options.port ?? 4010, host: options.host ?? '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  const metricsListener =
    options.metricsPort === undefined || !service.metrics
      ? undefined
      : await listenForMetrics(service.metrics, options.metricsPort, options.metricsHost ?? '127.0.0.1').catch(
          async (error) => {
            await app.close();
            throw error;
          },
        );
  // Entries a previous run could not deliver go out now.
  await delivery.start();
  engine.startWorker();
  if (options.scheduler !== false) engine.startScheduler();
  let closing: Promise<void> | undefined;
  return {
    ...service,
    url: `http://localhost:${port}`,
    metricsUrl: metricsListener?.url,
    close() {
      // Not ready first, for the drain delay; then Fastify stops accepting, answers what is in
      // flight, closes idle connections, then runs the onClose hooks: the engine, delivery and
      // the database stop there (plugins/shutdown.ts).
      service.lifecycle.stopping = true;
      // No new jobs from now on; the runs in progress get their grace (the same stop the onClose hook waits for).
      void engine.stop(options.stopGraceMs);
      closing ??= new Promise((resolve) => setTimeout(resolve, options.drainDelayMs ?? 0)).then(() =>
        Promise.all([app.close(), metricsListener?.close()]).then(() => undefined),
      );
      return closing;
    },
  };
}

/**
 * GET /metrics without a credential on a port of its own (`--metrics-port`), for a scraper that
 * holds no API key; anything else there is a 404. It binds `host` (127.0.0.1 unless
 * `--metrics-host` says otherwise), so it is not public unless asked to be.
 */
async function listenForMetrics(
  metrics: Metrics,
  port: number,
  host: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'Content-Type': 'text/plain' }).end('Only GET /metrics is served here.\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => response.writeHead(200, { 'Content-Type': metrics.registry.contentType }).end(text),
      () => response.writeHead(503, { 'Content-Type': 'text/plain' }).end('The metrics could not be read.\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What an overloaded service answers (with Retry-After): a problem document like every other error. */
class ServiceBusy extends HttpProblem {
  constructor() {
    super(
      503,
      'overloaded',
      'Service overloaded',
      'The service is too busy to take this request now (its event loop lags or its memory passed its bound). Retry after the time Retry-After says.',
      undefined,
      { 'Retry-After': '5' },
    );
  }
}
