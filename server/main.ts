#!/usr/bin/env node
import { parseArgs } from 'node:util';
import pino from 'pino';
import { oauthRedirectUri, startService } from './app.js';
import { AuthKeys } from './auth.js';
import { type Clock, fileClock } from './clock.js';
import { parseRateLimits, type RateLimits } from './rate-limit.js';
import { type RunningSandbox, startSandbox } from './sandbox.js';
import { SecretBox } from './secrets.js';
import { describeDatabase, Store } from './store/store.js';

const USAGE = `forge-service — the local Forge service (Integration Workflow Management Service)

Usage: forge-service [--port 4010] [--db forge.db | :memory: | postgres://…] [--catalog path/to/catalog.json]
                     [--sandbox-port 4011] [--allow-private-webhooks] [--rate-limits token=120/60,...]
       forge-service migrate [--db …]
       forge-service rotate-keys [--db …]

  migrate                    bring the database's schema up to date and exit (the service also does this at start)
  rotate-keys                add a new token-signing key, which every instance signs with from then on; the old
                             key verifies the tokens it signed until they expire (31 minutes), then is dropped
  --db                       a SQLite file (default forge.db), :memory:, or a PostgreSQL URL
                             (postgres://user:password@host:5432/database)

  --sandbox-port             also start the sandbox (the stand-in APIs the demo catalog's HTTP blocks call) on this port
  --public-url               the service's public origin, e.g. https://forge.example.com (see FORGE_PUBLIC_URL)
  --allow-private-webhooks   let the error webhook point at loopback and private addresses (refused by default)
  --rate-limits              e.g. token=120/60,credentials=30/60,oauth=30/60,webhook=600/60,user=600/60 (uses per seconds, per
                             user; per workflow for webhooks, per API key for user), or action=off; the defaults

Environment:
  DATABASE_URL           as --db (the option wins); e.g. a PostgreSQL URL
  FORGE_API_KEY          the host's API key (forge_sk_ and 32 or more random characters); otherwise one is
                         generated on first start, printed once and stored only as a hash
  FORGE_ALLOWED_ORIGINS  comma-separated origins the embedded elements run on (CORS), e.g. http://localhost:8000
  FORGE_SECRET_KEY       32 bytes, base64: the key that seals credentials; otherwise a key file beside the database
                         (required with PostgreSQL: every instance needs the same key)
  FORGE_ALLOW_PRIVATE_WEBHOOKS  1: as --allow-private-webhooks
  FORGE_RATE_LIMITS      as --rate-limits (the option wins)
  FORGE_SANDBOX_URL      where {{env.SANDBOX_URL}} in HTTP blocks points when the sandbox runs elsewhere (default http://localhost:4011)
  FORGE_PUBLIC_URL       as --public-url: the service's public origin (https, except on localhost); OAuth redirect URIs
                         are <public url>/forge/2021-12/oauth/callback (default http://localhost:<port>)
  FORGE_LOG              "off" turns the request log (JSON lines on stdout) off

Health: GET /healthz (the process answers), GET /readyz (the database answers; 503 when not).
SIGTERM or SIGINT: stops accepting connections, finishes the requests and workflow runs in
flight, closes the database, exits 0.`;

function fail(message: string): never {
  console.error(`forge-service: ${message}\n\n${USAGE}`);
  process.exit(2);
}

