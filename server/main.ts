#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { checkPublicUrl, oauthRedirectUri, startService } from './app.js';
import { AuthKeys } from './auth.js';
import { Catalog } from './catalog/catalog.js';
import { type Clock, fileClock } from './clock.js';
import { Engine } from './engine/engine.js';
import { type Logger, serviceLogger, stdoutLog } from './log.js';
import { DEMO_CATALOG } from './paths.js';
import { parseRateLimits, type RateLimits } from './rate-limit.js';
import { type RunningSandbox, startSandbox } from './sandbox.js';
import { SecretBox } from './secrets.js';
import { describeDatabase, isPostgresUrl, Store } from './store/store.js';

/**
 * Every option of the service: each has a command-line flag and an environment variable (the
 * flag wins), so a container or a process manager configures it without a wrapper script.
 * `--help` is written from this table, so it lists them all.
 */
const OPTIONS = {
  port: { env: 'FORGE_PORT', type: 'string', default: '4010', help: 'port to listen on (0 picks a free one)' },
  host: { env: 'FORGE_HOST', type: 'string', default: '127.0.0.1', help: 'interface to listen on (0.0.0.0 for all)' },
  db: {
    env: 'DATABASE_URL',
    type: 'string',
    default: 'forge.db',
    help: 'a SQLite file, :memory:, or a PostgreSQL URL (postgres://user:password@host:5432/database)',
  },
  catalog: { env: 'FORGE_CATALOG', type: 'string', help: "the host's catalog file (default: the demo catalog)" },
  'sandbox-port': {
    env: 'FORGE_SANDBOX_PORT',
    type: 'string',
    help: "also start the sandbox (the demo catalog's stand-in APIs) on this port",
  },
  'public-url': {
    env: 'FORGE_PUBLIC_URL',
    type: 'string',
    help: "the service's public origin (https, except on localhost), e.g. https://forge.example.com; OAuth redirect URIs are <public url>/forge/2021-12/oauth/callback (default http://localhost:<port>)",
  },
  'allow-private-webhooks': {
    env: 'FORGE_ALLOW_PRIVATE_WEBHOOKS',
    type: 'boolean',
    help: 'let the error webhook and the event bus point at loopback and private addresses (1 in the variable)',
  },
  'rate-limits': {
    env: 'FORGE_RATE_LIMITS',
    type: 'string',
    help: 'e.g. token=120/60,credentials=30/60,oauth=30/60,webhook=600/60,user=600/60 (uses per seconds: per user; per workflow for webhook; per API key for user), or action=off; these are the defaults',
  },
  'db-pool-size': {
    env: 'FORGE_DB_POOL_SIZE',
    type: 'string',
    default: '10',
    help: 'PostgreSQL connections per instance',
  },
  'db-statement-timeout-ms': {
    env: 'FORGE_DB_STATEMENT_TIMEOUT_MS',
    type: 'string',
    default: '15000',
    help: 'how long one PostgreSQL query may take',
  },
  'http-timeout-ms': {
    env: 'FORGE_HTTP_TIMEOUT_MS',
    type: 'string',
    default: '10000',
    help: "how long an HTTP block waits for an app's answer",
  },
  'http-attempts': {
    env: 'FORGE_HTTP_ATTEMPTS',
    type: 'string',
    default: '4',
    help: 'how many times an HTTP block tries a request that failed in a way safe to retry (429, 503, no connection; 5xx and timeouts for GET, PUT, DELETE); 1: no retries',
  },
  'delivery-timeout-ms': {
    env: 'FORGE_DELIVERY_TIMEOUT_MS',
    type: 'string',
    default: '10000',
    help: 'how long one error delivery (webhook or event bus) may take',
  },
  'delivery-attempts': {
    env: 'FORGE_DELIVERY_ATTEMPTS',
    type: 'string',
    default: '20',
    help: 'attempts per error delivery (1 s, 2 s, 4 s … up to 10 min apart) before it is a dead letter, listed by GET /deadLetters',
  },
  'drain-delay-ms': {
    env: 'FORGE_DRAIN_DELAY_MS',
    type: 'string',
    default: '0',
    help: 'on SIGTERM, how long /readyz says 503 while requests are still served, before the service stops accepting',
  },
  'stop-grace-ms': {
    env: 'FORGE_STOP_GRACE_MS',
    type: 'string',
    default: '10000',
    help: 'on SIGTERM, how long workflow runs in progress get to finish; those still running then go back to the queue for another instance',
  },
  'webhook-secret-grace-hours': {
    env: 'FORGE_WEBHOOK_SECRET_GRACE_HOURS',
    type: 'string',
    default: '24',
    help: 'after POST /settings/rotateErrorWebhookSecret, how long the previous secret still signs',
  },
  'max-event-loop-delay-ms': {
    env: 'FORGE_MAX_EVENT_LOOP_DELAY_MS',
    type: 'string',
    default: '0',
    help: 'backpressure: past this event-loop delay requests get 503 with Retry-After and /readyz says not ready (0: off)',
  },
  'max-heap-used-bytes': {
    env: 'FORGE_MAX_HEAP_USED_BYTES',
    type: 'string',
    default: '0',
    help: 'backpressure: past this much heap in use, the same (0: off)',
  },
  metrics: {
    env: 'FORGE_METRICS',
    type: 'string',
    default: 'on',
    help: 'on: Prometheus metrics, GET /metrics with the API key; off: none collected (GET /metrics is a 404)',
  },
  'metrics-port': {
    env: 'FORGE_METRICS_PORT',
    type: 'string',
    help: 'also serve GET /metrics without the API key on this port (default: no such listener), for a scraper without the key',
  },
  'metrics-host': {
    env: 'FORGE_METRICS_HOST',
    type: 'string',
    default: '127.0.0.1',
    help: 'interface of the --metrics-port listener (0.0.0.0 for all: only where the port is not reachable from outside)',
  },
  'log-level': {
    env: 'FORGE_LOG_LEVEL',
    type: 'string',
    default: 'info',
    help: 'trace, debug, info, warn, error, fatal or silent',
  },
} as const satisfies Record<string, { env: string; type: 'string' | 'boolean'; default?: string; help: string }>;

