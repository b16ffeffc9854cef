import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTokenHandler, toNodeHandler } from '../src/host/index.js';
import { type DemoUser, loadDemoUsers } from './seed.js';

/**
 * The demo host app: the backend of "Orbit", a SaaS product whose Integrations settings page
 * embeds the Forge elements. It holds the API key (from the environment, never sent to the
 * page), signs visitors in as one of three demo users (a cookie names which; a real app has its
 * own login) and serves the token endpoint the elements call. `npm start` runs it.
 */

const PORT = Number(process.env.PORT ?? 8000);
const SERVICE_URL = (process.env.FORGE_SERVICE_URL ?? 'http://localhost:4010').replace(/\/+$/, '');
const API_KEY = process.env.FORGE_API_KEY;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PUBLIC = join(ROOT, 'demo', 'public');
const BUNDLE = join(ROOT, 'dist', 'cdn', 'forge-embed.min.js');
const ORIGIN = `http://localhost:${PORT}`;
const SESSION_COOKIE = 'orbit_session';

if (!API_KEY) {
  console.error('demo: set FORGE_API_KEY to the Forge service API key (npm start does this for you).');
  process.exit(2);
}

const users = await loadDemoUsers({
  serviceUrl: SERVICE_URL,
  apiKey: API_KEY,
  statePath: join(ROOT, '.forge', 'demo-users.json'),
  origin: ORIGIN,
});

function signedInUser(cookieHeader: string | undefined): DemoUser | undefined {
  const slug = /(?:^|;\s*)orbit_session=([a-z]+)/.exec(cookieHeader ?? '')?.[1];
  return users.find((u) => u.slug === slug);
}

const tokenEndpoint = toNodeHandler(
  createTokenHandler({
    apiKey: API_KEY,
    serviceUrl: SERVICE_URL,
    getUserId: (request) => signedInUser(request.headers.get('cookie') ?? undefined)?.forgeId ?? null,
  }),
);

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const initials = (name: string) =>
  name
    .split(' ')
    .map((part) => part[0])
    .join('');

const template = readFileSync(join(PUBLIC, 'index.html'), 'utf8');

/** The settings page for `user`; every value from data is escaped before it meets markup. */
function renderPage(user: DemoUser): string {
  const options = users
    .map((u) => `<option value="${u.slug}"${u === user ? ' selected' : ''}>${escapeHtml(u.name)}</option>`)
    .join('');
  const values: Record<string, string> = {
    apiBase: escapeHtml(SERVICE_URL),
    userName: escapeHtml(user.name),
    userFirstName: escapeHtml(user.name.split(' ')[0]!),
    userInitials: escapeHtml(initials(user.name)),
    userIndex: String(users.indexOf(user) + 1),
    userOptions: options,
  };
  return template.replace(/\{\{(\w+)\}\}/g, (_, key: string) => values[key] ?? '');
}

/** Strict: the page runs only its own scripts, and talks only to itself and the Forge service. */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  `img-src 'self' data: ${SERVICE_URL}`,
  `connect-src 'self' ${SERVICE_URL}`,
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const STATIC: Record<string, { file: string; type: string }> = {
  '/demo.css': { file: join(PUBLIC, 'demo.css'), type: 'text/css; charset=utf-8' },
  '/demo.js': { file: join(PUBLIC, 'demo.js'), type: 'text/javascript; charset=utf-8' },
  '/forge-embed.js': { file: BUNDLE, type: 'text/javascript; charset=utf-8' },
  '/forge-embed.min.js.map': { file: `${BUNDLE}.map`, type: 'application/json' },
};

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  let text = '';
  for await (const chunk of req as AsyncIterable<Buffer>) {
    text += chunk.toString('utf8');
    if (text.length > 1000) break;
  }
  return new URLSearchParams(text);
}

function sessionCookie(user: DemoUser): string {
  return `${SESSION_COOKIE}=${user.slug}; Path=/; HttpOnly; SameSite=Lax`;
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { pathname } = new URL(req.url ?? '/', ORIGIN);
  if (pathname === '/forge-token') return tokenEndpoint(req, res);

  if (pathname === '/session' && req.method === 'POST') {
    const chosen = (await readForm(req)).get('user');
    const user = users.find((u) => u.slug === chosen);
    if (!user) {
      res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Pick one of the demo users.');
      return;
    }
    res.writeHead(303, { Location: '/', 'Set-Cookie': sessionCookie(user) }).end();
    return;
  }

  if (pathname === '/' && (req.method === 'GET' || req.method === 'HEAD')) {
    // First visit: sign the visitor in as the first demo user, as a login would.
    const user = signedInUser(req.headers.cookie) ?? users[0]!;
    res.writeHead(200, {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Security-Policy': CSP,
      'Set-Cookie': sessionCookie(user),
    });
    res.end(req.method === 'HEAD' ? undefined : renderPage(user));
    return;
  }

  const asset = STATIC[pathname];
  if (asset && req.method === 'GET') {
    if (!existsSync(asset.file)) {
      res
        .writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8' })
        .end(`${pathname} is not built yet. Run "npm run build" (npm start does it), then reload.`);
      return;
    }
    res.writeHead(200, { 'Content-Type': asset.type, 'Cache-Control': 'no-cache' });
    createReadStream(asset.file).pipe(res);
    return;
  }

  res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`Nothing at ${pathname}.`);
}

const server = createServer((req, res) => {
  handle(req, res).catch((error: unknown) => {
    console.error('demo:', error);
    if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('The demo server failed; see its log.');
  });
});

server.on('error', (error: NodeJS.ErrnoException) => {
  console.error(
    error.code === 'EADDRINUSE'
      ? `demo: port ${PORT} is in use. Stop what runs there, or start with another PORT, e.g. PORT=8080 npm start.`
      : `demo: ${error.message}`,
  );
  process.exit(1);
});

// Loopback only by default: the demo hands out tokens to whoever can reach it.
server.listen(PORT, process.env.HOST ?? '127.0.0.1', () => {
  console.log(`Demo host app listening on ${ORIGIN} (users: ${users.map((u) => u.name).join(', ')})`);
});

const stop = () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
