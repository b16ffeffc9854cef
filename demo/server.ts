import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type RunningDemo, startDemo } from './app.js';

/**
 * Runs the demo host app (`demo/app.ts`) from the environment; `npm start` starts it with the
 * service and the sandbox. PORT is its port (default 8000), FORGE_SERVICE_URL the service,
 * FORGE_API_KEY the service's API key, HOST the address it listens on (default 127.0.0.1),
 * FORGE_SANDBOX_URL the sandbox its workflows call.
 */

const PORT = Number(process.env.PORT ?? 8000);
const API_KEY = process.env.FORGE_API_KEY;

if (!API_KEY) {
  console.error('demo: set FORGE_API_KEY to the Forge service API key (npm start does this for you).');
  process.exit(2);
}

const SERVICE_URL = process.env.FORGE_SERVICE_URL ?? 'http://localhost:4010';

let demo: RunningDemo;
try {
  demo = await startDemo({
    port: PORT,
    host: process.env.HOST,
    serviceUrl: SERVICE_URL,
    apiKey: API_KEY,
    sandboxUrl: process.env.FORGE_SANDBOX_URL,
    stateDir: join(fileURLToPath(new URL('..', import.meta.url)), '.forge'),
  });
} catch (error) {
  const e = error as NodeJS.ErrnoException;
  console.error(
    e.code === 'EADDRINUSE'
      ? `demo: port ${PORT} is in use. Stop what runs there, or start with another PORT, e.g. PORT=8080 npm start.`
      : e.message === 'fetch failed'
        ? `demo: could not reach the Forge service at ${SERVICE_URL}. Start it first (npm start does), or set FORGE_SERVICE_URL.`
        : `demo: ${e.message}`,
  );
  process.exit(1);
}

console.log(`Demo host app listening on ${demo.url} (users: ${demo.users.map((u) => u.name).join(', ')})`);
console.log(`Failed runs are delivered to the demo's error webhook, ${demo.errorWebhookUrl}`);

const stop = () => demo.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