type OptionName = keyof typeof OPTIONS;

const USAGE = `forge-service — the local Forge service (Integration Workflow Management Service)

Usage: forge-service [options]            run the service
       forge-service check [options]      check the configuration and the catalog, then exit (0: fine)
       forge-service migrate [--db …]     bring the database's schema up to date and exit (the service also does this at start)
       forge-service rotate-keys [--db …] add a new token-signing key, which every instance signs with from then on; the old
                                          key verifies the tokens it signed until they expire (31 minutes), then is dropped

Options (each also an environment variable; the option wins):
${Object.entries(OPTIONS)
  .map(([name, o]) => {
    const flag = `  --${name}${o.type === 'string' ? ' <value>' : ''}`;
    const fallback = 'default' in o ? ` (default ${o.default})` : '';
    return `${flag.padEnd(38)} ${o.env.padEnd(33)} ${o.help}${fallback}`;
  })
  .join('\n')}
  -h, --help

Environment only:
  FORGE_API_KEY          the host's API key (forge_sk_ and 32 or more random characters); otherwise one is
                         generated on first start and shown once on a terminal (never in the log); the database
                         keeps only its hash
  FORGE_ALLOWED_ORIGINS  comma-separated origins the embedded elements run on (CORS), e.g. http://localhost:8000
  FORGE_SECRET_KEY       32 bytes, base64: the key that seals credentials; otherwise a key file beside the database
                         (required with PostgreSQL: every instance needs the same key)
  FORGE_SANDBOX_URL      where {{env.SANDBOX_URL}} in HTTP blocks points when the sandbox runs elsewhere (default http://localhost:4011)
  FORGE_LOG              "off": no line per request (the service's other lines stay)
  OTEL_EXPORTER_OTLP_ENDPOINT  an OTLP/HTTP collector, e.g. http://collector:4318: OpenTelemetry spans for requests,
                         runs, blocks and outbound calls go to <endpoint>/v1/traces (also the other OTEL_* variables:
                         OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, _HEADERS…); unset, no tracing code loads
  FORGE_LOCAL_OAUTH_TOKEN_TTL  seconds the local OAuth provider's access tokens live (default 3600; a few seconds
                         shows refresh at work). Its client (FORGE_LOCAL_OAUTH_CLIENT_ID and _SECRET) is derived
                         from the service's secret key unless those are set

The log: one JSON object per line on stdout (level, time, pid, hostname, msg; reqId on request
lines, executionId on a run's). Health: GET /healthz (the process answers), GET /readyz (the
database answers and the service is not stopping; 503 when not). SIGTERM or SIGINT: /readyz says
503 at once and no new workflow runs start here; after the drain delay the service stops accepting
connections and finishes the requests in flight; runs in progress get the stop grace to finish, the
rest go back to the queue for another instance; then it closes the database and exits 0.
docs/operations.md says more.`;

