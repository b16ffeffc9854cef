import { createReadStream, existsSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
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
  /** The sandbox the demo's workflows call, so the demo can revoke an app's access there. */
  sandboxUrl?: string | undefined;
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
/** The CDN bundle's folder: its entry and the chunks it imports beside it (the modal's), served as `/cdn/<file>`. */
const CDN = join(ROOT, 'dist', 'cdn');
const CDN_FILE = /^[\w-]+\.min\.js(\.map)?$/;
const SESSION_COOKIE = 'orbit_session';
const MAX_FORM_BYTES = 1000;
/** An error log entry is small; anything far larger is not one. */
const MAX_JSON_BYTES = 100_000;

const JS = 'text/javascript; charset=utf-8';
const STATIC: Record<string, { file: string; type: string }> = {
  '/demo.css': { file: join(PUBLIC, 'demo.css'), type: 'text/css; charset=utf-8' },
  '/demo.js': { file: join(PUBLIC, 'demo.js'), type: JS },
  '/activity.js': { file: join(PUBLIC, 'activity.js'), type: JS },
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

  const app = Fastify();
  // The error webhook takes what the service sends; a body that is no JSON is refused by the route, not the parser.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: MAX_JSON_BYTES }, (_req, text, done) => {
    try {
      done(null, JSON.parse(text as string));
    } catch {
      done(null, undefined);
    }
  });
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: MAX_FORM_BYTES },
    (_req, text, done) => done(null, new URLSearchParams(text as string)),
  );
  const json = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' };

  app.all('/forge-token', async (request, reply) => {
    reply.hijack();
    await tokenEndpoint(request.raw, reply.raw);
  });

  app.post('/demo/error-webhook', async (request, reply) => {
    // The service sends no credential (the service interface defines none), so the receiver
    // takes only what looks like an error log entry.
    if (inbox.receive(request.body)) return reply.code(204).send();
    return reply
      .code(400)
      .headers(json)
      .send({ message: 'Send an error log entry: a JSON object with _id, workflowId, executionId.' });
  });

  const signedIn = (request: FastifyRequest) => {
    const user = signedInUser(request.headers.cookie);
    if (!user) throw new ActivityError(401, 'You are signed out. Reload the page to sign in again.');
    return user;
  };

  app.get('/demo/activity', async (request, reply) => reply.headers(json).send(await activity.read(signedIn(request))));

  // A JSON body makes a cross-site form post impossible (it needs a CORS preflight we never
  // answer), on top of the SameSite session cookie.
  app.post('/demo/test-event', async (request, reply) => {
    const user = signedIn(request);
    if (!/^application\/json\b/.test(request.headers['content-type'] ?? '')) {
      return reply.code(415).headers(json).send({ message: 'Send the test event as JSON.' });
    }
    const { workflowId, failing } = (request.body ?? {}) as { workflowId?: unknown; failing?: unknown };
    if (typeof workflowId !== 'string')
      return reply.code(400).headers(json).send({ message: 'Name the workflowId to send to.' });
    return reply.headers(json).send(await activity.sendTestEvent(user, workflowId, failing === true));
  });

  // As if the user revoked the app's access in the app itself: its next run there is refused,
  // and the workflow list offers to connect it again.
  app.post('/demo/revoke', async (request, reply) => {
    signedIn(request);
    const integration = ((request.body ?? {}) as { integration?: unknown }).integration;
    const app = integration === 'google-sheets' ? 'sheets' : integration;
    if (!options.sandboxUrl || typeof app !== 'string' || !/^[\w-]+$/.test(app)) {
      return reply.code(400).headers(json).send({ message: 'Name an integration the sandbox stands in for.' });
    }
    await fetch(`${options.sandboxUrl}/sandbox/revoke/${app}`, { method: 'POST' });
    return reply.code(204).send();
  });

  app.post('/session', async (request, reply) => {
    const chosen = (request.body as URLSearchParams | undefined)?.get('user');
    const user = users.find((u) => u.slug === chosen);
    if (!user) return reply.code(400).type('text/plain; charset=utf-8').send('Pick one of the demo users.');
    return reply
      .code(303)
      .headers({ Location: '/', 'Set-Cookie': sessionCookie(user) })
      .send();
  });

  // GET answers HEAD too (Fastify adds it), without the body.
  app.get('/', async (request, reply) => {
    // First visit: sign the visitor in as the first demo user, as a login would.
    const user = signedInUser(request.headers.cookie) ?? users[0]!;
    return reply
      .headers({
        'Content-Type': 'text/html; charset=utf-8',
        'Cache-Control': 'no-store',
        'Content-Security-Policy': csp,
        'Set-Cookie': sessionCookie(user),
      })
      .send(renderPage(users, user, serviceUrl));
  });

  const sendFile = (reply: FastifyReply, path: string, { file, type }: { file: string; type: string }) => {
    if (!existsSync(file)) {
      return reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send(`${path} is not built yet. Run "npm run build" (npm start does it), then reload.`);
    }
    return reply.headers({ 'Content-Type': type, 'Cache-Control': 'no-cache' }).send(createReadStream(file));
  };
  for (const [path, asset] of Object.entries(STATIC)) {
    app.get(path, async (_request, reply) => sendFile(reply, path, asset));
  }
  // The bundle's entry and its chunks from one folder, under their own names: the entry imports
  // the modal's chunk as `./config-modal-<hash>.min.js` and the chunk imports the entry back as
  // `./forge-embed.min.js`, which must be the very URL the page loaded (one module, one Lit).
  app.get<{ Params: { file: string } }>('/cdn/:file', async (request, reply) => {
    const { file } = request.params;
    if (!CDN_FILE.test(file)) return reply.callNotFound();
    const type = file.endsWith('.map') ? 'application/json' : JS;
    return sendFile(reply, `/cdn/${file}`, { file: join(CDN, file), type });
  });

  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .type('text/plain; charset=utf-8')
      .send(`Nothing at ${new URL(request.url, origin).pathname}.`),
  );

  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof ActivityError) return reply.code(error.status).headers(json).send({ message: error.message });
    if (error instanceof ForgeApiError) {
      return reply
        .code(502)
        .headers(json)
        .send({ message: `The Forge service answered ${error.status}: ${error.message}` });
    }
    const status = (error as { statusCode?: number }).statusCode;
    if (status && status < 500)
      return reply
        .code(status)
        .headers(json)
        .send({ message: (error as Error).message });
    console.error('demo:', error);
    const unreachable = error instanceof TypeError && error.message === 'fetch failed';
    return reply
      .code(502)
      .headers(json)
      .send({
        message: unreachable
          ? `Could not reach the Forge service at ${serviceUrl}. Is it running? (npm start runs it.)`
          : 'The demo server failed; see its log.',
      });
  });

  await app.listen({ port: options.port, host: options.host ?? '127.0.0.1' });
  // Registered once listening, so the service can deliver what waited for the receiver at once.
  // The demo is the host of its service, so it takes the setting over on every start.
  await activity.registerErrorWebhook().catch((error: Error) => {
    console.error(`demo: could not set the error webhook (${error.message}); failed runs will not be delivered.`);
  });

  return {
    server: app.server,
    url: origin,
    users,
    errorWebhookUrl,
    close: () => app.close(),
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
