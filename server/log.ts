import pino, { type Logger } from 'pino';
import { isoTimeField, type LogStream, requestLogger } from './plugins/request-log.js';

export type { Logger };

/** Keys whose value is a secret wherever a logged object holds them. */
const SECRET_KEYS = [
  'apiKey',
  'token',
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'secret',
  'secretAccessKey',
  'accessToken',
  'refreshToken',
  'password',
];
/**
 * The same one level down. Wildcard paths make pino look into every key of every line: about
 * 10 µs of CPU a line here (2.8 µs a line without them, 3.3 with the plain keys alone), which
 * the line per request cannot afford (issue 28's 5% budget), so its logger goes without them.
 */
const NESTED_SECRET_KEYS = SECRET_KEYS.filter((key) => !key.includes('.')).map((key) => `*.${key}`);

/** Writes nothing: the default where no log is given (tests, tools). */
export const silentLogger: Logger = pino({ enabled: false });

/**
 * The service's one log: every line one JSON object with `level` as a word ("info", "error"),
 * an ISO time, the process (`pid`, `hostname`, so the lines of several instances can be told
 * apart), and `msg`. Requests log through Fastify's child of it (`reqId`); a run logs with its
 * `executionId`; the scheduler and deliveries with `component`. Errors go in `err`, their stack
 * inside the one line. Secrets never reach it: credentials travel in headers, which are not
 * logged, a webhook's token and OAuth's state and code are cut out of URLs (request-log.ts), and
 * the keys above are censored should any code log an object that holds one: at the top and one
 * level down, or only at the top with `nested: false` (the requests' logger, whose lines the
 * request log's serializers make and which holds no nested secret).
 */
export function serviceLogger(
  stream: LogStream | undefined,
  level = 'info',
  { nested = true }: { nested?: boolean } = {},
): Logger {
  if (!stream) return silentLogger;
  const { serializers } = requestLogger(stream) as { serializers: pino.LoggerOptions['serializers'] };
  return pino(
    {
      level,
      serializers: { ...serializers, err: pino.stdSerializers.err },
      formatters: { level: (label) => ({ level: label }) },
      // pino's isoTime, made once per millisecond.
      timestamp: isoTimeField,
      redact: { paths: nested ? [...SECRET_KEYS, ...NESTED_SECRET_KEYS] : SECRET_KEYS, censor: '[redacted]' },
    },
    stream as pino.DestinationStream,
  );
}

/** pino's level numbers: warn and above are written at once. */
const WARN = 40;

/**
 * The service's stdout log stream: a pino destination (SonicBoom) written synchronously, so a
 * line handed to it is never left in a buffer when the process dies, with one exception kept
 * small. Warnings, errors and fatal lines are written before the call that logs them returns
 * (with whatever was logged before them). Info lines, one per request, are gathered and
 * written together at the end of the event-loop turn that logged them: one write for the
 * turn rather than one per line. A kill -9 can lose only the info lines of the turn it stops.
 * Measured (issue 28): a write per line cost about 5 µs of system time per request, against
 * about 110 µs for a whole `GET /workflow` on this machine.
 */
export function stdoutLog(): LogStream {
  // Each write goes out before it returns (SonicBoom, sync); this gathers what one turn logs
  // into one write. (SonicBoom's own minLength buffer is no use here: its flushSync also tries
  // an fsync, which a pipe refuses with an error, every time.)
  const destination = pino.destination({ dest: 1, sync: true });
  let gathered = '';
  let pending = false;
  const flush = () => {
    pending = false;
    if (!gathered) return;
    const out = gathered;
    gathered = '';
    destination.write(out);
  };
  // process.exit() skips the turn's end: what is gathered goes out as the process exits.
  process.on('exit', flush);
  const stream: LogStream & { lastLevel: number; [metadata: symbol]: boolean } = {
    // pino sets `lastLevel` before each write on a stream that asks for it (pino's "metadata").
    [Symbol.for('pino.metadata')]: true,
    lastLevel: 0,
    write(line: string) {
      gathered += line;
      if (stream.lastLevel >= WARN) flush();
      else if (!pending) {
        pending = true;
        setImmediate(flush);
      }
    },
    flush(callback) {
      flush();
      callback(null);
    },
  };
  return stream;
}
