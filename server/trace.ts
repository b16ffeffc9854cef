import type { FastifyInstance } from 'fastify';

/**
 * What the service asks of tracing (issue 28). The one implementation is server/tracing.ts, on
 * OpenTelemetry, which main.ts loads with a dynamic import only when OTEL_EXPORTER_OTLP_ENDPOINT
 * is set. Otherwise the service holds `undefined` where a Tracing would be, checks it, and runs
 * no tracing code at all: this file has no import that runs.
 */
export interface Tracing {
  /**
   * Runs `work` inside a new span, a child of the span current where it is called (none: a new
   * trace), and ends the span when `work` settles. Spans `work` starts are its children. An
   * error `work` throws marks the span failed (its message, never a stack) and is rethrown.
   */
  inSpan<T>(name: string, options: SpanOptions, work: (span: SpanHandle) => Promise<T>): Promise<T>;
  /** Puts the current span in outbound headers as W3C `traceparent` (and `tracestate`). */
  inject(headers: { set(name: string, value: string): void }): void;
  /** A span for every request (its route's pattern, never its path, which may hold a token). */
  traceRequests(app: FastifyInstance): void;
  /** Sends the spans not sent yet; then no more are made. */
  shutdown(): Promise<void>;
}

export type SpanAttributes = Record<string, string | number | boolean>;

export interface SpanOptions {
  /** `client` for a call to another service; default internal. */
  kind?: 'client' | 'internal';
  attributes?: SpanAttributes;
  /** The W3C trace context (`traceparent`, `tracestate`) to continue; default the current span's. */
  parent?: Record<string, string>;
}

export interface SpanHandle {
  setAttributes(attributes: SpanAttributes): void;
  /** Marks the span failed without an exception (a run that ended in a failed block). */
  fail(message: string): void;
}

/**
 * `work` in a span when tracing is on; otherwise `work` alone, with a span that records nothing.
 * The one branch the service pays when tracing is off.
 */
export function traced<T>(
  tracing: Tracing | undefined,
  name: string,
  options: SpanOptions,
  work: (span: SpanHandle) => Promise<T>,
): Promise<T> {
  return tracing ? tracing.inSpan(name, options, work) : work(NO_SPAN);
}

const NO_SPAN: SpanHandle = { setAttributes() {}, fail() {} };
