/**
 * The line per request is made as text (server/plugins/request-log.ts) rather than through pino
 * (issue 28's cost budget): it must be the line pino wrote for the same request, byte for byte,
 * whatever the URL holds.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
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

test("the stdout log's writer writes a text whole into a pipe that is full, continuing short writes", async () => {
  // A child whose stdout is a non-blocking pipe (touching process.stdout makes it one), writing
  // 4 MB in one call while this side does not read for a while: short writes, then EAGAIN.
  const line = `{"msg":"é ${'x'.repeat(200)}"}\n`;
  const count = 16_000;
  const log = pathToFileURL(new URL('../../server/log.ts', import.meta.url).pathname).href;
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `import { descriptorWriter } from ${JSON.stringify(log)};
       process.stdout;
       descriptorWriter(1).write(${JSON.stringify(line)}.repeat(${count}));
       descriptorWriter(1).write('done\\n');`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const chunks: Buffer[] = [];
  child.stdout.pause();
  await new Promise((resolve) => setTimeout(resolve, 500));
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk)).resume();
  const code = await new Promise((resolve) => child.once('close', resolve));
  assert.equal(code, 0, stderr);
  assert.equal(Buffer.concat(chunks).toString(), `${line.repeat(count)}done\n`);
});
