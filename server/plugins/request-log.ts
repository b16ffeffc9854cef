import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';

/** Where request log lines go: anything with `write`; one with `flush` (pino's destination) is flushed on close. */
export interface LogStream {
  write(line: string): void;
  flush?(callback: (error?: Error | null) => void): void;
}

/** Fastify's logger for the request log: credentials travel in headers and a webhook's token in its path; neither is logged. */
export function requestLogger(stream: LogStream | undefined): FastifyServerOptions['logger'] {
  return stream
    ? {
        stream,
        serializers: {
          req: (req) => ({ method: req.method, url: redactUrl(req.url), remoteAddress: req.ip }),
          res: (res) => ({ statusCode: res.statusCode }),
        },
      }
    : false;
}

/**
 * One line per request, written when it is answered, with its id and who called (Fastify's own
 * two lines per request are turned off). The lines still buffered go out when the service closes.
 */
async function requestLog(app: FastifyInstance, { stream }: { stream: LogStream }): Promise<void> {
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      {
        req: request,
        res: reply,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        ...(request.principal ? { caller: request.principal.kind } : {}),
      },
      'request',
    );
    done();
  });
  app.addHook('onClose', async () => {
    // Called back once the buffer is written. An error then (a pipe cannot be fsynced, a reader
    // has gone) is not one the shutdown can do anything about, so it does not stop it.
    if (stream.flush) await new Promise<void>((resolve) => stream.flush!(() => resolve()));
  });
}

/**
 * A webhook's token is its credential; the OAuth state and code are one-time secrets. Most URLs
 * hold neither, and pass without a regular expression run on them (issue 29).
 */
function redactUrl(url: string): string {
  const hook = url.includes('/hooks/');
  const query = url.includes('state=') || url.includes('code=');
  if (!hook && !query) return url;
  const redacted = hook ? url.replace(/(\/hooks\/)[^/?]+/, '$1[redacted]') : url;
  return query ? redacted.replace(/([?&](state|code)=)[^&]*/g, '$1[redacted]') : redacted;
}

export default fp(requestLog, { name: 'forge-request-log', fastify: '5.x', dependencies: ['forge-auth'] });