let args: ReturnType<typeof parse>;
function parse() {
  return parseArgs({
    allowPositionals: true,
    options: {
      port: { type: 'string', default: '4010' },
      host: { type: 'string', default: '127.0.0.1' },
      db: { type: 'string' },
      catalog: { type: 'string' },
      'sandbox-port': { type: 'string' },
      'allow-private-webhooks': { type: 'boolean' },
      'rate-limits': { type: 'string' },
      'public-url': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
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
const db = args.values.db ?? (process.env.DATABASE_URL || 'forge.db');
const [command, ...extra] = args.positionals;
if (extra.length > 0 || (command !== undefined && command !== 'migrate' && command !== 'rotate-keys'))
  fail(`unknown command "${args.positionals.join(' ')}"; the commands are "migrate" and "rotate-keys".`);

// Test-only: every "now" of the service comes from this file's number (server/clock.ts), so a
// multi-instance test can move several processes' time at once. Never set it in production.
let clock: Clock | undefined;
if (process.env.FORGE_TEST_CLOCK_FILE) {
  try {
    clock = fileClock(process.env.FORGE_TEST_CLOCK_FILE);
  } catch (error) {
    fail((error as Error).message);
  }
  console.log('Clock: FORGE_TEST_CLOCK_FILE (for tests only)');
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

const port = Number(args.values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535)
  fail(`--port must be a whole number from 0 to 65535; got "${args.values.port}".`);

const allowedOrigins = (process.env.FORGE_ALLOWED_ORIGINS ?? '')
  .split(',')
  .map((o) => o.trim().replace(/\/$/, ''))
  .filter(Boolean);

let rateLimits: RateLimits | undefined;
try {
  const text = args.values['rate-limits'] ?? process.env.FORGE_RATE_LIMITS;
  rateLimits = text ? parseRateLimits(text) : undefined;
} catch (error) {
  fail((error as Error).message);
}

const sandboxPort = args.values['sandbox-port'] === undefined ? undefined : Number(args.values['sandbox-port']);
if (sandboxPort !== undefined && (!Number.isInteger(sandboxPort) || sandboxPort < 0 || sandboxPort > 65535))
  fail(`--sandbox-port must be a whole number from 0 to 65535; got "${args.values['sandbox-port']}".`);

// The request log: one JSON line per request, with its id (FORGE_LOG=off turns it off). pino's
// own destination gathers lines into 4 KB writes made off the request path, rather than one
// synchronous write to stdout per request; a quiet service's lines still go out within a
// second, and the service flushes the rest when it closes, before the process exits.
const requestLog =
  process.env.FORGE_LOG === 'off'
    ? undefined
    : pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 1000 });

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
    host: args.values.host,
    db,
    catalog: args.values.catalog,
    apiKey: process.env.FORGE_API_KEY || undefined,
    allowedOrigins,
    rateLimits,
    allowPrivateWebhooks: args.values['allow-private-webhooks'] || process.env.FORGE_ALLOW_PRIVATE_WEBHOOKS === '1',
    sandboxUrl: sandbox?.url ?? (process.env.FORGE_SANDBOX_URL || undefined),
    publicUrl: args.values['public-url'] ?? (process.env.FORGE_PUBLIC_URL || undefined),
    logStream: requestLog,
    clock,
    log: (line) => console.log(line),
  });
  console.log(`Forge service listening on ${service.url}/forge/2021-12`);
  if (service.apiKeyGenerated) {
    console.log(`API key (generated; the database keeps only its hash, so note it now): ${service.apiKey}`);
  } else if (service.apiKey && !process.env.FORGE_API_KEY) {
    console.log(
      `API key (stored in clear by an older version, now kept only as a hash; note it now): ${service.apiKey}`,
    );
  } else {
    console.log(process.env.FORGE_API_KEY ? 'API key: FORGE_API_KEY' : 'API key: the one generated on first start');
  }
  console.log(`Database: ${describeDatabase(db)}`);
  console.log(
    `OAuth redirect URI (register exactly this with each provider): ${oauthRedirectUri(service.publicUrl ?? service.url)}`,
  );
  if (sandbox) console.log(`Sandbox (the demo's stand-in APIs) listening on ${sandbox.url}`);
  console.log(
    `Allowed origins: ${allowedOrigins.length ? allowedOrigins.join(', ') : 'none (set FORGE_ALLOWED_ORIGINS)'}`,
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: stopping (finishing requests and runs in flight)`);
    // Closing the service also writes out the last lines of the request log (its onClose hook).
    await service.close();
    await sandbox?.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
} catch (error) {
  const e = error as NodeJS.ErrnoException;
  if (e.code === 'EADDRINUSE') fail(`port ${port} is in use. Stop what runs there or pass --port.`);
  fail(e.message);
}
