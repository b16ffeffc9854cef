import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Catalog } from '../server/catalog/catalog.js';
import { DEMO_CATALOG } from '../server/paths.js';
import { SecretBox } from '../server/secrets.js';
import { Store } from '../server/store/store.js';
import { API_PREFIX, newApiKey, spawnService } from './service.js';
import { median, percentile, round1 } from './stats.js';
import { missed, ms, type Row, table, under } from './table.js';
import { THROUGHPUT_CONNECTIONS } from './throughput.js';

/**
 * The options read of issue 26: `GET /workflow/:id/options` for a demo workflow's Slack channel,
 * with a user token, at THROUGHPUT_CONNECTIONS connections, against an app that answers at once
 * (a bare HTTP server in a process of its own standing in for Slack's conversations.list), so the time
 * is the service's own: the token, the workflow, the credential opened, the app called and its
 * answer mapped. Each read has a cursor of its own, so none is answered from the service's
 * 30-second page cache.
 */
export const OPTIONS_READS = 4_000;
export const OPTIONS_P95_BUDGET_MS = 20;
/** Unmeasured reads first, so the service's code is compiled hot before it is timed. */
const WARM_UP_READS = 500;

/** The app: one page of 20 channels, as Slack answers it, to every request; prints its address. */
const APP_SCRIPT = `
import { createServer } from 'node:http';
const page = JSON.stringify({
  ok: true,
  channels: Array.from({ length: 20 }, (_, i) => ({ id: 'C' + String(i).padStart(9, '0'), name: 'channel-' + i })),
  response_metadata: { next_cursor: 'bmV4dA==' },
});
const server = createServer((request, response) => {
  response.writeHead(200, { 'Content-Type': 'application/json' });
  response.end(page);
});
server.listen(0, '127.0.0.1', () => console.log('http://127.0.0.1:' + server.address().port));
`;

export interface OptionsResult {
  p95Ms: number;
  p50Ms: number;
  rps: number;
  /** The service's CPU time per read, where /proc tells it: far steadier than latency on a shared machine. */
  cpuUsPerRead?: number | undefined;
}

/**
 * What an options read needs besides the service (bench/profile.ts uses it too): the app in a
 * process of its own, a user in the database at `dbPath` with it connected, and the read's path
 * (without a cursor). The service is to be started with `FORGE_SANDBOX_URL` set to `appUrl`.
 */
