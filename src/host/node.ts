/**
 * The parts of Node's `http.IncomingMessage` the adapter reads. Declared here rather than
 * imported from `node:http`, so a project compiles these types without `@types/node`; Node's
 * own request (and Express's) fits.
 */
export interface NodeRequest extends AsyncIterable<unknown> {
  method?: string | undefined;
  url?: string | undefined;
  headers: {
    host?: string | undefined;
    cookie?: string | undefined;
    'content-length'?: string | undefined;
    [name: string]: string | string[] | undefined;
  };
  /** A TLS socket has `encrypted: true`. */
  socket: object;
  /** Express keeps the full URL here when a router is mounted on a path. */
  originalUrl?: string;
}

/** The parts of Node's `http.ServerResponse` the adapter uses. */
export interface NodeResponse {
  statusCode: number;
  readonly headersSent: boolean;
  setHeader(name: string, value: string | string[]): unknown;
  end(chunk?: Uint8Array | string): unknown;
  destroy(error?: Error): unknown;
}

/** What `toNodeHandler` passes beside the request: Node's own objects, e.g. for an Express session. */
export interface NodeContext<Req extends NodeRequest = NodeRequest, Res extends NodeResponse = NodeResponse> {
  req: Req;
  res: Res;
}

export type NodeHandler<Req extends NodeRequest = NodeRequest, Res extends NodeResponse = NodeResponse> = (
  req: Req,
  res: Res,
  next?: (error?: unknown) => void,
) => void;

export interface NodeHandlerOptions {
  /**
   * The methods the handler answers. Any other is answered 405 before a byte of its body is read,
   * so nobody can make the server buffer a large upload it would refuse anyway. Default: GET, all
   * a token endpoint answers.
   */
  methods?: string[];
  /** The largest request body read for an allowed method, in bytes; a larger one is a 413. Default 64 KiB. */
  maxBodyBytes?: number;
}

/** Thrown while reading a body past `maxBodyBytes`. */
class BodyTooLarge extends Error {}

async function readBody(req: NodeRequest, maxBytes: number): Promise<Blob> {
  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes) throw new BodyTooLarge();
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Uint8Array<ArrayBuffer>>) {
    size += chunk.byteLength;
    if (size > maxBytes) throw new BodyTooLarge();
    chunks.push(chunk);
  }
  return new Blob(chunks);
}

async function toRequest(req: NodeRequest, maxBodyBytes: number): Promise<Request> {
  const protocol = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const url = new URL(req.originalUrl ?? req.url ?? '/', `${protocol}://${req.headers.host ?? 'localhost'}`);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  const method = req.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD') return new Request(url, { method, headers });
  return new Request(url, { method, headers, body: await readBody(req, maxBodyBytes) });
}

async function send(response: Response, res: NodeResponse): Promise<void> {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') res.setHeader(name, value);
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) res.setHeader('Set-Cookie', cookies);
  res.end(new Uint8Array(await response.arrayBuffer()));
}

/**
 * Answers a problem document and closes the connection: the request's body (if any) is left
 * unread, and closing keeps Node from reading the rest of it just to reuse the connection.
 */
function refuse(
  res: NodeResponse,
  status: number,
  [slug, title]: [string, string],
  detail: string,
  headers: Record<string, string> = {},
) {
  res.statusCode = status;
  for (const [name, value] of Object.entries({
    'Content-Type': 'application/problem+json',
    'Cache-Control': 'no-store',
    Connection: 'close',
    ...headers,
  }))
    res.setHeader(name, value);
  res.end(JSON.stringify({ type: `https://forge-embed.dev/problems/${slug}`, title, status, detail }));
}

/**
 * Adapts a Fetch-style handler (such as `createTokenHandler`'s) to Node's `http` server and to
 * Express/Connect middleware: `app.get('/forge-token', toNodeHandler(handler))`. The handler gets
 * `{req, res}` as its second argument. Methods outside `options.methods` get a 405 and bodies
 * over `options.maxBodyBytes` a 413, both without reading the body. A handler that throws goes
 * to Express's `next(error)`; without `next` (plain `node:http`) it becomes a 500 whose body says
 * nothing of the cause, and the cause is written to `console.error`.
 */
export function toNodeHandler<Req extends NodeRequest = NodeRequest, Res extends NodeResponse = NodeResponse>(
  handler: (request: Request, context: NodeContext<Req, Res>) => Promise<Response>,
  { methods = ['GET'], maxBodyBytes = 64 * 1024 }: NodeHandlerOptions = {},
): NodeHandler<Req, Res> {
  const allowed = methods.map((m) => m.toUpperCase());
  return (req, res, next) => {
    if (!allowed.includes((req.method ?? 'GET').toUpperCase())) {
      refuse(
        res,
        405,
        ['method-not-allowed', 'Method not allowed'],
        `This endpoint answers ${allowed.join(', ')} only.`,
        {
          Allow: allowed.join(', '),
        },
      );
      return;
    }
    toRequest(req, maxBodyBytes)
      .then((request) => handler(request, { req, res }))
      .then((response) => send(response, res))
      .catch((error: unknown) => {
        if (error instanceof BodyTooLarge) {
          refuse(
            res,
            413,
            ['content-too-large', 'Content too large'],
            `The request body is over ${maxBodyBytes} bytes.`,
          );
          return;
        }
        if (next) return next(error);
        console.error('forge-embed/host: the handler failed', error);
        if (res.headersSent) return res.destroy();
        refuse(
          res,
          500,
          ['internal', 'Internal error'],
          'The token endpoint failed. Try again; if it keeps failing, see the server log.',
        );
      });
  };
}
