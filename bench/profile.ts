import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { startCluster } from '../scripts/pg-cluster.mjs';
import { Catalog } from '../server/catalog/catalog.js';
import { DEMO_CATALOG } from '../server/paths.js';
import { newDatabase, seedLogs } from './logs.js';
import { optionsSetup } from './options.js';
import { API_PREFIX, newApiKey, spawnService } from './service.js';

/**
 * `npm run build`, then `node --import tsx bench/profile.ts [read] [seconds]`: a CPU profile of
 * the built service (`node --cpu-prof`) while autocannon sends one read over 10 connections,
 * summarised as where the service's time goes, by package and by function (self time). The reads
 * are those of the throughput bench: `workflow` (user token, the default), `workflow-apikey`,
 * `workflow-summary`, `setup`, `user`, `healthz`, `logs` (pages 1–10, API key), and `options`
 * (a setting's choices read from an app, past the page cache, as bench/options.ts reads them). The profile file is kept with --keep;
 * `--main <main.js of another build>` profiles that build (an earlier commit's, built); `--postgres` serves from a
 * throwaway PostgreSQL cluster instead of a SQLite file.
 */
const args = process.argv.slice(2);
const mainAt = args.indexOf('--main');
const main = mainAt === -1 ? undefined : resolve(args.splice(mainAt, 2)[1]!);
const [read = 'workflow', seconds = '8'] = args.filter((a) => !a.startsWith('--'));
const keep = args.includes('--keep');
const cluster = args.includes('--postgres') ? await startCluster({ durable: true }) : undefined;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const workDir = mkdtempSync(join(tmpdir(), 'forge-profile-'));
const apiKey = newApiKey();
const profileDir = join(workDir, 'profile');
// The profile covers the whole process; only the samples taken while the load ran are summed:
// those of its last `loadMs` before the `stopMs` the process took to stop once the load ended.
const window = { loadMs: 0, stopMs: 0 };
let loadEnded = 0;
const db = cluster ? await newDatabase(cluster.url, 'profile') : join(workDir, 'profile.db');
// `logs`: pages 1–10 of a log of 3,000 runs (the first pages cost the same at 100,000), with the API key.
const logs = read === 'logs' ? await seedLogs(db, 3_000) : undefined;
// `options`: a Slack channel's choices as bench/options.ts reads them, each past the page cache.
const options = read === 'options' ? await optionsSetup(db) : undefined;
const service = await spawnService({
  db,
  apiKey,
  main,
  nodeOptions: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
  env: {
    ...(options ? { FORGE_SANDBOX_URL: options.appUrl } : {}),
    // PostgreSQL's service refuses to start without a key for the secrets it stores.
    ...(cluster ? { FORGE_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') } : {}),
  },
});
try {
  const { userId } =
    options ??
    (await service.hostApi<{ userId: string }>('POST', '/user', {
      name: 'Profile user',
      email: 'profile@example.com',
    }));
  const { token } = await service.hostApi<{ token: string }>('GET', `/user/${userId}/token`);
  const parent = new Catalog(DEMO_CATALOG).list()[0]!;
  const base = `${service.loopbackUrl}${API_PREFIX}`;
  const asUser = { Authorization: `Bearer ${token}` };
  const requests: Record<string, { url: string; headers?: Record<string, string> }> = {
    workflow: { url: `${base}/workflow`, headers: asUser },
    'workflow-apikey': { url: `${base}/workflow`, headers: { Authorization: `Bearer ${apiKey}` } },
    'workflow-summary': { url: `${base}/workflow-summary`, headers: asUser },
    setup: { url: `${base}/setup?workflowId=${parent.workflowId}`, headers: asUser },
    user: { url: `${base}/user/${userId}`, headers: asUser },
    healthz: { url: `${service.loopbackUrl}/healthz` },
  };
  let page = 0;
  const logsRequest = logs && {
    url: base,
    headers: { Authorization: `Bearer ${apiKey}` },
    requests: [
      {
        setupRequest: (request: autocannon.Request) => ({
          ...request,
          path: `${API_PREFIX}/workflow/${logs.childId}/logs?page=${(page++ % 10) + 1}&limit=30`,
        }),
      },
    ],
  };
  let cursor = 0;
  const optionsRequest = options && {
    url: base,
    headers: asUser,
    requests: [
      {
        setupRequest: (request: autocannon.Request) => ({
          ...request,
          path: `${options.path}&cursor=profile-${cursor++}`,
        }),
      },
    ],
  };
  const request = logsRequest ?? optionsRequest ?? requests[read];
  if (!request) throw new Error(`No read ${read}; name one of ${Object.keys(requests).join(', ')}.`);
  // A second of warm-up first, left out of the sums, so that the code measured is compiled hot.
  await autocannon({ ...request, connections: 10, duration: 1 });
  const from = performance.now();
  const result = await autocannon({ ...request, connections: 10, duration: Number(seconds) });
  loadEnded = performance.now();
  window.loadMs = loadEnded - from;
  console.log(
    `${read}: ${Math.round(result.requests.average)} req/s, p99 ${result.latency.p99} ms, ${result.non2xx} not 2xx`,
  );
} finally {
  await service.stop();
  options?.app.kill();
  window.stopMs = performance.now() - loadEnded;
  cluster?.remove();
}

const [file] = readdirSync(profileDir);
const profile = JSON.parse(readFileSync(join(profileDir, file!), 'utf8')) as Profile;
if (keep) console.log(`Profile: ${join(profileDir, file!)}`);
summarise(profile, window);
if (!keep) rmSync(workDir, { recursive: true, force: true });

/** Self time by package (or node: internals, V8's own entries) and the functions that take the most. */
function summarise(
  { nodes, samples, timeDeltas }: Profile,
  { loadMs, stopMs }: { loadMs: number; stopMs: number },
): void {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const self = new Map<number, number>();
  const lasted = timeDeltas.reduce((a, b) => a + b, 0) / 1000;
  const [from, to] = [lasted - stopMs - loadMs, lasted - stopMs];
  let at = 0;
  for (const [i, id] of samples.entries()) {
    const delta = timeDeltas[i] ?? 0;
    at += delta / 1000;
    if (at >= from && at <= to) self.set(id, (self.get(id) ?? 0) + delta);
  }
  const idle = [...self].filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)');
  const total = [...self.values()].reduce((a, b) => a + b, 0) - idle.reduce((a, [, t]) => a + t, 0);
  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, time] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') continue;
    const group = groupOf(url, functionName);
    groups.set(group, (groups.get(group) ?? 0) + time);
    const name = `${functionName || '(anonymous)'} ${group}${url ? `:${lineNumber + 1}` : ''}`;
    functions.set(name, (functions.get(name) ?? 0) + time);
  }
  const share = (time: number) => `${((100 * time) / total).toFixed(1).padStart(5)}%`;
  console.log(
    `\nBusy CPU time while the load ran ${(total / 1e6).toFixed(2)} s (idle left out), self time by where the code is:`,
  );
  for (const [group, time] of [...groups].sort((a, b) => b[1] - a[1]).slice(0, 16)) {
    console.log(`${share(time)}  ${group}`);
  }
  console.log('\nFunctions with the most self time:');
  for (const [name, time] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
    console.log(`${share(time)}  ${name}`);
  }
}

function groupOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return url;
  const packageAt = url.lastIndexOf('/node_modules/');
  if (packageAt !== -1) {
    const rest = url.slice(packageAt + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const serviceAt = url.indexOf('/server/dist/');
  return serviceAt === -1 ? url : `service ${url.slice(serviceAt + '/server/dist/'.length)}`;
}