/**
 * Refuses to go on, exit status 2. Before the service's log exists (a wrong option, a command's
 * refusal) the message is plain text on stderr, for the person or pipeline that ran the command;
 * once the service runs, a fatal JSON line on the log like every other (docs/operations.md).
 */
let serviceLog: Logger | undefined;
function fail(message: string): never {
  if (serviceLog) serviceLog.fatal(`${message}; the service stops`);
  else console.error(`forge-service: ${message}\n\nforge-service --help lists the options.`);
  process.exit(2);
}

let args: ReturnType<typeof parse>;
function parse() {
  return parseArgs({
    allowPositionals: true,
    options: {
      ...Object.fromEntries(Object.entries(OPTIONS).map(([name, o]) => [name, { type: o.type }])),
      help: { type: 'boolean', short: 'h' },
    } as Record<OptionName | 'help', { type: 'string' | 'boolean'; short?: string }>,
  });
}
try {
  args = parse();
} catch (error) {
  fail((error as Error).message);
}
if (args.values.help) {
  console.log(USAGE);
  process.exit(0);
}

/** An option's value: the flag, else its environment variable, else its default. */
function option(name: OptionName): string | undefined {
  const flag = args.values[name];
  if (flag !== undefined) return String(flag);
  const spec = OPTIONS[name] as { env: string; type: string; default?: string };
  const env = process.env[spec.env];
  if (env !== undefined && env !== '') return spec.type === 'boolean' ? String(env === '1' || env === 'true') : env;
  return spec.default;
}

/** A whole number option within bounds, or a clear exit that names the option and its variable. */
function wholeNumber(name: OptionName, min: number, max: number): number | undefined {
  const text = option(name);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    fail(`--${name} (${OPTIONS[name].env}) must be a whole number from ${min} to ${max}; got "${text}".`);
  }
  return value;
}

const db = option('db')!;
const [command, ...extra] = args.positionals;
const COMMANDS = ['check', 'migrate', 'rotate-keys'];
if (extra.length > 0 || (command !== undefined && !COMMANDS.includes(command)))
  fail(
    `unknown command "${args.positionals.join(' ')}"; the commands are ${COMMANDS.map((c) => `"${c}"`).join(', ')}.`,
  );

// Test-only: every "now" of the service comes from this file's number (server/clock.ts), so a
// multi-instance test can move several processes' time at once. Never set it in production.
let clock: Clock | undefined;
if (process.env.FORGE_TEST_CLOCK_FILE) {
  try {
    clock = fileClock(process.env.FORGE_TEST_CLOCK_FILE);
  } catch (error) {
    fail((error as Error).message);
  }
  process.stdout.write(`${JSON.stringify({ level: 'warn', msg: 'Clock: FORGE_TEST_CLOCK_FILE (for tests only)' })}\n`);
}

if (command === 'migrate') {
  try {
    const store = await Store.open(db);
    await store.close();
    console.log(
      store.migrated.length > 0
        ? `Migrated ${describeDatabase(db)}: applied ${store.migrated.join(', ')}.`
        : `${describeDatabase(db)} was up to date; nothing to apply.`,
    );
    process.exit(0);
  } catch (error) {
    console.error(`forge-service migrate: ${(error as Error).message}`);
    process.exit(1);
  }
}

if (command === 'rotate-keys') {
  try {
    const store = await Store.open(db);
    try {
      const { kid, retired, dropped } = await AuthKeys.rotate(store, SecretBox.open(db), clock);
      console.log(`New signing key ${kid}: every instance signs user tokens with it from now on.`);
      if (retired.length)
        console.log(`Retired ${retired.join(', ')}: verifies the tokens it signed until they expire, then goes.`);
      if (dropped.length) console.log(`Dropped ${dropped.join(', ')}: every token it signed has expired.`);
    } finally {
      await store.close();
    }
  } catch (error) {
    console.error(`forge-service rotate-keys: ${(error as Error).message}`);
    process.exit(1);
  }
  process.exit(0);
}

