import type { IncomingMessage, ServerResponse } from 'node:http';

/** What `toNodeHandler` passes beside the request: Node's own objects, e.g. for an Express session. */
export interface NodeContext {
  req: IncomingMessage;
  res: ServerResponse;
}

export type NodeHandler = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;

/** Express keeps the full URL here when a router is mounted on a path. */
type MaybeExpressRequest = IncomingMessage & { originalUrl?: string };

async function toRequest(req: MaybeExpressRequest): Promise<Request> {
  const protocol = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const url = new URL(req.originalUrl ?? req.url ?? '/', `${protocol}://${req.headers.host ?? 'localhost'}`);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  const method = req.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD') return new Request(url, { method, headers });
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  for await (const chunk of req as AsyncIterable<Uint8Array<ArrayBuffer>>) chunks.push(chunk);
  return new Request(url, { method, headers, body: new Blob(chunks) });
}

async function send(response: Response, res: ServerResponse): Promise<void> {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') res.setHeader(name, value);
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) res.setHeader('Set-Cookie', cookies);
  res.end(new Uint8Array(await response.arrayBuffer()));
}

/**
 * Adapts a Fetch-style handler (such as `createTokenHandler`'s) to Node's `http` server and to
 * Express/Connect middleware: `app.get('/forge-token', toNodeHandler(handler))`. The handler gets
 * `{req, res}` as its second argument. A handler that throws goes to Express's `next(error)`;
 * without `next` (plain `node:http`) it becomes a 500 whose body says nothing of the cause, and
 * the cause is written to `console.error`.
 */
export function toNodeHandler(handler: (request: Request, context: NodeContext) => Promise<Response>): NodeHandler {
  return (req, res, next) => {
    toRequest(req)
      .then((request) => handler(request, { req, res }))
      .then((response) => send(response, res))
      .catch((error: unknown) => {
        if (next) return next(error);
        console.error('forge-embed/host: the handler failed', error);
        if (res.headersSent) return res.destroy();
        res.writeHead(500, { 'Content-Type': 'application/problem+json', 'Cache-Control': 'no-store' });
        res.end(
          JSON.stringify({
            type: 'https://forge-embed.dev/problems/internal',
            title: 'Internal error',
            status: 500,
            detail: 'The token endpoint failed. Try again; if it keeps failing, see the server log.',
          }),
        );
      });
  };
}
