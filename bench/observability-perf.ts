import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { Store } from '../server/store/store.js';
import { API_PREFIX, newApiKey, spawnFloor, spawnService } from './service.js';

/**
 * `node --import tsx bench/observability-perf.ts <out dir> [answers 60000] [variants both,neither]
 * [main.js of another build] [--healthz]`: each variant's service under GET /workflow with the
 * API key (or GET /healthz, with no credential, issue 29's `healthzToFloor`; the variant `floor`
 * is then the bare Fastify route of the throughput bench), and
 * Linux `perf record` of it (cpu-clock, call graphs) over a fixed number of answers, into
 * `<out dir>/<variant>.data`; V8's --perf-basic-prof map names the JIT frames. Unlike
 * `--cpu-prof`, whose samples are taken by the wall clock (so a process waiting for a core is
 * charged to whatever frame it stopped in), perf samples only the time the process runs: on a
 * shared machine the frames' shares stay the process's own (issue 28; docs/design-notes.md).
 * Read with `perf report -i <out dir>/both.data --no-children --sort symbol`.
 */
const healthz = process.argv.includes('--healthz');
const [outDir, amountText = '60000', variantsText = 'both,neither', mainArg] = process.argv
  .slice(2)
  .filter((arg) => arg !== '--healthz');
if (!outDir) {
  console.error('Usage: node --import tsx bench/observability-perf.ts <out dir> [answers] [variants] [main.js]');
  process.exit(2);
}
const amount = Number(amountText);
const VARIANTS: Record<string, Record<string, string>> = {
  both: {},
  log: { FORGE_METRICS: 'off' },
  metrics: { FORGE_LOG: 'off' },
  neither: { FORGE_METRICS: 'off', FORGE_LOG: 'off' },
};
const workDir = mkdtempSync(join(tmpdir(), 'forge-obs-perf-'));
const apiKey = newApiKey();
const db = join(workDir, 'perf.db');
await (await Store.open(db)).close();
const variants = variantsText.split(',');
type Measured = Pick<Awaited<ReturnType<typeof spawnService>>, 'pid' | 'cpuMs' | 'stop'> & { url: string };
const load = (service: Measured, options: Partial<autocannon.Options>) =>
  autocannon({
    url: service.url,
    headers: healthz ? {} : { Authorization: `Bearer ${apiKey}` },
    connections: 10,
    ...options,
  });
const services: Array<{ variant: string; service: Measured }> = [];
try {
  // One at a time, inside the try: a process that fails to start stops those started before it.
  for (const variant of variants) {
    const nodeOptions = [
      '--perf-basic-prof-only-functions',
      '--interpreted-frames-native-stack',
      // V8 also writes a log of its own with the perf map; in the work folder, not the current one.
      '--no-logfile-per-isolate',
      `--logfile=${join(workDir, `${variant}-v8.log`)}`,
    ];
    if (variant === 'floor') {
      services.push({ variant, service: await spawnFloor(nodeOptions) });
      continue;
    }
    const service = await spawnService({
      db,
      apiKey,
      main: mainArg ? resolve(mainArg) : undefined,
      env: VARIANTS[variant]!,
      nodeOptions,
      logFile: join(workDir, `${variant}.log`),
    });
    services.push({
      variant,
      service: {
        ...service,
        url: healthz ? `${service.loopbackUrl}/healthz` : `${service.loopbackUrl}${API_PREFIX}/workflow`,
      },
    });
  }
  for (const { service } of services) await load(service, { duration: 3 });
  for (const { variant, service } of services) {
    const pid = service.pid;
    const perf: ChildProcess = spawn(
      'perf',
      ['record', '-e', 'cpu-clock', '-F', '2999', '-g', '-p', String(pid), '-o', join(outDir, `${variant}.data`)],
      { stdio: 'inherit' },
    );
    await new Promise((r) => setTimeout(r, 300));
    const cpu0 = service.cpuMs()!;
    const result = await load(service, { amount });
    const cpu1 = service.cpuMs()!;
    perf.kill('SIGINT');
    await new Promise((r) => perf.on('exit', r));
    console.log(
      `${variant}: ${result.requests.total} answers, ${(((cpu1 - cpu0) * 1000) / result.requests.total).toFixed(1)} µs CPU/answer, pid ${pid}`,
    );
  }
} finally {
  await Promise.all(services.map((s) => s.service.stop()));
  rmSync(workDir, { recursive: true, force: true });
}
