import { writeSync } from 'node:fs';
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
 * Info lines wait at most this long: a busy service writes about once a millisecond, not once
 * per event-loop turn or per request (issue 28's 5% budget; docs/design-notes.md).
 */
const WRITE_INTERVAL_MS = 1;

/**
 * The service's stdout log stream, written synchronously, so a line handed to it is never left
 * in a buffer when the process dies, with one exception kept small. Warnings, errors and fatal
 * lines are written before the call that logs them returns (with whatever was logged before
 * them), and so are the gathered lines when the process exits (process.exit(), the fatal handler
 * of a crash, the end of the event loop). Info lines, one per request, are gathered and written
 * together a millisecond after the first of them: one write for all the lines of that
 * millisecond, and at most about a thousand writes a second however busy the service is. A
 * kill -9 can lose only the info lines of that last millisecond.
 */
export function stdoutLog(): LogStream {
  const stream = gatheringStream(descriptorWriter(1));
  // process.exit() skips the timer: what is gathered goes out as the process exits.
  process.on('exit', () => stream.flush(() => {}));
  return stream;
}

/** What a full non-blocking pipe is waited on with (Atomics.wait, as SonicBoom sleeps). */
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes text to a file descriptor before it returns, whole. pino's destination (SonicBoom) did
 * the same for the log until issue 28's fifth round: in its synchronous mode it measures each
 * text's bytes twice and, after the write, encodes the whole text again into a new Buffer only
 * to find that nothing is left; 2.1 µs a line against 1.4 this way (docs/design-notes.md).
 * As SonicBoom does, a full pipe (EAGAIN, when stdout is a non-blocking pipe) is waited on and
 * written again, and a short write is continued.
 */
export function descriptorWriter(fd: number): { write(text: string): void } {
  const writeRest = (bytes: Buffer) => {
    while (bytes.length > 0) {
      try {
        bytes = bytes.subarray(writeSync(fd, bytes));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
        Atomics.wait(pause, 0, 0, 10);
      }
    }
  };
  return {
    write(text) {
      let written: number;
      try {
        // The text as a string: Node encodes it in C++, with no Buffer made here.
        written = writeSync(fd, text);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
        written = 0;
      }
      // Short only when a pipe was full: the rest as bytes, from where it stopped (one check a write).
      if (written !== Buffer.byteLength(text)) writeRest(Buffer.from(text).subarray(written));
    },
  };
}

/**
 * The gathering of stdoutLog(), over any destination. Request lines come as records
 * (`writeLater`) and their text is made when they are written, all of a millisecond's in one
 * loop, in order with the lines logged between them. One timer, armed by the first line after
 * a write (`refresh()`: no timer made per write), writes them: the request log's hook did its
 * part in 1.6 µs a request, and the rest (a setImmediate per turn, a timer per millisecond,
 * SonicBoom's write) was most of the log's cost (issue 28; docs/design-notes.md).
 */
export function gatheringStream(destination: { write(text: string): unknown }): LogStream & {
  flush(callback: (error?: Error | null) => void): void;
} {
  let gathered = '';
  /** Records and their line functions, in pairs, logged since the last write. */
  let later: unknown[] = [];
  /** The timer is armed: lines wait for it. */
  let waiting = false;
  let timer: NodeJS.Timeout | undefined;
  /** The waiting records' lines, after what was gathered before them. */
  const makeLines = () => {
    const records = later;
    later = [];
    for (let i = 0; i < records.length; i += 2) gathered += (records[i + 1] as (record: unknown) => string)(records[i]);
  };
  const flush = () => {
    waiting = false;
    if (later.length > 0) makeLines();
    if (!gathered) return;
    const out = gathered;
    gathered = '';
    destination.write(out);
  };
  const writeSoon = () => {
    if (waiting) return;
    waiting = true;
    // Unref'd: a timer that only writes must not keep a process alive; 'exit' writes instead.
    if (timer) timer.refresh();
    else timer = setTimeout(flush, WRITE_INTERVAL_MS).unref();
  };
  const stream = {
    // pino sets `lastLevel` before each write on a stream that asks for it (pino's "metadata").
    [Symbol.for('pino.metadata')]: true,
    lastLevel: 0,
    write(line: string) {
      if (later.length > 0) makeLines();
      gathered += line;
      if (stream.lastLevel >= WARN) flush();
      else writeSoon();
    },
    writeLater<T>(record: T, line: (record: T) => string) {
      later.push(record, line);
      writeSoon();
    },
    flush(callback: (error?: Error | null) => void) {
      flush();
      callback(null);
    },
  };
  return stream;
}
