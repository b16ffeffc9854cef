import { hostname } from 'node:os';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import type { Logger } from 'pino';

/** Where request log lines go: anything with `write`; one with `flush` (pino's destination) is flushed on close. */
export interface LogStream {
  write(line: string): void;
  flush?(callback: (error?: Error | null) => void): void;
  /** The level of the line about to be written, on a stream that asks pino for it (server/log.ts). */
  lastLevel?: number;
  /**
   * A stream that gathers its lines (server/log.ts) can take an info line as a record and the
   * function that makes its text, called when the gathered lines are written, in order with
   * the lines written around it: the text of a turn's request lines is made in one go then.
   */
  writeLater?<T>(record: T, line: (record: T) => string): void;
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

let timeMs = Number.NaN;
let timeField = '';

/**
 * pino's ISO time field (`,"time":"…"`, its `stdTimeFunctions.isoTime`), made once per
 * millisecond: formatting a Date was the largest part of a log line (issue 28's 5% budget), and
 * a busy service writes several lines in the same millisecond.
 */
export function isoTimeField(now = Date.now()): string {
  if (now !== timeMs) {
    timeMs = now;
    timeField = `,"time":"${new Date(now).toISOString()}"`;
  }
  return timeField;
}

/** pino's level number for info, which it sets as `lastLevel` on a stream before each write. */
const INFO = 30;

/**
 * One line per request, written when it is answered, with its id and who called (Fastify's own
 * two lines per request are turned off). The lines still buffered go out when the service closes.
 * `observe` runs first in the same onResponse hook (the request metrics): a hook fewer per request.
 *
 * The line is what the request's pino logger (Fastify's child of the service's, whose only
 * binding is `reqId`) writes for `info({req, res, ms, caller}, 'request')` with the serializers
 * above, field for field and byte for byte (test/server/request-line.test.ts), but made here as
 * text: through pino it cost about five times as much (the serializers, a redaction pass that
 * finds nothing in fields made from the method, the cut URL, the address and the status, and a
 * generic walk of the object), which alone was most of issue 28's 5% budget. Every other line
 * still goes through pino.
 */
async function requestLog(
  app: FastifyInstance,
  { stream, observe }: { stream: LogStream; observe?: (request: FastifyRequest, reply: FastifyReply) => void },
): Promise<void> {
  // pino's base fields and level, as the service's logger writes them (pid, hostname).
  const prefix = `{"level":"info"`;
  const base = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;
  // A stream that asks for pino's metadata (the service's stdout, server/log.ts) is told the level.
  const metadata = Symbol.for('pino.metadata') in stream;
  // The service's level is set at start (--log-level): at warn and above there is no request line.
  const enabled = (app.log as Logger).isLevelEnabled('info');
  // The line's start (level, time, pid, hostname), made once per millisecond like the time.
  let headTime = Number.NaN;
  let head = '';
  const line = (answered: Answered) => {
    if (answered.time !== headTime) {
      headTime = answered.time;
      head = `${prefix}${isoTimeField(answered.time)}${base}`;
    }
    return `${head}${requestFields(answered)},"msg":"request"}\n`;
  };
  app.addHook('onResponse', (request, reply, done) => {
    // The request metrics' observation (server/app.ts), in this hook rather than one of its own.
    if (observe) observe(request, reply);
    if (enabled) {
      // What the line needs, read now; its text is made when the stream writes (or now).
      const answered: Answered = {
        time: Date.now(),
        id: request.id,
        method: request.method,
        url: request.url,
        address: request.ip as string | undefined,
        status: reply.statusCode,
        ms: reply.elapsedTime,
        caller: request.principal?.kind,
      };
      if (stream.writeLater) stream.writeLater(answered, line);
      else {
        if (metadata) stream.lastLevel = INFO;
        stream.write(line(answered));
      }
    }
    done();
  });
  app.addHook('onClose', async () => {
    // Called back once the buffer is written. An error then (a pipe cannot be fsynced, a reader
    // has gone) is not one the shutdown can do anything about, so it does not stop it.
    if (stream.flush) await new Promise<void>((resolve) => stream.flush!(() => resolve()));
  });
}

/** A request as its line tells it, read when it was answered. */
interface Answered {
  /** When it was answered (ms since the epoch): the line's time. */
  time: number;
  id: string;
  method: string;
  url: string;
  address: string | undefined;
  status: number;
  ms: number;
  caller: string | undefined;
}

/**
 * The line's own fields, each as pino writes it: strings and objects as JSON.stringify does.
 * `req` is JSON.stringify's text for `{method, url, remoteAddress}` (which leaves out an
 * undefined address, as on a socket already gone), made from its strings: a third of the time.
 * The method (a token the HTTP parser took from its table), the socket's address and the
 * caller's kind hold nothing JSON escapes, and the id and the URL rarely do: these are written
 * between quotes as they are, the id and the URL after a check that falls back to JSON.stringify
 * (0.45 → 0.15–0.3 µs a line in-process, issue 28's 5% budget).
 */
function requestFields({ id, method, url, address, status, ms, caller }: Answered): string {
  const req = `{"method":"${method}","url":${quoted(redactUrl(url))}${address === undefined ? '' : `,"remoteAddress":"${address}"`}}`;
  const callerField = caller === undefined ? '' : `,"caller":"${caller}"`;
  return `,"reqId":${quoted(id)},"req":${req},"res":{"statusCode":${status}},"ms":${Math.round(ms * 10) / 10}${callerField}`;
}

/** Printable ASCII but `"` and `\`: what JSON.stringify writes as it is. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** `text` as JSON.stringify writes it, without a call to it where nothing needs escaping. */
const quoted = (text: string) => (PLAIN.test(text) ? `"${text}"` : JSON.stringify(text));

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
