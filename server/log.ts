import pino, { type Logger } from 'pino';
import { type LogStream, requestLogger } from './plugins/request-log.js';

export type { Logger };

/** Writes nothing: the default where no log is given (tests, tools). */
export const silentLogger: Logger = pino({ enabled: false });

/**
 * The service's one log: every line one JSON object with `level` as a word ("info", "error"),
 * an ISO time, the process (`pid`, `hostname`, so the lines of several instances can be told
 * apart), and `msg`. Requests log through Fastify's child of it (`reqId`); a run logs with its
 * `executionId`; the scheduler and deliveries with `component`. Errors go in `err`, their stack
 * inside the one line. Secrets never reach it: credentials travel in headers, which are not
 * logged, a webhook's token and OAuth's state and code are cut out of URLs (request-log.ts), and
 * the paths below are censored should any code log an object that holds one.
 */
export function serviceLogger(stream: LogStream | undefined, level = 'info'): Logger {
  if (!stream) return silentLogger;
  const { serializers } = requestLogger(stream) as { serializers: pino.LoggerOptions['serializers'] };
  return pino(
    {
      level,
      serializers: { ...serializers, err: pino.stdSerializers.err },
      formatters: { level: (label) => ({ level: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
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
          '*.apiKey',
          '*.token',
          '*.secret',
          '*.secretAccessKey',
          '*.accessToken',
          '*.refreshToken',
          '*.password',
        ],
        censor: '[redacted]',
      },
    },
    stream as pino.DestinationStream,
  );
}
