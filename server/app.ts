import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import { Ajv, type ValidateFunction } from 'ajv';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import FindMyWay from 'find-my-way';
import { AuthKeys, type Principal } from './auth.js';
import { Catalog } from './catalog/catalog.js';
import type { Clock } from './clock.js';
import { Delivery, type DeliveryOptions } from './engine/delivery.js';
import { Engine } from './engine/engine.js';
import {
  badRequest,
  databaseUnavailableProblem,
  forbidden,
  HttpProblem,
  internalError,
  MAX_BODY_BYTES,
  MAX_URL_LENGTH,
  notFound,
  originOfHost,
  problemOf,
  unauthorized,
  unsupportedMediaType,
} from './http.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.js';
import { DEMO_CATALOG } from './paths.js';
import { RateLimiter, type RateLimits } from './rate-limit.js';
import { LOCAL_PROVIDER_PREFIX, registerCredentials, registerLocalProvider } from './routes/credentials.js';
import { registerHealth } from './routes/health.js';
import { registerHooks } from './routes/hooks.js';
import { registerMeta, registerProbes } from './routes/meta.js';
import { registerSettings } from './routes/settings.js';
import { registerSetup } from './routes/setup.js';
import { registerUsers } from './routes/users.js';
import { registerWorkflows } from './routes/workflows.js';
import { DEFAULT_SANDBOX_URL } from './sandbox.js';
import { ProblemSchema, ref, SHARED_SCHEMAS } from './schemas.js';
import { SecretBox } from './secrets.js';
import { databaseUnavailable, Store } from './store/store.js';
import { API_PREFIX } from './views.js';

/**
 * Who may call a route: `apiKey` the host's backend only, `user` a user token only (the embed
 * surface's own operations), `any` either (the embed surface, scoped to the token's user),
 * `public` no credential (pages the OAuth popup visits, icons, the JWKS, webhooks, probes).
 */
export type Access = 'apiKey' | 'user' | 'any' | 'public';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
  interface FastifyRequest {
    /** Who is calling; set before the handler runs on every route that is not public. */
    principal: Principal;
  }
}

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
  logStream?: { write(line: string): void };
  /** Where the engine's and delivery's own notes go; default nowhere. */
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
  /**
   * What "now" is for scheduled minutes, token lifetimes, signing-key retirement, delivery leases
   * and rate-limit windows. Default: the system clock; tests pass one they control.
   */
  clock?: Clock;
}

export interface ServiceDeps {
  store: Store;
  catalog: Catalog;
  authKeys: AuthKeys;
  secrets: SecretBox;
  allowedOrigins: string[];
  allowPrivateWebhooks: boolean;
  limits: RateLimiter;
  oauthGrantTtlMs: number | undefined;
}

/** One route of the service: method, path (relative to the API prefix unless it is another tree) and who may call it. */
export interface RouteEntry {
  method: string;
  path: string;
  access: Access;
}

export interface Service extends ServiceDeps {
  app: FastifyInstance;
  /**
   * The API key when the service knows it: the configured one, or one it generated on this
   * start. Otherwise undefined: the database keeps only a hash of a generated key.
   */
  apiKey: string | undefined;
  apiKeyGenerated: boolean;
  /** Every route, as Fastify registered it; tests walk it so that no endpoint is left out. */
  routes: RouteEntry[];
  /** Runs workflows: `engine.tick(date)` runs what is scheduled in that minute. */
  engine: Engine;
  delivery: Delivery;
}

export interface RunningService extends Service {
  /** `http://localhost:<port>`. */
  url: string;
  /**
   * Stops accepting connections, lets requests and workflow runs in flight finish, then closes
   * the database. What SIGTERM does.
   */
  close(): Promise<void>;
}

const EMBED: Access[] = ['any', 'user'];
const PROBES = ['/healthz', '/readyz'];

/**
 * The service as a Fastify instance with every route, not yet listening: what `startService`
 * runs and what the build writes the OpenAPI document from.
 */