const port = wholeNumber('port', 0, 65535)!;
const host = option('host')!;
const sandboxPort = wholeNumber('sandbox-port', 0, 65535);
const pool = {
  poolSize: wholeNumber('db-pool-size', 1, 1000),
  statementTimeoutMs: wholeNumber('db-statement-timeout-ms', 1, 3_600_000),
};
const httpTimeoutMs = wholeNumber('http-timeout-ms', 1, 3_600_000);
const httpAttempts = wholeNumber('http-attempts', 1, 10);
const deliveryTimeoutMs = wholeNumber('delivery-timeout-ms', 1, 3_600_000);
const deliveryAttempts = wholeNumber('delivery-attempts', 1, 1000);
const drainDelayMs = wholeNumber('drain-delay-ms', 0, 3_600_000);
const stopGraceMs = wholeNumber('stop-grace-ms', 0, 3_600_000);
const webhookSecretGraceMs = wholeNumber('webhook-secret-grace-hours', 0, 24 * 365)! * 3_600_000;
const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];
const metricsOn = option('metrics');
if (metricsOn !== 'on' && metricsOn !== 'off') fail(`--metrics (FORGE_METRICS) must be on or off; got "${metricsOn}".`);
const metricsPort = wholeNumber('metrics-port', 0, 65535);
if (metricsPort !== undefined && metricsOn === 'off')
  fail('--metrics-port (FORGE_METRICS_PORT) serves the metrics, which --metrics off (FORGE_METRICS) turns off.');
const logLevel = option('log-level')!;
if (!LEVELS.includes(logLevel))
  fail(`--log-level (FORGE_LOG_LEVEL) must be one of ${LEVELS.join(', ')}; got "${logLevel}".`);

const allowedOrigins = (process.env.FORGE_ALLOWED_ORIGINS ?? '')
  .split(',')
  .map((o) => o.trim().replace(/\/$/, ''))
  .filter(Boolean);
for (const origin of allowedOrigins) {
  if (!URL.canParse(origin) || new URL(origin).origin !== origin)
    fail(`FORGE_ALLOWED_ORIGINS holds "${origin}", which is not an origin such as https://app.example.com.`);
}

let rateLimits: RateLimits | undefined;
try {
  const text = option('rate-limits');
  rateLimits = text ? parseRateLimits(text) : undefined;
} catch (error) {
  fail((error as Error).message);
}

if (process.env.FORGE_SECRET_KEY && Buffer.from(process.env.FORGE_SECRET_KEY, 'base64').length !== 32)
  fail('FORGE_SECRET_KEY must be 32 bytes, base64-encoded (openssl rand -base64 32).');
if ((command === undefined || command === 'check') && isPostgresUrl(db) && !process.env.FORGE_SECRET_KEY)
  fail(
    'with a PostgreSQL database, set FORGE_SECRET_KEY (openssl rand -base64 32): every instance needs the same key.',
  );

if (command === 'check') {
  // The catalog as the service would load it (its shape, its integrations, its schedules).
  try {
    new Engine({
      store: undefined as never,
      catalog: new Catalog(option('catalog') ?? DEMO_CATALOG),
      secrets: undefined as never,
      delivery: undefined as never,
      connections: undefined as never,
      env: {},
      jobs: undefined as never,
    });
    const publicUrl = option('public-url');
    if (publicUrl) checkPublicUrl(publicUrl);
  } catch (error) {
    console.error(`forge-service check: the catalog: ${(error as Error).message}`);
    process.exit(1);
  }
  console.log(`forge-service check: the configuration and the catalog are valid (database ${describeDatabase(db)}).`);
  process.exit(0);
}

// The log: every line one JSON object on stdout (server/log.ts). A warning, an error or a fatal
// line is written before the call that logs it returns, so it is out before a crash or a kill -9;
// info lines (a line per request) go out together a millisecond after the first of them.
const logDestination = stdoutLog();
const logger = serviceLogger(logDestination, logLevel);
serviceLog = logger;
const fatal = (what: string) => (error: unknown) => {
  logger.fatal({ err: error }, `${what}; the service stops`);
  process.exit(1);
};
process.on('uncaughtException', fatal('an uncaught exception'));
process.on('unhandledRejection', fatal('an unhandled rejection'));

// Tracing only when asked for: the OpenTelemetry SDK is loaded here or not at all, so a service
// without a collector runs none of its code.
const traceEndpoint = process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
const tracing = traceEndpoint ? (await import('./tracing.js')).startTracing() : undefined;
/** FORGE_LOCAL_OAUTH_TOKEN_TTL: whole seconds, 1 to a day; unset: the provider's default. */
function localTokenTtl(): number | undefined {
  const text = process.env.FORGE_LOCAL_OAUTH_TOKEN_TTL;
  if (text === undefined || text === '') return undefined;
  const seconds = Number(text);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 86_400)
    fail(`FORGE_LOCAL_OAUTH_TOKEN_TTL must be whole seconds from 1 to 86400; got "${text}".`);
  return seconds;
}

