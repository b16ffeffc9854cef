/**
 * Traces (issue 28, item 2): with OTEL_EXPORTER_OTLP_ENDPOINT set, `forge-service` exports
 * OpenTelemetry spans for the request, the run, its blocks and the HTTP block's call over
 * OTLP/HTTP, here to a receiver in this process, and the app the HTTP block calls gets the
 * call's `traceparent`; without the variable neither the OpenTelemetry SDK nor the service's tracing code is even loaded.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generateApiKey } from '../../server/auth.js';
import { testDatabase } from './backend.js';
import { PAYMENTS, writeTestCatalog } from './engine-support.js';
import { call, launch } from './process-support.js';

/** One span as OTLP/JSON carries it (the fields these tests read). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  status?: { code?: number; message?: string };
}

const SPAN_KIND = { internal: 1, server: 2, client: 3 };

/** A small HTTP server on loopback that records each request's headers and body. */
async function listen(answer: (path: string) => { status: number; body: string }) {
  const received: Array<{ path: string; headers: IncomingHttpHeaders; body: string }> = [];
  const server: Server = createServer(async (request, response) => {
    let body = '';
    for await (const chunk of request) body += chunk;
    received.push({ path: request.url ?? '', headers: request.headers, body });
    const { status, body: text } = answer(request.url ?? '');
    response.writeHead(status, { 'Content-Type': 'application/json' }).end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The spans of every export the receiver got: OTLP/JSON's resourceSpans → scopeSpans → spans. */
function spansOf(exports: Array<{ body: string }>): OtlpSpan[] {
  return exports.flatMap(({ body }) =>
    (JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> }).resourceSpans.flatMap(
      (resource) => resource.scopeSpans.flatMap((scope) => scope.spans),
    ),
  );
}

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value ? Object.values(value)[0] : undefined;
};

describe('traces', () => {
  let collector: Awaited<ReturnType<typeof listen>>;
  let app: Awaited<ReturnType<typeof listen>>;
  before(async () => {
    collector = await listen(() => ({ status: 200, body: '{}' }));
    // The app the PAYMENTS workflow's HTTP block posts to ({{env.SANDBOX_URL}}/slack/chat.postMessage).
    app = await listen(() => ({ status: 200, body: '{"ok":true}' }));
  });
  after(async () => {
    await collector.close();
    await app.close();
  });

  /** forge-service on a fresh database; one user with the PAYMENTS workflow installed, its webhook URL. */
  async function serviceWithWorkflow(env: Record<string, string>, nodeArgs: string[] = []) {
    const apiKey = generateApiKey();
    const { db } = await testDatabase(join(mkdtempSync(join(tmpdir(), 'forge-trace-')), 'trace.db'));
    const service = await launch(
      {
        FORGE_API_KEY: apiKey,
        FORGE_PORT: '0',
        DATABASE_URL: db,
        FORGE_CATALOG: writeTestCatalog(),
        FORGE_SANDBOX_URL: app.url,
        ...env,
      },
      [],
      nodeArgs,
    );
    const { userId } = (await call(service.url, 'POST', '/user', apiKey, { name: 'Ada', email: 'ada@example.com' }))
      .body;
    const { token } = (await call(service.url, 'GET', `/user/${userId}/token`, apiKey)).body;
    const credentialValue = 'crm-secret-value-1a2b3c4d';
    assert.equal((await call(service.url, 'POST', '/credentials/crm', token, { apiKey: credentialValue })).status, 200);
    const installed = await call(service.url, 'POST', `/workflow/${PAYMENTS}/install`, token, {});
    assert.equal(installed.status, 201, JSON.stringify(installed.body));
    const { webhookUrl } = (await call(service.url, 'GET', `/workflow/${installed.body.workflowId}`, apiKey)).body;
    return { service, webhookUrl: webhookUrl as string, credentialValue };
  }

  test('a webhook run is one trace: request, run, blocks, the HTTP call; the app gets its traceparent', async () => {
    const { service, webhookUrl, credentialValue } = await serviceWithWorkflow({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_SERVICE_NAME: 'forge-under-test',
    });
    try {
      // The caller's own trace, which the service continues.
      const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
      const callerSpan = '00f067aa0ba902b7';
      const answer = await fetch(webhookUrl, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Prefer: 'wait=30',
          traceparent: `00-${callerTrace}-${callerSpan}-01`,
        },
        body: JSON.stringify({ amount: 20, customer: { name: 'Ada' } }),
      });
      assert.equal(answer.status, 200);
      const { executionId } = (await answer.json()) as { executionId: string };
      // SIGTERM sends the spans not sent yet before the process exits.
      service.child.kill('SIGTERM');
      assert.equal(await service.exited, 0, service.stdout());

      const exports = collector.received.filter((r) => r.path === '/v1/traces');
      assert.ok(exports.length > 0, 'the collector received spans at /v1/traces');
      assert.ok(exports.every((r) => /json/.test(String(r.headers['content-type']))));
      const spans = spansOf(exports);
      const inTrace = spans.filter((s) => s.traceId === callerTrace);

      const request = inTrace.find((s) => s.name === 'POST /forge/2021-12/hooks/:token');
      assert.ok(request, `the webhook's request span: ${spans.map((s) => s.name).join(', ')}`);
      assert.equal(request.kind, SPAN_KIND.server);
      assert.equal(request.parentSpanId, callerSpan);
      assert.equal(attribute(request, 'http.response.status_code'), 200);

      const run = inTrace.find((s) => s.name === `run ${PAYMENTS}`);
      assert.ok(run, 'the run span');
      assert.equal(run.parentSpanId, request.spanId);
      assert.equal(attribute(run, 'forge.execution_id'), executionId);
      assert.equal(attribute(run, 'forge.trigger'), 'webhook');

      const children = inTrace.filter((s) => s.parentSpanId === run.spanId);
      // On PostgreSQL the queue (pg-boss, traced on its own) marks the job done inside the run's
      // transaction: a span of the run beside its blocks.
      const queueSpans = children.filter((s) => !s.name.startsWith('block ')).map((s) => s.name);
      assert.ok(
        queueSpans.every((name) => name === 'complete forge-runs'),
        `the run's other spans: ${queueSpans.join(', ')}`,
      );
      const blocks = children.filter((s) => s.name.startsWith('block '));
      assert.deepEqual(
        blocks.map((s) => s.name),
        ['block webhook', 'block variables', 'block condition', 'block transform', 'block http'],
      );
      const httpBlock = blocks.at(-1)!;
      const outbound = inTrace.find((s) => s.parentSpanId === httpBlock.spanId);
      assert.ok(outbound, 'the HTTP call span');
      assert.equal(outbound.kind, SPAN_KIND.client);
      assert.equal(outbound.name, `POST ${new URL(app.url).host}`);
      assert.equal(attribute(outbound, 'url.full'), `${app.url}/slack/chat.postMessage`);
      assert.equal(attribute(outbound, 'http.response.status_code'), 200);

      // The app saw the call's own span as its parent: its spans join the same trace.
      const posted = app.received.filter((r) => r.path === '/slack/chat.postMessage');
      assert.equal(posted.length, 1);
      assert.equal(posted[0]!.headers.traceparent, `00-${callerTrace}-${outbound.spanId}-01`);

      const resource = JSON.stringify(JSON.parse(exports[0]!.body).resourceSpans[0].resource);
      assert.match(resource, /"service\.name","value":\{"stringValue":"forge-under-test"\}/);
      // No secret reaches a span: the webhook's token, the credential, the API key.
      const everything = exports.map((r) => r.body).join('\n');
      assert.ok(!everything.includes(webhookUrl.split('/').pop()!), 'the webhook token is in a span');
      assert.ok(!everything.includes(credentialValue), 'the credential is in a span');
    } finally {
      service.child.kill('SIGKILL');
    }
  });

  test('without OTEL_EXPORTER_OTLP_ENDPOINT no tracing code loads and no traceparent is sent', async () => {
    // Node's module hooks, before anything else loads: every OpenTelemetry SDK module, and the
    // service's tracing.js, that the process resolves is written to stderr. Not the API alone,
    // which prom-client loads for its exemplars: without an SDK it records nothing.
    const watch = `data:text/javascript,${encodeURIComponent(
      `import { registerHooks } from 'node:module';
       registerHooks({ resolve(specifier, context, next) {
         if (/@opentelemetry\\/(?!api$)|tracing\\.js/.test(specifier)) process.stderr.write('loaded ' + specifier + '\\n');
         return next(specifier, context);
       } });`,
    )}`;
    const before = app.received.length;
    const { service, webhookUrl } = await serviceWithWorkflow(
      { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' },
      ['--import', watch],
    );
    try {
      const answer = await fetch(webhookUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Prefer: 'wait=30' },
        body: JSON.stringify({ amount: 20, customer: { name: 'Ada' } }),
      });
      assert.equal(answer.status, 200);
      const posted = app.received.slice(before).filter((r) => r.path === '/slack/chat.postMessage');
      assert.equal(posted.length, 1);
      assert.equal(posted[0]!.headers.traceparent, undefined);
      service.child.kill('SIGTERM');
      await service.exited;
      assert.equal(service.stderr(), '', 'no OpenTelemetry SDK module was resolved');
    } finally {
      service.child.kill('SIGKILL');
    }
  });
});