export async function optionsSetup(dbPath: string) {
  const parent = new Catalog(DEMO_CATALOG)
    .list()
    .find((w) => w.blocks.some((b) => b.parameters.variables?.some((v) => v.source)))!;
  const block = parent.blocks.find((b) => b.parameters.variables?.some((v) => v.source))!;
  const variable = block.parameters.variables!.find((v) => v.source)!;
  // Its own process, as an app is: in the bench's, it would wait on autocannon's event loop.
  const app = spawn(process.execPath, ['--input-type=module', '-e', APP_SCRIPT], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const appUrl = await new Promise<string>((resolve, reject) => {
    app.once('error', reject);
    app.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
  });
  const userId = await seedUser(dbPath, variable.source!.integration);
  const path = `${API_PREFIX}/workflow/${parent.workflowId}/options?blockId=${block.id}&variable=${variable.name}`;
  return { app, appUrl, userId, path };
}

export async function benchOptions(workDir: string, apiKey: string, main?: string): Promise<OptionsResult> {
  const dbPath = join(workDir, 'options.db');
  const { app, appUrl, userId, path } = await optionsSetup(dbPath);
  const service = await spawnService({ db: dbPath, apiKey, main, env: { FORGE_SANDBOX_URL: appUrl } });
  try {
    const { token } = await service.hostApi<{ token: string }>('GET', `/user/${userId}/token`);
    let cursor = 0;
    const read = (amount: number) =>
      timedReads({
        url: service.loopbackUrl,
        connections: THROUGHPUT_CONNECTIONS,
        amount,
        requests: [
          {
            setupRequest: (request) => ({
              ...request,
              path: `${path}&cursor=bench-${cursor++}`,
              headers: { Authorization: `Bearer ${token}` },
            }),
          },
        ],
      });
    await read(WARM_UP_READS);
    const cpuBefore = service.cpuMs();
    const result = await read(OPTIONS_READS);
    const cpuAfter = service.cpuMs();
    const cpuUsPerRead =
      cpuBefore === undefined || cpuAfter === undefined
        ? undefined
        : round1(((cpuAfter - cpuBefore) * 1000) / OPTIONS_READS);
    return { ...result, cpuUsPerRead };
  } finally {
    await service.stop();
    app.kill();
  }
}

/** A user with the app connected (an OAuth token that does not expire, so no refresh is timed). */
async function seedUser(dbPath: string, integration: string): Promise<string> {
  const store = await Store.open(dbPath);
  const secrets = SecretBox.open(dbPath);
  try {
    const userId = await store.users.create('Options bench user', 'options-bench@example.com');
    await store.credentials.save(userId, integration, secrets.seal({ kind: 'oauth2', accessToken: 'bench-token' }));
    return userId;
  } finally {
    await store.close();
  }
}

/** The reads' latencies as autocannon saw each answer; any answer but a 200 stops the bench. */
async function timedReads(options: autocannon.Options): Promise<OptionsResult> {
  const latencies: number[] = [];
  const instance = autocannon(options) as Promise<autocannon.Result> & {
    on(event: 'response', listener: (client: unknown, status: number, bytes: number, ms: number) => void): void;
  };
  instance.on('response', (_client, _status, _bytes, latency) => {
    latencies.push(latency);
  });
  const result = await instance;
  if (result.non2xx + result.errors + result.timeouts > 0 || latencies.length === 0) {
    throw new Error(
      `GET /workflow/:id/options failed: ${JSON.stringify(result.statusCodeStats)}, ${result.errors} errors`,
    );
  }
  return {
    p95Ms: round1(percentile(latencies, 95)),
    p50Ms: round1(percentile(latencies, 50)),
    rps: Math.round(result.requests.average),
  };
}

export const optionsRow = (result: OptionsResult): Row =>
  under(
    'optionsReadP95Ms',
    result.p95Ms,
    OPTIONS_P95_BUDGET_MS,
    ms,
    `GET /workflow/:id/options, an app that answers at once, ${THROUGHPUT_CONNECTIONS} connections, ${OPTIONS_READS.toLocaleString('en')} reads past the page cache; p50 ${ms(result.p50Ms)}, ${result.rps.toLocaleString('en')}/s${result.cpuUsPerRead === undefined ? '' : `, ${result.cpuUsPerRead} µs service CPU/read`}`,
  );

/**
 * `npm run build`, then `node --import tsx bench/options.ts`: this row alone, as `npm run bench`
 * measures it. With `--baseline <main.js of another build> [--rounds 3]`: that build and this one
 * in turns, round after round (which goes first alternating), each turn's figures and the medians,
 * so that both see the same machine.
 */
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const baselineAt = args.indexOf('--baseline');
  const baseline = baselineAt === -1 ? undefined : resolve(args[baselineAt + 1]!);
  const roundsAt = args.indexOf('--rounds');
  const rounds = roundsAt === -1 ? 3 : Number(args[roundsAt + 1]);
  const workDir = mkdtempSync(join(tmpdir(), 'forge-bench-options-'));
  try {
    if (!baseline) {
      const rows = [optionsRow(await benchOptions(workDir, newApiKey()))];
      console.log(table(rows));
      if (missed(rows).length > 0) process.exitCode = 1;
    } else {
      const builds = [
        { name: baseline, main: baseline, results: [] as OptionsResult[] },
        { name: 'this build', main: undefined, results: [] as OptionsResult[] },
      ];
      for (let round = 0; round < rounds; round++) {
        for (let turn = 0; turn < builds.length; turn++) {
          const build = builds[(round + turn) % builds.length]!;
          const result = await benchOptions(mkdtempSync(join(workDir, 'turn-')), newApiKey(), build.main);
          build.results.push(result);
          console.log(`round ${round + 1}, ${build.name}: ${figures(result)}, load ${loadavg()[0]!.toFixed(1)}`);
        }
      }
      for (const { name, results } of builds) {
        const of = (pick: (r: OptionsResult) => number | undefined) =>
          median(results.map(pick).filter((v): v is number => v !== undefined));
        console.log(
          `median, ${name}: p95 ${of((r) => r.p95Ms)} ms, p50 ${of((r) => r.p50Ms)} ms, ${of((r) => r.rps)}/s, ${of((r) => r.cpuUsPerRead)} µs CPU/read`,
        );
      }
    }
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

function figures(result: OptionsResult): string {
  return `p95 ${result.p95Ms} ms, p50 ${result.p50Ms} ms, ${result.rps}/s, ${result.cpuUsPerRead ?? '?'} µs CPU/read`;
}
