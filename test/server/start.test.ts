import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { test } from 'node:test';

/**
 * `npm start` (scripts/start.mjs) while something holds one of its ports, as a second `npm start`
 * would: it stops at once, before building, naming the port and what to do, and never says the
 * demo is running.
 */

async function hold(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
}

function start(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['scripts/start.mjs'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, output })));
}

for (const [name, what] of [
  ['PORT', 'the demo'],
  ['FORGE_PORT', 'the Forge service'],
  ['SANDBOX_PORT', 'the sandbox'],
] as const) {
  test(`a busy ${name} stops npm start before it builds, naming the port`, async () => {
    const { server, port } = await hold();
    try {
      // The other two ports are ones nothing listens on (just freed).
      const free = await hold();
      free.server.close();
      const env = { PORT: String(free.port), FORGE_PORT: String(free.port + 1), SANDBOX_PORT: String(free.port + 2) };
      const { code, output } = await start({ ...env, [name]: String(port) });
      assert.equal(code, 1);
      assert.match(output, new RegExp(`Port ${port} \\(${what}'s, ${name}\\) is in use`));
      assert.match(output, /another "npm start" still running/);
      assert.doesNotMatch(output, /Building|is running/);
    } finally {
      server.close();
    }
  });
}
