/**
 * The line per request is made as text (server/plugins/request-log.ts) rather than through pino
 * (issue 28's cost budget): it must be the line pino wrote for the same request, byte for byte,
 * whatever the URL holds.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type RunningService, startService } from '../../server/app.js';
import { gatheringStream, serviceLogger } from '../../server/log.js';
import { API, rawRequest } from './support.js';

const lines: string[] = [];
let service: RunningService;
/** The same service with the stdout log's gathering stream, whose request lines are made when written. */
const gatheredWrites: string[] = [];
let gatheringService: RunningService;
before(async () => {
  service = await startService({
    port: 0,
    db: ':memory:',
    scheduler: false,
    metrics: false,
    logStream: { write: (line) => void lines.push(line) },
  });
  gatheringService = await startService({
    port: 0,
    db: ':memory:',
    scheduler: false,
    metrics: false,
    logStream: gatheringStream({ write: (text) => void gatheredWrites.push(text) }),
  });
});
after(() => Promise.all([service.close(), gatheringService.close()]));

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

const URLS = (apiKey: string | undefined) =>
  [
    ['/healthz', undefined],
    [`${API}/workflow`, apiKey],
    [`${API}/workflow?integration=a%22b%5Cc`, apiKey],
    [`${API}/workflow?integration=%C3%A9%F0%9F%99%82`, apiKey],
    [`${API}/workflow?integration="quoted"\\back`, apiKey],
    [`${API}/hooks/secret-webhook-token?x=1`, undefined],
    [`${API}/oauth/callback?state=the-state&code=the-code`, undefined],
    [`${API}/user`, 'not-a-credential'],
    ['/no/such/path', undefined],
  ] as const;

/** Each URL requested in turn; its request line, once `written` has it, must be pino's. */
async function everyLineIsPinos(on: RunningService, written: () => string[], clear: () => void): Promise<void> {
  for (const [url, credential] of URLS(on.apiKey)) {
    clear();
    const answer = await rawRequest(on.url, 'GET', url, {
      headers: credential ? { Authorization: `Bearer ${credential}` } : {},
    });
    // The gathering stream writes at the end of the turn, or a millisecond after its last write.
    let line: string | undefined;
    for (let waited = 0; !line && waited < 100; waited++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      line = written().find((l) => JSON.parse(l).msg === 'request');
    }
    assert.ok(line, `a request line for ${url}`);
    const entry = JSON.parse(line);
    assert.equal(entry.res.statusCode, answer.status, url);
    assert.equal(withoutTime(line), withoutTime(pinoLine(entry, url, answer.status)), url);
    assert.match(entry.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  }
}

test('the request line is the one pino writes, for every kind of URL and caller', async () => {
  await everyLineIsPinos(
    service,
    () => lines,
    () => {
      lines.length = 0;
    },
  );
});

test('through the gathering stream of the stdout log, whose lines are made when written, the line is the same', async () => {
  await everyLineIsPinos(
    gatheringService,
    () => gatheredWrites.join('').split(/(?<=\n)/),
    () => {
      gatheredWrites.length = 0;
    },
  );
});

test('the gathering stream writes lines in the order logged, and a warning at once with those before it', () => {
  const writes: string[] = [];
  const stream = gatheringStream({ write: (text) => void writes.push(text) });
  stream.writeLater!('first', (record) => `${record}\n`);
  stream.lastLevel = 30;
  stream.write('second\n');
  stream.writeLater!('third', (record) => `${record}\n`);
  assert.deepEqual(writes, [], 'info lines wait for the end of the turn');
  stream.lastLevel = 40;
  stream.write('a warning\n');
  assert.deepEqual(writes, ['first\nsecond\nthird\na warning\n']);
});
