import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';

/**
 * The sandbox: a small stand-in for the APIs the demo catalog's HTTP blocks call (Slack,
 * Google Sheets, HubSpot, Mailchimp, Stripe), so the demo's workflows run offline and show real
 * logs and real errors. Answers are plausible, not faithful. It fails the way the real APIs do
 * when a setting is missing (an empty spreadsheet or audience id is a 404), and on purpose when
 * asked: a request with the header `X-Sandbox-Fail: <status>` or the query `?sandboxFail=<status>`
 * gets that status. Every request needs `Authorization: Bearer …`, which the engine sends from
 * the user's stored credential for the block's integration. The OAuth apps (Slack, Google Sheets,
 * HubSpot) accept, as real APIs do, only a token their provider issued and still considers valid:
 * given the local provider's address (`providerUrl`, or `useProvider` once the service listens),
 * the sandbox asks it (introspection, RFC 7662) and answers 401 to any other token. Without one,
 * and for the API-key apps, any credential is taken but one that starts with `revoked`.
 * The demo can revoke access: after `POST /sandbox/revoke/<app>` (`slack`, `sheets`, …) the
 * next credential sent to that app is refused, then and always; for an OAuth app the sandbox
 * removes the grant at the provider (as the user would in the app's settings), so the service's
 * next refresh is refused too and the connection turns broken.
 */

export const DEFAULT_SANDBOX_PORT = 4011;
export const DEFAULT_SANDBOX_URL = `http://localhost:${DEFAULT_SANDBOX_PORT}`;

export interface SandboxOptions {
  /** TCP port; 0 picks a free one. Default 4011. */
  port?: number;
  host?: string;
  /** The service whose local OAuth provider issued the OAuth apps' tokens (its origin). */
  providerUrl?: string;
}

export interface SandboxRequest {
  method: string;
  path: string;
  body: unknown;
}

export interface RunningSandbox {
  server: Server;
  /** `http://localhost:<port>`. */
  url: string;
  /** What the sandbox was sent, oldest first (never the credentials). */
  requests: SandboxRequest[];
  /** From now on, the OAuth apps' tokens are checked with the local provider of the service at `url`. */
  useProvider(url: string): void;
  close(): Promise<void>;
}

/** The sandbox's OAuth apps, by the first segment of their paths: the catalog's integration names. */
const OAUTH_APPS: Record<string, string> = { slack: 'slack', sheets: 'google-sheets', hubspot: 'hubspot' };
const PROVIDER_TIMEOUT_MS = 5000;

type Answer = { status: number; body: unknown };
type Handler = (request: { segments: string[]; query: URLSearchParams; body: Record<string, unknown> }) => Answer;

const MAX_KEPT_REQUESTS = 1000;

/** The sandbox Slack workspace's public channels: [id, name]. */
export const SLACK_CHANNELS: Array<[id: string, name: string]> = [
  'general',
  'payments',
  'sales',
  'finance',
  'support',
  'marketing',
  'engineering',
  'random',
  'announcements',
  'design',
  'operations',
  'hiring',
].map((name, i) => [`C0${String(i + 1).padStart(8, '0')}`, name]);

/** Where a page starts: Slack's cursors are opaque; the sandbox's are `offset:<n>` in base64. */
function cursorOffset(cursor: string | null): number | undefined {
  if (!cursor) return 0;
  const match = /^offset:(\d{1,6})$/.exec(Buffer.from(cursor, 'base64').toString('utf8'));
  return match ? Number(match[1]) : undefined;
}

