import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Store } from '../server/store/store.js';
import { API_PREFIX, newApiKey, spawnFloor, spawnService } from './service.js';
import { median } from './stats.js';
import { type Throughput, timedRead } from './throughput.js';

/**
 * `node --import tsx bench/observability-split.ts [--rounds 7] [--seconds 3] [--main a.js,b.js]
 * [--variants both,log,metrics,neither] [--healthz] [--floor]`: issue 28's budget taken apart. GET
 * /workflow with the API key (with `--healthz`, GET /healthz with no credential: issue 29's
 * `healthzToFloor`) on a process per build and variant (metrics and the request log on, the log alone,
 * metrics alone, neither; or `name:KEY=value+KEY=value` for other environments), in turns round
 * after round, each round starting with the next; the service's CPU time per answer from /proc,
 * each against the same build's `neither`, as medians and as the paired differences of each round.
 * `--floor` adds the throughput bench's bare Fastify route as one more process in the turns.
 */
const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = args.indexOf(name);
  return at === -1 ? fallback : args[at + 1]!;
};
const rounds = Number(option('--rounds', '7'));
const seconds = Number(option('--seconds', '3'));
const mains = option('--main', '')
  .split(',')
  .filter(Boolean)
  .map((p) => resolve(p));
const variantsArg = option('--variants', 'both,log,metrics,neither').split(',');
const healthz = args.includes('--healthz');
const withFloor = args.includes('--floor');
// A variant is one of these names, or `name:KEY=value+KEY=value` (extra environment).
const VARIANTS: Record<string, Record<string, string>> = {
  both: {},
  log: { FORGE_METRICS: 'off' },
  metrics: { FORGE_LOG: 'off' },
  neither: { FORGE_METRICS: 'off', FORGE_LOG: 'off' },
};
for (const spec of variantsArg) {
  const [name, env] = spec.split(':');
  if (env !== undefined)
    VARIANTS[name!] = Object.fromEntries(env.split('+').map((pair) => pair.split('=') as [string, string]));
}
const builds = mains.length ? mains.map((main) => ({ name: main, main })) : [{ name: 'this build', main: undefined }];
const workDir = mkdtempSync(join(tmpdir(), 'forge-obs-split-'));
const apiKey = newApiKey();
const db = join(workDir, 'split.db');
await (await Store.open(db)).close();
const services: Array<{
  build: string;
  name: string;
  service: Pick<Awaited<ReturnType<typeof spawnService>>, 'cpuMs' | 'stop'>;
  /** What each turn reads. */
  request: { url: string; headers?: Record<string, string> };
  runs: Throughput[];
}> = [];
try {
  if (withFloor) {
    const floor = await spawnFloor();
    services.push({ build: 'floor', name: 'floor', service: floor, request: { url: floor.url }, runs: [] });
  }
  // Inside the try: a process that fails to start stops those started before it.
  for (const build of builds)
    for (const variant of variantsArg.map((spec) => spec.split(':')[0]!)) {
      const service = await spawnService({
        db,
        apiKey,
        main: build.main,
        env: VARIANTS[variant]!,
        logFile: join(workDir, `${services.length}.log`),
      });
      services.push({
        build: build.name,
        name: `${build.name === 'this build' ? '' : `${build.name.split('/').slice(-4, -3)[0]} `}${variant}`,
        service,
        request: healthz
          ? { url: `${service.loopbackUrl}/healthz` }
          : { url: `${service.loopbackUrl}${API_PREFIX}/workflow`, headers: { Authorization: `Bearer ${apiKey}` } },
        runs: [] as Throughput[],
      });
    }
  for (let round = 0; round < rounds; round++) {
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
    const line: string[] = [];
    for (let turn = 0; turn < services.length; turn++) {
      const s = services[(round + turn) % services.length]!;
      const t = await timedRead(s.service, s.request, seconds);
      s.runs.push(t);
      line.push(`${s.name} ${t.rps}/s ${t.cpuUsPerRequest}µs`);
    }
    console.log(`round ${round + 1} (load ${load}): ${line.join(', ')}`);
  }
} finally {
  await Promise.all(services.map((s) => s.service.stop()));
  rmSync(workDir, { recursive: true, force: true });
}
const floorRuns = services.find((s) => s.build === 'floor')?.runs;
for (const s of services) {
  // Each build against its own process with neither.
  const base = services.find((b) => b.name.endsWith('neither') && b.build === s.build);
  const baseCpu = base ? median(base.runs.map((t) => t.cpuUsPerRequest!)) : undefined;
  const baseRps = base ? median(base.runs.map((t) => t.rps)) : undefined;
  // Paired: this variant's turn against the base's in the same round.
  const diffs = base
    ? s.runs.map((t, i) => t.cpuUsPerRequest! - base.runs[i]!.cpuUsPerRequest!).sort((a, b) => a - b)
    : [];
  const pairedNote = base
    ? ` paired diff median ${median(diffs).toFixed(1)} µs [${diffs.map((d) => d.toFixed(0)).join(' ')}]`
    : '';
  const cpu = median(s.runs.map((t) => t.cpuUsPerRequest!));
  const cpus = s.runs.map((t) => t.cpuUsPerRequest!).sort((a, b) => a - b);
  const rps = median(s.runs.map((t) => t.rps));
  // Against the floor: requests per second of each round over the floor's in the same round.
  const floorNote =
    floorRuns && s.build !== 'floor'
      ? `; × floor median ${median(s.runs.map((t, i) => t.rps / floorRuns[i]!.rps)).toFixed(2)}, CPU − floor median ${median(s.runs.map((t, i) => t.cpuUsPerRequest! - floorRuns[i]!.cpuUsPerRequest!)).toFixed(1)} µs`
      : '';
  console.log(
    `${s.name.padEnd(24)} CPU median ${cpu.toFixed(1)} µs (min ${cpus[0]}, max ${cpus.at(-1)})${baseCpu ? ` ${((cpu / baseCpu - 1) * 100).toFixed(1)}%` : ''}; ${rps} req/s${baseRps ? ` (${((1 - rps / baseRps) * 100).toFixed(1)}% cost)` : ''}${pairedNote}${floorNote}`,
  );
}
console.log(`load after: ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