export async function buildService(options: ServiceOptions = {}): Promise<Service> {
  const dbPath = options.db ?? 'forge.db';
  const catalog = new Catalog(options.catalog ?? DEMO_CATALOG);
  const secrets = SecretBox.open(dbPath);
  const store = await Store.open(dbPath);
  const { authKeys, apiKey, generated } = await AuthKeys.load(store, secrets, options.apiKey, options.clock);
  // Names this process in the claims and leases it takes, so a row says which instance holds it.
  const instanceId = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const deps: ServiceDeps = {
    store,
    catalog,
    authKeys,
    secrets,
    allowedOrigins: options.allowedOrigins ?? [],
    allowPrivateWebhooks: options.allowPrivateWebhooks ?? false,
    limits: new RateLimiter(store, options.rateLimits, options.clock),
    oauthGrantTtlMs: options.oauthGrantTtlMs,
  };
  const delivery = new Delivery({
    store,
    secrets,
    ...options.delivery,
    allowPrivateTargets: deps.allowPrivateWebhooks,
    instanceId,
    clock: options.clock,
    log: options.log,
  });
  const engine = new Engine({
    store,
    catalog,
    secrets: deps.secrets,
    delivery,
    env: { SANDBOX_URL: (options.sandboxUrl ?? DEFAULT_SANDBOX_URL).replace(/\/+$/, '') },
    httpTimeoutMs: options.httpTimeoutMs,
    instanceId,
    clock: options.clock,
    log: options.log,
  });

  const app = Fastify({
    logger: options.logStream
      ? {
          stream: options.logStream,
          // Credentials travel in headers and a webhook's token in its path: neither is logged.
          serializers: {
            req: (req) => ({ method: req.method, url: redactUrl(req.url), remoteAddress: req.ip }),
            res: (res) => ({ statusCode: res.statusCode }),
          },
        }
      : false,
    // One line per request, written when it is answered (see the onResponse hook), not two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: MAX_BODY_BYTES,
    // Ids the service hands out are short; this only keeps an absurd one from being a 404 "no endpoint".
    routerOptions: {
      maxParamLength: 2048,
      // An empty value counts as absent (`?integration=` lists everything, as before).
      querystringParser: (text) => {
        const query: Record<string, string | string[]> = {};
        for (const [key, value] of new URLSearchParams(text)) {
          if (value === '') continue;
          const had = query[key];
          query[key] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
        }
        return query;
      },
    },
    // A path that does not decode (`%E0%A4%A`) never reaches a route; it still gets a problem document.
    frameworkErrors: (error, request, reply) => {
      const problem =
        error.code === 'FST_ERR_BAD_URL'
          ? badRequest(`The path ${request.url.split('?')[0]} is not correctly URL-encoded.`)
          : (problemOf(error) ?? internalError());
      (reply as FastifyReply)
        .code(problem.status)
        .headers({ 'Cache-Control': 'no-store', ...problem.headers })
        .type('application/problem+json; charset=utf-8')
        .send(problem.toJSON());
    },
    // A request that cannot be parsed (over-long header block, bad framing) still gets a problem document.
    clientErrorHandler: (error, socket) => {
      if (!socket.writable) return socket.destroy();
      const overflow = (error as NodeJS.ErrnoException).code === 'HPE_HEADER_OVERFLOW';
      const problem = overflow
        ? new HttpProblem(
            431,
            'request-header-fields-too-large',
            'Request header fields too large',
            'The request line and headers together are over 16 KB. Send a shorter URL or fewer, smaller headers.',
          )
        : new HttpProblem(400, 'bad-request', 'Bad request', 'The request is not valid HTTP/1.1; it was not read.');
      const body = JSON.stringify(problem.toJSON());
      socket.end(
        `HTTP/1.1 ${problem.status} ${problem.title}\r\nContent-Type: application/problem+json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    },
  });

  // Bodies are never coerced (a number sent for a name is an error); paths and queries are text
  // that may stand for numbers. Each validator reports every error, not only the first.
  const bodyValidator = new Ajv({ allErrors: true, verbose: true, coerceTypes: false, useDefaults: true });
  const textValidator = new Ajv({ allErrors: true, verbose: true, coerceTypes: true, useDefaults: true });
  for (const ajv of [bodyValidator, textValidator]) {
    ajv.addKeyword('example');
    ajv.addFormat('date-time', true);
    for (const schema of SHARED_SCHEMAS) ajv.addSchema(schema);
  }
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const validate = (httpPart === 'body' ? bodyValidator : textValidator).compile(schema);
    return httpPart === 'querystring' ? plainWholeNumbers(schema, validate) : validate;
  });
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  // Answers are serialized with JSON.stringify, not compiled from the response schemas: with
  // this service's schemas (open `parameters` objects, unions of value types) the compiled
  // serializer halved GET /workflow's throughput. The response schemas still describe every
  // answer in the OpenAPI document, and the test suites check each answer they see against it.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  // The route list: Fastify's, gathered as it registers each route.
  const routes: RouteEntry[] = [];
  const accessByRoute = FindMyWay();
  app.addHook('onRoute', (route) => {
    const access = route.config?.access ?? 'public';
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (/^(HEAD|OPTIONS)$/i.test(method)) continue;
      accessByRoute.on(method.toUpperCase() as FindMyWay.HTTPMethod, route.url, () => {}, { access });
      // The table is the service interface (the API and the OAuth popup's pages); the probes
      // for load balancers live beside it.
      if (!PROBES.includes(route.url)) routes.push({ method, path: tablePath(route.url), access });
    }
    route.schema = withProblems(route.schema as Record<string, unknown> | undefined, access);
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Forge service',
        version: '2021-12',
        description:
          'The Integration Workflow Management Service and the embed surface that the forge-embed elements call. Every error is an RFC 9457 problem document.',
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            description: "The host account's API key (`forge_sk_…`). Backend only: refused on any request from a page.",
          },
          userToken: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'A user token from GET /user/{userId}/token (ES256, at most 30 minutes); the embed surface.',
          },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (json.$id as string) ?? `schema${i}` },
  });

  // CORS: only the embed surface, only for the allowed origins; a preflight elsewhere is a 204
  // with no CORS header, so a browser never learns it may call an API-key operation.
  await app.register(cors, {
    strictPreflight: false,
    hideOptionsRoute: true,
    delegator: (request, callback) => {
      const origin = request.headers.origin;
      // Most calls come from backends, with no Origin: nothing to look up.
      if (!origin) return callback(null, { origin: false });
      const method =
        request.method === 'OPTIONS'
          ? String(request.headers['access-control-request-method'] ?? 'GET')
          : request.method;
      const access = accessOf(accessByRoute, method, request.url);
      const allowed = deps.allowedOrigins.includes(origin) && !!access && EMBED.includes(access);
      callback(
        null,
        allowed
          ? {
              origin: true,
              methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
              allowedHeaders: ['Authorization', 'Content-Type'],
              maxAge: 600,
              preflightContinue: false,
              optionsSuccessStatus: 204,
            }
          : { origin: false },
      );
    },
  });

  app.decorateRequest('principal', null as never);
  app.addHook('onRequest', async (request) => {
    if (request.url.length > MAX_URL_LENGTH) {
      throw new HttpProblem(
        414,
        'uri-too-long',
        'URI too long',
        `The request URL is longer than ${MAX_URL_LENGTH} characters. Send large values in a JSON body instead.`,
      );
    }
    // No id, token or value of the service holds a NUL character, and PostgreSQL cannot even
    // compare text with one: refused alike on both backends.
    if (/%00/.test(request.url)) {
      throw badRequest('The URL holds a NUL character (%00), which no id, token or value of the service contains.');
    }
    const access = request.routeOptions.config.access ?? 'public';
    if (access === 'public') return;
    request.principal = await authenticate(deps, request, access);
  });
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const encoding = request.headers['content-encoding'];
    if (encoding && encoding.toLowerCase() !== 'identity') {
      return done(
        unsupportedMediaType(
          `The body is sent with Content-Encoding "${encoding}"; the service reads only uncompressed JSON. Send it without a Content-Encoding.`,
        ),
      );
    }
    done(null, payload);
  });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser(/^application\/([\w.-]+\+)?json\s*(;|$)/i, { parseAs: 'buffer' }, (_request, body, done) => {
    try {
      done(null, parseJson(body as Buffer));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  app.setErrorHandler((error, request, reply) => {
    let problem = problemOf(error);
    if (!problem && databaseUnavailable(error)) {
      request.log.warn({ err: error }, 'database unreachable');
      problem = databaseUnavailableProblem();
    }
    if (!problem) {
      // Never leak internals: the log gets the error, the caller a problem document.
      request.log.error({ err: error }, 'request failed');
      if (!options.logStream) console.error(error);
      problem = internalError();
    }
    return reply
      .code(problem.status)
      .headers({ 'Cache-Control': 'no-store', ...problem.headers })
      .type('application/problem+json; charset=utf-8')
      .send(problem.toJSON());
  });

  app.setNotFoundHandler((request, reply) => {
    const { pathname } = new URL(request.url, 'http://service');
    if (request.method === 'OPTIONS') return reply.code(204).send();
    const allowed = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => accessOf(accessByRoute, m, request.url));
    if (allowed.length > 0) {
      throw new HttpProblem(
        405,
        'method-not-allowed',
        'Method not allowed',
        `${pathname} answers ${allowed.join(', ')}, not ${request.method}.`,
        undefined,
        { Allow: allowed.join(', ') },
      );
    }
    throw notFound(
      pathname.startsWith(`${API_PREFIX}/`) || pathname.startsWith(`${LOCAL_PROVIDER_PREFIX}/`)
        ? `No endpoint ${request.method} ${pathname}. See the API section of the README for the endpoints.`
        : `No endpoint at ${pathname}. Every path of the service begins with ${API_PREFIX}.`,
    );
  });

  if (options.logStream) {
    app.addHook('onResponse', (request, reply, done) => {
      request.log.info(
        {
          req: request,
          res: reply,
          ms: Math.round(reply.elapsedTime * 10) / 10,
          ...(request.principal ? { caller: request.principal.kind } : {}),
        },
        'request',
      );
      done();
    });
  }

  // JSON answers are never cached: they are one user's data or a credential.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (!reply.hasHeader('cache-control')) reply.header('Cache-Control', 'no-store');
    done(null, payload);
  });

  await app.register(
    async (api) => {
      registerUsers(api, deps);
      registerWorkflows(api, deps);
      registerCredentials(api, deps);
      registerSetup(api, deps);
      registerHooks(api, engine, deps.limits);
      registerHealth(api, deps, engine);
      registerSettings(api, deps, delivery);
      registerMeta(api, deps);
    },
    { prefix: API_PREFIX },
  );
  registerLocalProvider(app, deps);
  registerProbes(app, deps);

  return { ...deps, app, apiKey, apiKeyGenerated: generated, routes, engine, delivery };
}

export async function startService(options: ServiceOptions = {}): Promise<RunningService> {
  const service = await buildService(options);
  const { app, engine, delivery, store } = service;
  await app.listen({ port: options.port ?? 4010, host: options.host ?? '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  // Entries a previous run could not deliver go out now.
  await delivery.start();
  if (options.scheduler !== false) engine.startScheduler();
  let closing: Promise<void> | undefined;
  return {
    ...service,
    url: `http://localhost:${port}`,
    close() {
      closing ??= (async () => {
        // Fastify stops accepting, answers what is in flight, then closes idle connections.
        await app.close();
        await engine.stop();
        await delivery.stop();
        await store.close();
      })();
      return closing;
    },
  };
}

/** The origin a caller reached the service at, for the URLs the service hands out. */
export function baseOf(request: FastifyRequest): string {
  return (
    originOfHost(request.headers.host) ??
    `http://localhost:${(request.server.server.address() as { port?: number } | null)?.port ?? 4010}`
  );
}

async function authenticate(deps: ServiceDeps, request: FastifyRequest, access: Access): Promise<Principal> {
  const principal = await deps.authKeys.authenticate(request.headers.authorization);
  // An API key never belongs in a browser: a request that a page sent is refused.
  if (principal.kind === 'apiKey' && sentByBrowser(request)) {
    throw forbidden(
      'API keys must stay on your backend; this request came from a browser page. Use a user token there.',
    );
  }
  if (principal.kind === 'user' && !(await deps.store.getUser(principal.userId))) {
    throw unauthorized('The user of this token no longer exists. Create the user again and fetch a new token.');
  }
  if (access === 'apiKey' && principal.kind !== 'apiKey') {
    throw forbidden('This operation needs the host API key. Call it from your backend, never from a browser.');
  }
  if (access === 'user' && principal.kind !== 'user') {
    throw forbidden(
      "This operation acts for one end user and needs that user's token (GET /user/:userId/token), not the API key.",
    );
  }
  return principal;
}

/** Plain decimal digits, no sign, exponent or leading zero: what coercion alone would let through is wider. */
const WHOLE_NUMBER = /^(0|[1-9]\d*)$/;

/**
 * The one rule of whole-number query parameters: plain digits only. The validator's coercion
 * would read `1e1`, `+5` or `010` as numbers; they are refused like any other wrong value, with
 * the same field error. (An empty value never gets here: the query parser drops it, so the
 * parameter takes its default.)
 */
function plainWholeNumbers(schema: unknown, validate: ValidateFunction): ValidateFunction {
  const properties = ((schema as { properties?: Record<string, { type?: string }> }).properties ?? {}) as Record<
    string,
    { type?: string }
  >;
  const integers = Object.keys(properties).filter((key) => properties[key]!.type === 'integer');
  if (integers.length === 0) return validate;
  const check = ((query: Record<string, unknown>) => {
    const wrong = integers.filter((key) => typeof query[key] === 'string' && !WHOLE_NUMBER.test(query[key]));
    if (wrong.length === 0) {
      const valid = validate(query);
      check.errors = validate.errors;
      return valid;
    }
    check.errors = wrong.map((key) => ({
      keyword: 'type',
      instancePath: `/${key}`,
      schemaPath: `#/properties/${key}/type`,
      params: { type: 'integer' },
      message: 'must be integer',
      data: query[key],
      parentSchema: properties[key],
    }));
    return false;
  }) as ValidateFunction;
  return check;
}

/**
 * Browsers send Origin with every cross-origin request and every same-origin one that can
 * change data, and Sec-Fetch-Site / Sec-Fetch-Dest with every request (same-origin GETs too).
 * Sec-Fetch-Mode alone proves nothing: Node's fetch sends it from a backend.
 */
function sentByBrowser(request: FastifyRequest): boolean {
  return ['origin', 'sec-fetch-site', 'sec-fetch-dest', 'sec-fetch-user'].some(
    (name) => request.headers[name] !== undefined,
  );
}

/** Who may call the route a method and URL lead to; undefined where there is none. */
function accessOf(router: FindMyWay.Instance<FindMyWay.HTTPVersion.V1>, method: string, url: string) {
  const path = url.split('?')[0]!;
  try {
    return (router.find(method as FindMyWay.HTTPMethod, path)?.store as { access: Access } | undefined)?.access;
  } catch {
    return undefined;
  }
}

const tablePath = (url: string) => (url.startsWith(`${API_PREFIX}/`) ? url.slice(API_PREFIX.length) : url);

/** A webhook's token is its credential; the OAuth state and code are one-time secrets. */
function redactUrl(url: string): string {
  return url.replace(/(\/hooks\/)[^/?]+/, '$1[redacted]').replace(/([?&](state|code)=)[^&]*/g, '$1[redacted]');
}

/**
 * One place adds what every route's description shares: the problem documents a route can
 * answer, and which credential it takes (the OpenAPI `security` of each operation).
 */
function withProblems(schema: Record<string, unknown> | undefined, access: Access): Record<string, unknown> {
  const base = schema ?? {};
  const response = { ...((base.response as Record<string, unknown>) ?? {}) };
  const problem = ref(ProblemSchema);
  response['4xx'] ??= {
    description:
      'A problem document: bad input (400), a missing or invalid credential (401), the wrong kind of credential (403), an unknown id (404), a conflict (409), a body too large (413) or not JSON (415).',
    content: { 'application/problem+json': { schema: problem } },
  };
  response['5xx'] ??= {
    description:
      'The service failed (500; the problem document says nothing of its internals), or cannot reach its database right now (503, with Retry-After: retry then).',
    content: { 'application/problem+json': { schema: problem } },
  };
  const security =
    access === 'apiKey'
      ? [{ apiKey: [] }]
      : access === 'user'
        ? [{ userToken: [] }]
        : access === 'any'
          ? [{ apiKey: [] }, { userToken: [] }]
          : [];
  return { ...base, response, security };
}

function parseJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new HttpProblem(
      400,
      'bad-request',
      'Bad request',
      'The body is not valid UTF-8. Send JSON encoded as UTF-8, as RFC 8259 requires.',
    );
  }
  if (nestsDeeperThan(text)) {
    throw badRequest(`The body nests objects and arrays more than ${MAX_JSON_DEPTH} deep. Send a flatter JSON body.`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HttpProblem(
      400,
      'bad-request',
      'Bad request',
      `The body is not valid JSON (${(error as Error).message}). Send a JSON object.`,
    );
  }
}
