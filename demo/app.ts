import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ForgeApiError, ForgeClient } from '../src/api/index.js';
import { createTokenHandler, toNodeHandler } from '../src/host/index.js';
import { Activity, ActivityError } from './activity.js';
import { ErrorInbox } from './error-inbox.js';
import { type DemoUser, loadDemoUsers } from './seed.js';

/**
 * The demo host app: the backend of "Orbit", a SaaS product whose Integrations settings page
 * embeds the Forge elements. It holds the API key (never sent to the page), signs visitors in as
 * one of three demo users (a cookie names which; a real app has its own login), serves the token
 * endpoint the elements call, and shows the user's workflow runs through small JSON endpoints
 * that read the service with the API key. It is also the host's error webhook receiver.
 */

export interface DemoOptions {
  port: number;
  /** Loopback by default: the demo hands out tokens to whoever can reach it. */
  host?: string;
  serviceUrl: string;
  apiKey: string;
  /** Where the host app keeps its state: the demo users' Forge ids, what its error webhook got. */
  stateDir: string;
}

export interface RunningDemo {
  server: Server;
  /** `http://localhost:<port>`. */
  url: string;
  users: DemoUser[];
  /** Where the service delivers error log entries: the demo's receiver. */
  errorWebhookUrl: string;
  close(): Promise<void>;
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PUBLIC = join(ROOT, 'demo', 'public');
const BUNDLE = join(ROOT, 'dist', 'cdn', 'forge-embed.min.js');
const SESSION_COOKIE = 'orbit_session';
const MAX_FORM_CHARS = 1000;
/** An error log entry is small; anything far larger is not one. */
const MAX_JSON_CHARS = 100_000;

const JS = 'text/javascript; charset=utf-8';
const STATIC: Record<string, { file: string; type: string }> = {
  '/demo.css': { file: join(PUBLIC, 'demo.css'), type: 'text/css; charset=utf-8' },
  '/demo.js': { file: join(PUBLIC, 'demo.js'), type: JS },
  '/activity.js': { file: join(PUBLIC, 'activity.js'), type: JS },
  '/forge-embed.js': { file: BUNDLE, type: JS },
  '/forge-embed.min.js.map': { file: `${BUNDLE}.map`, type: 'application/json' },
  '/custom-elements.json': { file: join(ROOT, 'custom-elements.json'), type: 'application/json' },
};

const template = readFileSync(join(PUBLIC, 'index.html'), 'utf8');

export async function startDemo(options: DemoOptions): Promise<RunningDemo> {
  const serviceUrl = options.serviceUrl.replace(/\/+$/, '');
  const origin = `http://localhost:${options.port}`;
  const users = await loadDemoUsers({
    serviceUrl,
    apiKey: options.apiKey,
    statePath: join(options.stateDir, 'demo-users.json'),
    origin,
  });
  const inbox = new ErrorInbox(join(options.stateDir, 'demo-error-inbox.json'));
  // The service calls it from the same machine; 127.0.0.1 is what the demo listens on.
  const errorWebhookUrl = `http://127.0.0.1:${options.port}/demo/error-webhook`;
  const activity = new Activity({
    admin: new ForgeClient({ baseUrl: serviceUrl, credential: options.apiKey }),
    inbox,
    receiverUrl: errorWebhookUrl,
  });

  const signedInUser = (cookieHeader: string | undefined | null): DemoUser | undefined => {
    const slug = new RegExp(`(?:^|;\\s*)${SESSION_COOKIE}=([a-z]+)`).exec(cookieHeader ?? '')?.[1];
    return users.find((u) => u.slug === slug);
  };

  const tokenEndpoint = toNodeHandler(
    createTokenHandler({
      apiKey: options.apiKey,
      serviceUrl,
      getUserId: (request) => signedInUser(request.headers.get('cookie'))?.forgeId ?? null,
    }),
  );

  const csp = contentSecurityPolicy(serviceUrl);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { pathname } = new URL(req.url ?? '/', origin);
    if (pathname === '/forge-token') return tokenEndpoint(req, res);

    if (pathname === '/demo/error-webhook' && req.method === 'POST') {
      // The service sends no credential (the service interface defines none), so the receiver
      // takes only what looks like an error log entry.
      const accepted = inbox.receive(await readJson(req));
      if (accepted) res.writeHead(204).end();
      else sendJson(res, 400, { message: 'Send an error log entry: a JSON object with _id, workflowId, executionId.' });
      return;
    }

    if (pathname.startsWith('/demo/')) {
      const user = signedInUser(req.headers.cookie);
      if (!user) return sendJson(res, 401, { message: 'You are signed out. Reload the page to sign in again.' });
      if (pathname === '/demo/activity' && req.method === 'GET') {
        return sendJson(res, 200, await activity.read(user));
      }
      // A JSON body makes a cross-site form post impossible (it needs a CORS preflight we never
      // answer), on top of the SameSite session cookie.
      if (pathname === '/demo/test-event' && req.method === 'POST' && isJson(req)) {
        const { workflowId, failing } = ((await readJson(req)) ?? {}) as { workflowId?: unknown; failing?: unknown };
        if (typeof workflowId !== 'string') return sendJson(res, 400, { message: 'Name the workflowId to send to.' });
        return sendJson(res, 200, await activity.sendTestEvent(user, workflowId, failing === true));
      }
    }

    if (pathname === '/session' && req.method === 'POST') {
      const chosen = new URLSearchParams(await readText(req, MAX_FORM_CHARS)).get('user');
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
        'Content-Security-Policy': csp,
        'Set-Cookie': sessionCookie(user),
      });
      res.end(req.method === 'HEAD' ? undefined : renderPage(users, user, serviceUrl));
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
      if (res.headersSent) return void res.end();
      if (error instanceof ActivityError) return sendJson(res, error.status, { message: error.message });
      if (error instanceof ForgeApiError) {
        return sendJson(res, 502, { message: `The Forge service answered ${error.status}: ${error.message}` });
      }
      console.error('demo:', error);
      const unreachable = error instanceof TypeError && error.message === 'fetch failed';
      sendJson(res, 502, {
        message: unreachable
          ? `Could not reach the Forge service at ${serviceUrl}. Is it running? (npm start runs it.)`
          : 'The demo server failed; see its log.',
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => resolve());
  });
  // Registered once listening, so the service can deliver what waited for the receiver at once.
  // The demo is the host of its service, so it takes the setting over on every start.
  await activity.registerErrorWebhook().catch((error: Error) => {
    console.error(`demo: could not set the error webhook (${error.message}); failed runs will not be delivered.`);
  });

  return {
    server,
    url: origin,
    users,
    errorWebhookUrl,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const initials = (name: string) =>
  name
    .split(' ')
    .map((part) => part[0])
    .join('');

/** The settings page for `user`; every value from data is escaped before it meets markup. */
function renderPage(users: DemoUser[], user: DemoUser, serviceUrl: string): string {
  const options = users
    .map((u) => `<option value="${u.slug}"${u === user ? ' selected' : ''}>${escapeHtml(u.name)}</option>`)
    .join('');
  const values: Record<string, string> = {
    apiBase: escapeHtml(serviceUrl),
    userName: escapeHtml(user.name),
    userFirstName: escapeHtml(user.name.split(' ')[0]!),
    userInitials: escapeHtml(initials(user.name)),
    userIndex: String(users.indexOf(user) + 1),
    userOptions: options,
  };
  return template.replace(/\{\{(\w+)\}\}/g, (_, key: string) => values[key] ?? '');
}

/** Strict: the page runs only its own scripts, and talks only to itself and the Forge service. */
function contentSecurityPolicy(serviceUrl: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data: ${serviceUrl}`,
    `connect-src 'self' ${serviceUrl}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function sessionCookie(user: DemoUser): string {
  return `${SESSION_COOKIE}=${user.slug}; Path=/; HttpOnly; SameSite=Lax`;
}

const isJson = (req: IncomingMessage) => /^application\/json\b/.test(req.headers['content-type'] ?? '');

async function readText(req: IncomingMessage, maxChars: number): Promise<string> {
  let text = '';
  for await (const chunk of req as AsyncIterable<Buffer>) {
    text += chunk.toString('utf8');
    if (text.length > maxChars) break;
  }
  return text;
}

/** The body as JSON; undefined when it is not JSON or too large. */
async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = await readText(req, MAX_JSON_CHARS);
  if (text.length > MAX_JSON_CHARS) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify(body));
}
