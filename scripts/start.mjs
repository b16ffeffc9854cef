// `npm start`: builds, then runs the local Forge service (demo catalog, database under .forge/),
// the sandbox the demo workflows call (when it is built), and the demo host app, and prints the
// URL to open. Ctrl-C stops all of them. PORT changes the demo's port (default 8000),
// FORGE_PORT the service's (default 4010), SANDBOX_PORT the sandbox's (default 4011).
// FORGE_ALLOWED_ORIGINS adds origins of your own pages to the demo's, which the service allows.
import './node-version.mjs';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const PORT = Number(process.env.PORT ?? 8000);
const FORGE_PORT = Number(process.env.FORGE_PORT ?? 4010);
const SANDBOX_PORT = Number(process.env.SANDBOX_PORT ?? 4011);
const STATE = '.forge';
const serviceUrl = `http://localhost:${FORGE_PORT}`;
const demoUrl = `http://localhost:${PORT}`;

if (!existsSync('node_modules')) {
  console.error('Run "npm install" first, then "npm start".');
  process.exit(1);
}
for (const [name, port] of [
  ['PORT', PORT],
  ['FORGE_PORT', FORGE_PORT],
  ['SANDBOX_PORT', SANDBOX_PORT],
]) {
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    console.error(`${name} must be a port number from 1 to 65535; got "${process.env[name]}".`);
    process.exit(2);
  }
}

// A port something else holds (often an `npm start` still running) fails now, before the build
// and before anything claims to be running. Listening on every address, as a check, also meets
// a server that holds the port on loopback only.
const portFree = (port) =>
  new Promise((resolve) => {
    const probe = createServer()
      .once('error', () => resolve(false))
      .listen(port, () => probe.close(() => resolve(true)));
  });
for (const [name, port, what, example] of [
  ['PORT', PORT, 'the demo', 8080],
  ['FORGE_PORT', FORGE_PORT, 'the Forge service', 4020],
  ['SANDBOX_PORT', SANDBOX_PORT, 'the sandbox', 4021],
]) {
  if (!(await portFree(port))) {
    console.error(
      `Port ${port} (${what}'s, ${name}) is in use: is another "npm start" still running? Stop it (Ctrl-C ` +
        `in its terminal), or start this one with another port, e.g. ${name}=${example} npm start.`,
    );
    process.exit(1);
  }
}

// The demo's own origins, and any the developer adds for pages of their own.
const allowedOrigins = [
  ...new Set([
    demoUrl,
    `http://127.0.0.1:${PORT}`,
    ...(process.env.FORGE_ALLOWED_ORIGINS ?? '')
      .split(',')
      .map((origin) => origin.trim().replace(/\/$/, ''))
      .filter(Boolean),
  ]),
];

console.log('Building…');
if (spawnSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' }).status !== 0) {
  console.error('The build failed; see the errors above.');
  process.exit(1);
}

// The host's API key, made once and kept beside the database; the demo's backend gets it from
// the environment, as a real backend would from its secret store.
mkdirSync(STATE, { recursive: true });
const keyFile = join(STATE, 'api-key');
if (!existsSync(keyFile))
  writeFileSync(keyFile, `forge_sk_${randomBytes(24).toString('base64url')}\n`, { mode: 0o600 });
const apiKey = process.env.FORGE_API_KEY || readFileSync(keyFile, 'utf8').trim();
const apiKeyLine = process.env.FORGE_API_KEY
  ? 'the FORGE_API_KEY you set'
  : `in ${keyFile}, a key for local development only (see it: cat ${keyFile})`;

// The sandbox stands in for the APIs the demo workflows call (Slack, HubSpot, …); the service
// points the demo catalog's HTTP blocks at it (FORGE_SANDBOX_URL), and it asks the service's local
// OAuth provider whether an OAuth app's token is valid.
const SANDBOX = 'server/dist/sandbox.js';
const SANDBOX_MAIN = `
import { startSandbox } from ${JSON.stringify(pathToFileURL(resolve(SANDBOX)).href)};
const sandbox = await startSandbox({ port: ${SANDBOX_PORT}, providerUrl: ${JSON.stringify(serviceUrl)} }).catch((error) => {
  if (error.code !== 'EADDRINUSE') throw error;
  console.error('Port ${SANDBOX_PORT} is in use. Stop what runs there, or start with another SANDBOX_PORT, e.g. SANDBOX_PORT=4012 npm start.');
  process.exit(1);
});
console.log('Sandbox (stand-in for Slack, HubSpot, Stripe, …) listening on ' + sandbox.url);
const stop = () => sandbox.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
`;

const children = new Map();
let stopping = false;

function run(name, args, env = {}) {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const prefix = `[${name}]`.padEnd(10);
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream.on('data', (chunk) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop();
      // The service prints the API key on start; the demo's key lives in .forge/api-key.
      for (const line of lines) if (!line.includes(apiKey)) console.log(`${prefix}${line}`);
    });
  }
  children.set(name, child);
  child.on('exit', (code, signal) => {
    children.delete(name);
    if (!stopping) {
      console.error(`${name} stopped unexpectedly (${signal ?? `exit code ${code}`}); stopping the rest.`);
      stop(1);
    } else if (children.size === 0) process.exit(process.exitCode ?? 0);
  });
  return child;
}

function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  process.exitCode = code;
  if (children.size === 0) process.exit(code);
  for (const child of children.values()) child.kill('SIGTERM');
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));

async function waitFor(name, url) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (stopping) return false;
    try {
      if ((await fetch(url)).ok) return true;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  console.error(`${name} did not answer at ${url} within 30 s; stopping.`);
  stop(1);
  return false;
}

async function main() {
  // The demo's error inbox runs on this machine, so the error webhook may point at loopback.
  const serviceArgs = ['--port', String(FORGE_PORT), '--db', join(STATE, 'forge.db'), '--allow-private-webhooks'];
  run('service', ['server/dist/main.js', ...serviceArgs], {
    FORGE_API_KEY: apiKey,
    FORGE_ALLOWED_ORIGINS: allowedOrigins.join(','),
    FORGE_SANDBOX_URL: `http://localhost:${SANDBOX_PORT}`,
    // The demo's console shows what the demo does; the request log is for hosts that run the service.
    FORGE_LOG: process.env.FORGE_LOG ?? 'off',
  });
  if (!(await waitFor('The Forge service', `${serviceUrl}/forge/2021-12/.well-known/jwks.json`))) return;

  if (existsSync(SANDBOX)) run('sandbox', ['--input-type=module', '-e', SANDBOX_MAIN]);

  run('demo', ['--import', 'tsx', 'demo/server.ts'], {
    PORT: String(PORT),
    FORGE_API_KEY: apiKey,
    FORGE_SERVICE_URL: serviceUrl,
    FORGE_SANDBOX_URL: `http://localhost:${SANDBOX_PORT}`,
  });
  if (!(await waitFor('The demo host app', `${demoUrl}/demo.css`))) return;

  console.log(`
    The forge-embed demo is running.

      Open            ${demoUrl}
      Forge service   ${serviceUrl}/forge/2021-12   (database: ${STATE}/forge.db)
      API key         ${apiKeyLine}
      Pages allowed   ${allowedOrigins.join(', ')}   (add yours: FORGE_ALLOWED_ORIGINS=http://localhost:3000 npm start)

    Press Ctrl-C to stop.
  `);
}

await main();
