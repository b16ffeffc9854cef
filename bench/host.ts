import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServiceProcess } from './service.js';

const PAGE_SCRIPT = fileURLToPath(new URL('page.js', import.meta.url));

const page = (entry: string) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>forge-embed bench</title>
  <script type="module" src="/cdn/${entry}"></script>
  <script type="module" src="/page.js"></script>
</head>
<body></body>
</html>`;

export interface BenchHost {
  /** `http://localhost:<port>`: the page's origin, which the service must allow. */
  origin: string;
  /** The host's token endpoint for one user, as `token-url` takes it. */
  tokenUrl(userId: string): string;
  /** The service whose tokens the endpoint hands out. */
  service?: ServiceProcess;
  close(): Promise<void>;
}

/**
 * The bench's host app: the page that loads the CDN bundle (its entry, which loads its chunks,
 * and the bench's own page script), and a token endpoint that does what a host backend does: asks the service for a user token
 * with the API key, which never reaches the page.
 */
export async function startHost(cdnBundle: string): Promise<BenchHost> {
  const host: BenchHost = {
    origin: '',
    tokenUrl: (userId) => `${host.origin}/token?user=${encodeURIComponent(userId)}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', host.origin);
    const send = (status: number, type: string, body: string | Buffer) => {
      res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' }).end(body);
    };
    switch (url.pathname) {
      case '/':
        return send(200, 'text/html; charset=utf-8', page(basename(cdnBundle)));
      case '/favicon.ico':
        return send(204, 'image/x-icon', '');
      case '/page.js':
        return send(200, 'text/javascript', readFileSync(PAGE_SCRIPT));
      case '/token': {
        const user = url.searchParams.get('user') ?? '';
        if (!host.service) return send(503, 'text/plain', 'No service behind this bench host yet.');
        host.service
          .hostApi<{ token: string }>('GET', `/user/${encodeURIComponent(user)}/token`)
          .then(({ token }) => send(200, 'application/json', JSON.stringify({ token })))
          .catch((error: Error) => send(502, 'text/plain', error.message));
        return;
      }
      default: {
        // The CDN entry and the chunks beside it, read on every request, so a bundle rebuilt
        // between runs is the one measured; no-store, so every page loads them afresh.
        const file = /^\/cdn\/([\w.-]+\.js)$/.exec(url.pathname)?.[1];
        if (file) {
          try {
            return send(200, 'text/javascript', readFileSync(join(dirname(cdnBundle), file)));
          } catch {
            // Not there: answered below.
          }
        }
        return send(404, 'text/plain', `No ${url.pathname} on the bench host.`);
      }
    }
  });
  // Keep-alive as a real host has it, so the token fetch reuses its connection.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  host.origin = `http://localhost:${(server.address() as AddressInfo).port}`;
  return host;
}
