import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { FastifyRequest } from 'fastify';
import type { SpanHandle, SpanOptions, Tracing } from './trace.js';

/**
 * Tracing on OpenTelemetry (issue 28): spans for requests, runs, blocks and outbound HTTP calls,
 * exported over OTLP/HTTP (JSON) to OTEL_EXPORTER_OTLP_ENDPOINT (`<endpoint>/v1/traces`, or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given), batched. The service's name is `forge-service`
 * unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise. main.ts imports this file
 * only when the endpoint is set: without it, none of this loads.
 */
export function startTracing(): Tracing {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  // W3C Trace Context: a caller's `traceparent` continues its trace, and the HTTP block sends one.
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'forge-service' }).merge(
      detectResources({ detectors: [envDetector] }),
    ),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter(),
        // The SDK's own variable for the batch's delay (default 5 s), which this SDK leaves to its user.
        scheduledDelayMillis: Number(process.env.OTEL_BSP_SCHEDULE_DELAY) || undefined,
      }),
    ],
  });
  trace.setGlobalTracerProvider(provider);
  const tracer = provider.getTracer('forge-service');
  const requestSpans = new WeakMap<FastifyRequest, { span: Span; context: Context }>();

  return {
    inSpan(name, { kind, attributes, parent }: SpanOptions, work) {
      // A run taken from the queue continues the trace of the request that added its job.
      const within = parent
        ? propagation.extract(context.active(), parent, {
            get: (carrier, key) => carrier[key],
            keys: (carrier) => Object.keys(carrier),
          })
        : context.active();
      return tracer.startActiveSpan(
        name,
        { kind: kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL, attributes },
        within,
        async (span) => {
          const handle: SpanHandle = {
            setAttributes: (more) => span.setAttributes(more),
            fail: (message) => span.setStatus({ code: SpanStatusCode.ERROR, message }),
          };
          try {
            return await work(handle);
          } catch (error) {
            // The message only: a stack says nothing to a trace viewer and may be long.
            span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message ?? String(error) });
            throw error;
          } finally {
            span.end();
          }
        },
      );
    },

    inject(headers) {
      propagation.inject(context.active(), headers, { set: (carrier, key, value) => carrier.set(key, value) });
    },

    traceRequests(app) {
      app.addHook('onRequest', (request, _reply, done) => {
        const parent = propagation.extract(ROOT_CONTEXT, request.headers);
        // The route's pattern: a path may hold a webhook's token, which must not reach a trace.
        const route = request.routeOptions.url ?? 'unmatched';
        const span = tracer.startSpan(
          `${request.method} ${route}`,
          {
            kind: SpanKind.SERVER,
            attributes: { 'http.request.method': request.method, 'http.route': route, 'forge.request_id': request.id },
          },
          parent,
        );
        const active = trace.setSpan(parent, span);
        requestSpans.set(request, { span, context: active });
        context.with(active, done);
      });
      // The handler runs after the body is read, whose events come outside the request's context:
      // the span is made current again for it, so a run a webhook starts is the request's child.
      app.addHook('preHandler', (request, _reply, done) => {
        const entry = requestSpans.get(request);
        if (entry) context.with(entry.context, done);
        else done();
      });
      app.addHook('onResponse', (request, reply, done) => {
        const entry = requestSpans.get(request);
        if (entry) {
          entry.span.setAttribute('http.response.status_code', reply.statusCode);
          if (reply.statusCode >= 500) entry.span.setStatus({ code: SpanStatusCode.ERROR });
          entry.span.end();
        }
        done();
      });
      app.addHook('onRequestAbort', (request, done) => {
        requestSpans.get(request)?.span.setStatus({ code: SpanStatusCode.ERROR, message: 'the client went away' });
        requestSpans.get(request)?.span.end();
        done();
      });
    },

    async shutdown() {
      await provider.shutdown();
      contextManager.disable();
    },
  };
}