const RECENT_CONTACTS = [
  { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' },
  { email: 'alan@example.com', firstName: 'Alan', lastName: 'Turing' },
];

export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const requests: SandboxRequest[] = [];
  const sheetRows = new Map<string, number>();
  /** Apps whose next credential is to be revoked, and the credentials revoked. */
  const revokeNext = new Set<string>();
  const revoked = new Set<string>();
  let providerUrl = options.providerUrl?.replace(/\/+$/, '');
  /** A call to the local provider about a token: introspection, or removing its grant. */
  const askProvider = (app: string, action: 'introspect' | 'remove-access', token: string) =>
    fetch(`${providerUrl}/local-oauth/${app}/${action}`, {
      method: 'POST',
      ...(action === 'introspect'
        ? { headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token }) }
        : { headers: { Authorization: `Bearer ${token}` } }),
      signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
    });

  const routes: Record<string, Handler> = {
    // Slack's channel list, paged as Slack pages it (`cursor`, `limit`, `response_metadata.next_cursor`):
    // what a settings field offers to choose from (issue 26).
    'GET /slack/conversations.list': ({ query }) => {
      const limit = Math.min(Math.max(Number(query.get('limit')) || 100, 1), 1000);
      const start = cursorOffset(query.get('cursor'));
      if (start === undefined) return { status: 200, body: { ok: false, error: 'invalid_cursor' } };
      const page = SLACK_CHANNELS.slice(start, start + limit);
      const rest = start + limit < SLACK_CHANNELS.length;
      return {
        status: 200,
        body: {
          ok: true,
          channels: page.map(([id, name]) => ({ id, name, is_channel: true, is_private: false })),
          response_metadata: { next_cursor: rest ? Buffer.from(`offset:${start + limit}`).toString('base64') : '' },
        },
      };
    },
    'POST /slack/chat.postMessage': ({ body }) => {
      const channel = typeof body.channel === 'string' ? body.channel : '';
      // A channel by its name, or by the id the channel list gives.
      if (!/^#[\w-]+$/.test(channel) && !SLACK_CHANNELS.some(([id]) => id === channel)) {
        return { status: 404, body: { ok: false, error: 'channel_not_found' } };
      }
      if (typeof body.text !== 'string' || !body.text.trim())
        return { status: 400, body: { ok: false, error: 'no_text' } };
      return {
        status: 200,
        body: { ok: true, channel, ts: (Date.now() / 1000).toFixed(6), message: { type: 'message', text: body.text } },
      };
    },
    'POST /sheets/:id/:range': ({ segments: [, , id = '', range = ''], body }) => {
      const [sheet = '', action] = range.split(':');
      if (!id) return googleError(404, 'Requested entity was not found: set the spreadsheet id.');
      if (action !== 'append' || !sheet) return googleError(400, `Unable to parse range: ${range}`);
      if (!Array.isArray(body.values)) return googleError(400, 'values must be a list of cells.');
      const row = (sheetRows.get(`${id}/${sheet}`) ?? 1) + 1;
      sheetRows.set(`${id}/${sheet}`, row);
      const lastColumn = String.fromCharCode(64 + Math.max(1, Math.min(26, body.values.length)));
      return {
        status: 200,
        body: {
          spreadsheetId: id,
          updates: {
            updatedRange: `${sheet}!A${row}:${lastColumn}${row}`,
            updatedRows: 1,
            updatedCells: body.values.length,
          },
        },
      };
    },
    'GET /hubspot/contacts/recent': () => ({ status: 200, body: { contacts: RECENT_CONTACTS } }),
    'POST /hubspot/tasks': ({ body }) => {
      const owner = typeof body.owner === 'string' ? body.owner : '';
      if (!/^[^\s@]+@[^\s@]+$/.test(owner)) {
        return {
          status: 400,
          body: {
            status: 'error',
            message: 'owner must be the e-mail address of a HubSpot user.',
            category: 'VALIDATION_ERROR',
          },
        };
      }
      const days = typeof body.dueInDays === 'number' ? body.dueInDays : 0;
      const due = new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
      return { status: 201, body: { id: randomUUID(), subject: body.subject ?? '', owner, dueDate: due } };
    },
    'POST /mailchimp/lists/:audience/members': ({ segments: [, , , audience = ''], body }) => {
      if (!audience) {
        return { status: 404, body: { title: 'Resource Not Found', status: 404, detail: 'Set the audience id.' } };
      }
      const contacts = Array.isArray(body.contacts) ? body.contacts : [];
      return { status: 200, body: { audienceId: audience, added: contacts.length, tags: body.tags ?? [] } };
    },
    'GET /stripe/balance': ({ query }) => ({
      status: 200,
      body: { object: 'balance', amount: 1842.5, currency: (query.get('currency') ?? 'usd').toLowerCase() },
    }),
  };

  const app = Fastify({ bodyLimit: 1024 * 1024 });
  // Whatever the engine sends is taken: JSON when it parses, the text as it came otherwise.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, text, done) => {
    try {
      done(null, text === '' ? undefined : JSON.parse(text as string));
    } catch {
      done(null, text);
    }
  });
  app.all('/*', async (request, reply) => {
    const url = new URL(request.url, 'http://sandbox');
    const revoke = /^\/sandbox\/revoke\/([\w-]+)$/.exec(url.pathname);
    if (revoke && request.method === 'POST') {
      revokeNext.add(revoke[1]!);
      return reply.code(204).send();
    }
    const body = request.body;
    requests.push({ method: request.method, path: url.pathname + url.search, body });
    // A long demo session must not grow this without end.
    if (requests.length > MAX_KEPT_REQUESTS) requests.shift();
    const fail = Number(request.headers['x-sandbox-fail'] ?? url.searchParams.get('sandboxFail'));
    if (fail >= 400 && fail <= 599) {
      return reply.code(fail).send({ error: { message: `The sandbox failed on purpose with ${fail}, as asked.` } });
    }
    if (!/^Bearer \S+/.test(request.headers.authorization ?? '')) {
      return reply.code(401).send({ error: { message: 'No credential sent: connect the integration first.' } });
    }
    const credential = request.headers.authorization!;
    const service = url.pathname.split('/')[1] ?? '';
    const oauthApp = providerUrl ? OAUTH_APPS[service] : undefined;
    if (oauthApp) {
      const token = credential.slice('Bearer '.length);
      if (revokeNext.delete(service)) await askProvider(oauthApp, 'remove-access', token);
      const answer = await askProvider(oauthApp, 'introspect', token);
      if (!answer.ok || !((await answer.json()) as { active?: boolean }).active) {
        return reply
          .code(401)
          .send({ error: { message: 'invalid_auth: the token is not valid (revoked or expired).' } });
      }
    } else {
      if (revokeNext.delete(service)) revoked.add(credential);
      if (revoked.has(credential) || /^Bearer revoked/.test(credential)) {
        return reply.code(401).send({ error: { message: 'invalid_auth: the token was revoked.' } });
      }
    }
    let segments: string[];
    try {
      segments = url.pathname.split('/').map(decodeURIComponent);
    } catch {
      return reply.code(400).send({ error: { message: `The path ${url.pathname} is not correctly URL-encoded.` } });
    }
    const handler = routes[`${request.method} ${routeKey(segments)}`];
    if (!handler) {
      return reply.code(404).send({ error: { message: `The sandbox has no ${request.method} ${url.pathname}.` } });
    }
    const answer = handler({ segments, query: url.searchParams, body: isObject(body) ? body : {} });
    return reply.code(answer.status).send(answer.body);
  });
  await app.listen({ port: options.port ?? DEFAULT_SANDBOX_PORT, host: options.host ?? '127.0.0.1' });
  const server = app.server;
  return {
    server,
    url: `http://localhost:${(server.address() as AddressInfo).port}`,
    requests,
    useProvider: (url) => {
      providerUrl = url.replace(/\/+$/, '');
    },
    close: () => app.close(),
  };
}

/** The route a path falls under: ids in the path become placeholders. */
function routeKey(segments: string[]): string {
  const [, service] = segments;
  if (service === 'sheets' && segments.length === 4) return '/sheets/:id/:range';
  if (service === 'mailchimp' && segments.length === 5 && segments[2] === 'lists' && segments[4] === 'members') {
    return '/mailchimp/lists/:audience/members';
  }
  return segments.join('/');
}

const googleError = (code: number, message: string): Answer => ({
  status: code,
  body: { error: { code, message, status: code === 404 ? 'NOT_FOUND' : 'INVALID_ARGUMENT' } },
});

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
