/**
 * The line per request is made as text (server/plugins/request-log.ts) rather than through pino
 * (issue 28's cost budget): it must be the line pino wrote for the same request, byte for byte,
 * whatever the URL holds.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type RunningService, startService } from '../../server/app.js';
import { serviceLogger } from '../../server/log.js';
import { API, rawRequest } from './support.js';

const lines: string[] = [];
let service: RunningService;
before(async () => {
  service = await startService({
    port: 0,
    db: ':memory:',
    scheduler: false,
    metrics: false,
    logStream: { write: (line) => void lines.push(line) },
  });
});
after(() => service.close());

/** What pino writes for the request line: Fastify's child of the service's logger (reqId), the request log's fields. */
function pinoLine(entry: { reqId: string; ms: number; caller?: string }, rawUrl: string, status: number): string {
  const written: string[] = [];
  const logger = serviceLogger({ write: (line) => void written.push(line) }, 'info', { nested: false });
  logger.child({ reqId: entry.reqId }).info(
    {
      req: { method: 'GET', url: rawUrl, ip: '127.0.0.1' },
      res: { statusCode: status },
      ms: entry.ms,
      ...(entry.caller ? { caller: entry.caller } : {}),
    },
    'request',
  );
  return written[0]!;
}

/** The time differs between the two; everything else must not. */
const withoutTime = (line: string) => line.replace(/,"time":"[^"]*"/, ',"time":"T"');

test('the request line is the one pino writes, for every kind of URL and caller', async () => {
  const urls = [
    ['/healthz', undefined, 200],
    [`${API}/workflow`, service.apiKey, 200],
    [`${API}/workflow?integration=a%22b%5Cc`, service.apiKey, 200],
    [`${API}/workflow?integration=%C3%A9%F0%9F%99%82`, service.apiKey, 200],
    [`${API}/workflow?integration="quoted"\\back`, service.apiKey, 200],
    [`${API}/hooks/secret-webhook-token?x=1`, undefined, 404],
    [`${API}/oauth/callback?state=the-state&code=the-code`, undefined, 400],
    [`${API}/user`, 'not-a-credential', 401],
    ['/no/such/path', undefined, 404],
  ] as const;
  for (const [url, credential] of urls) {
    lines.length = 0;
    const answer = await rawRequest(service.url, 'GET', url, {
      headers: credential ? { Authorization: `Bearer ${credential}` } : {},
    });
    await new Promise((resolve) => setImmediate(resolve));
    const line = lines.find((l) => JSON.parse(l).msg === 'request');
    assert.ok(line, `a request line for ${url}`);
    const entry = JSON.parse(line);
    assert.equal(entry.res.statusCode, answer.status, url);
    assert.equal(withoutTime(line), withoutTime(pinoLine(entry, url, answer.status)), url);
    assert.match(entry.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  }
});