let sandbox: RunningSandbox | undefined;
try {
  if (sandboxPort !== undefined) {
    sandbox = await startSandbox({ port: sandboxPort }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE')
        fail(`sandbox port ${sandboxPort} is in use. Stop what runs there or pass another --sandbox-port.`);
      throw error;
    });
  }
  const service = await startService({
    port,
    host,
    db,
    catalog: option('catalog'),
    apiKey: process.env.FORGE_API_KEY || undefined,
    allowedOrigins,
    rateLimits,
    allowPrivateWebhooks: option('allow-private-webhooks') === 'true',
    sandboxUrl: sandbox?.url ?? (process.env.FORGE_SANDBOX_URL || undefined),
    publicUrl: option('public-url'),
    logStream: logDestination,
    logLevel,
    requestLog: process.env.FORGE_LOG !== 'off',
    metrics: metricsOn === 'on',
    metricsPort,
    metricsHost: option('metrics-host'),
    tracing,
    clock,
    pool,
    httpTimeoutMs,
    httpRetry: httpAttempts === undefined ? undefined : { maxAttempts: httpAttempts },
    delivery: { timeoutMs: deliveryTimeoutMs, maxAttempts: deliveryAttempts },
    drainDelayMs,
    stopGraceMs,
    webhookSecretGraceMs,
    localProvider: { accessTokenTtlSeconds: localTokenTtl() },
    pressure: {
      maxEventLoopDelayMs: wholeNumber('max-event-loop-delay-ms', 0, 3_600_000),
      maxHeapUsedBytes: wholeNumber('max-heap-used-bytes', 0, Number.MAX_SAFE_INTEGER),
    },
  });
  logger.info({ url: `${service.url}/forge/2021-12` }, `Forge service listening on ${service.url}/forge/2021-12`);
  if (service.apiKey && !process.env.FORGE_API_KEY) {
    // A key the service made (or moved from clear to a hash) exists nowhere else: it is shown
    // once, to a person at a terminal, and never written to the log, which others read.
    const what = service.apiKeyGenerated ? 'generated' : 'stored in clear by an older version, now kept only as a hash';
    if (process.stdout.isTTY)
      process.stderr.write(`API key (${what}; note it now, it is not shown again): ${service.apiKey}\n`);
    logger.warn(
      process.stdout.isTTY
        ? `API key ${what}: shown once on the terminal, not logged`
        : `API key ${what}: not shown, since the output is not a terminal; set FORGE_API_KEY to a key of your own and restart`,
    );
  } else {
    logger.info(
      process.env.FORGE_API_KEY
        ? 'API key: the value of the FORGE_API_KEY environment variable'
        : 'API key: the one generated on first start',
    );
  }
  logger.info({ database: describeDatabase(db) }, `Database: ${describeDatabase(db)}`);
  logger.info(
    `OAuth redirect URI (register exactly this with each provider): ${oauthRedirectUri(service.publicUrl ?? service.url)}`,
  );
  if (sandbox) {
    // Its OAuth apps take only tokens this service's local provider issued and still considers valid.
    sandbox.useProvider(service.url);
    logger.info(`Sandbox (the demo's stand-in APIs) listening on ${sandbox.url}`);
  }
  if (service.metricsUrl) logger.info(`Metrics (no API key) on ${service.metricsUrl}`);
  if (tracing) logger.info(`Tracing: spans go to ${traceEndpoint} (OTLP/HTTP)`);
  logger.info(
    `Allowed origins: ${allowedOrigins.length ? allowedOrigins.join(', ') : 'none (set FORGE_ALLOWED_ORIGINS)'}`,
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(
      `${signal}: stopping (finishing requests and runs in flight; runs past the stop grace go back to the queue)`,
    );
    await service.close();
    await sandbox?.close();
    // The spans of the last requests and runs go out before the process ends.
    await tracing?.shutdown().catch((error) => logger.warn({ err: error }, 'tracing: the last spans were not sent'));
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
} catch (error) {
  const e = error as NodeJS.ErrnoException & { port?: number };
  if (e.code === 'EADDRINUSE')
    fail(
      `port ${e.port ?? port} is in use. Stop what runs there or pass --port (FORGE_PORT)${metricsPort === undefined ? '' : ' or --metrics-port (FORGE_METRICS_PORT)'}.`,
    );
  logger.fatal({ err: e }, `the service could not start: ${e.message}`);
  process.exit(1);
}
