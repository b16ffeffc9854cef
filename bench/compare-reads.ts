import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Catalog } from '../server/catalog/catalog.js';
import { DEMO_CATALOG } from '../server/paths.js';
import { Store } from '../server/store/store.js';
import { API_PREFIX, newApiKey, spawnFloor, spawnService } from './service.js';
import { median, round1 } from './stats.js';
import { seedUsers, THROUGHPUT_CONNECTIONS, type Throughput, timedRead } from './throughput.js';

/**
 * `node --import tsx bench/compare-reads.ts [--rounds 6] [--seconds 4] [--reads setup,workflow]
 * [--this <main.js>] <main.js of another build>`: a few of the throughput bench's reads, against another build (an
 * earlier commit's checkout, built) and this one (`server/dist/main.js`), and the floor. Unlike
 * compare-throughput.ts, each process starts once and the reads take turns on them, the order
 * turned every round, so that a minute of the shared machine's drift favours none; each turn
 * prints the service's CPU time per answer and the load average, and the end the medians and
 * minimums. A handful of rounds take a minute or two where compare-throughput takes many.
 */
const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = args.indexOf(name);
  return at === -1 ? fallback : args.splice(at, 2)[1]!;
};
const rounds = Number(option('--rounds', '6'));
const seconds = Number(option('--seconds', '4'));
const reads = option('--reads', 'setup,workflow').split(',');
// `--this <main.js>`: another build in this one's place (the same build twice shows the method's own spread).
const thisMain = args.includes('--this') ? resolve(option('--this', '')) : undefined;
const [other] = args.map((path) => resolve(path));
const READS: Record<string, (base: string, userId: string) => string> = {
  setup: (base) => `${base}/setup?workflowId=${parent.workflowId}`,
  workflow: (base) => `${base}/workflow`,
  // The same read with the host API key (issue 29's workflowListApiKeyToFloor).
  'workflow-apikey': (base) => `${base}/workflow`,
  summary: (base) => `${base}/workflow-summary`,
  user: (base, userId) => `${base}/user/${userId}`,
  // The whole plugin stack and nothing else (issue 29's healthzToFloor); it ignores the token.
  healthz: (base) => `${base.slice(0, -API_PREFIX.length)}/healthz`,
};
/** The reads sent with the API key; the others carry the seeded user's token. */
const WITH_API_KEY = new Set(['workflow-apikey']);
if (!other || !(rounds > 0) || !(seconds > 0) || !reads.every((read) => read in READS)) {
  console.error(
    `Usage: node --import tsx bench/compare-reads.ts [--rounds 6] [--seconds 4] [--reads ${Object.keys(READS).join(',')}] <main.js of another build>`,
  );
  process.exit(2);
}
const parent = new Catalog(DEMO_CATALOG).list()[0]!;
const workDir = mkdtempSync(join(tmpdir(), 'forge-reads-'));
const apiKey = newApiKey();
const builds = [
  { name: 'other', main: other },
  { name: 'this', main: thisMain },
];
const integrations = parent.integrations.map((i) => i.name);
const floor = await spawnFloor();
const services = await Promise.all(
  builds.map(async ({ main }, i) => {
    // Each build its own database (an older build may refuse a newer one's schema), seeded alike.
    const db = join(workDir, `reads-${i}.db`);
    // Seeded through the build's own store: a build refuses a database migrated past its schema.
    const stores = main
      ? ((await import(pathToFileURL(join(dirname(main), 'store', 'store.js')).href)) as { Store: typeof Store }).Store
      : Store;
    const [userId] = await seedUsers(db, integrations, 3, stores);
    // Its log to a file, not a pipe this process (the load's client) would drain, as the throughput bench does.
    const service = await spawnService({ db, apiKey, main, logFile: join(workDir, `reads-${i}.log`) });
    const { token } = await service.hostApi<{ token: string }>('GET', `/user/${userId}/token`);
    return { service, userId: userId!, token };
  }),
);
const figures = new Map<string, Throughput[]>();
try {
  const turns = [
    { name: 'floor', run: () => timedRead(floor, { url: floor.url }, seconds) },
    ...reads.flatMap((read) =>
      builds.map(({ name }, i) => {
        const { service, userId, token } = services[i]!;
        const request = {
          url: READS[read]!(`${service.loopbackUrl}${API_PREFIX}`, userId),
          headers: { Authorization: `Bearer ${WITH_API_KEY.has(read) ? apiKey : token}` },
        };
        return { name: `${read} ${name}`, run: () => timedRead(service, request, seconds) };
      }),
    ),
  ];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? turns : [...turns].reverse();
    const line: string[] = [];
    for (const turn of order) {
      const load = loadavg()[0]!.toFixed(1);
      const result = await turn.run();
      figures.set(turn.name, [...(figures.get(turn.name) ?? []), result]);
      line.push(`${turn.name} ${result.rps}/s ${result.cpuUsPerRequest} µs (load ${load})`);
    }
    console.log(`round ${round + 1}: ${line.join(', ')}`);
  }
} finally {
  await Promise.all([floor.stop(), ...services.map(({ service }) => service.stop())]);
  rmSync(workDir, { recursive: true, force: true });
}
console.log(`\n${rounds} rounds of ${seconds} s, ${THROUGHPUT_CONNECTIONS} connections; other = ${other}`);
const floorRps = median(figures.get('floor')!.map((f) => f.rps));
for (const [name, results] of figures) {
  const cpu = results.map((r) => r.cpuUsPerRequest ?? Number.NaN);
  const rps = median(results.map((r) => r.rps));
  console.log(
    `${name.padEnd(22)} CPU/answer median ${round1(median(cpu))} µs, min ${round1(Math.min(...cpu))} µs; ${rps} req/s median (${(rps / floorRps).toFixed(2)}× the floor's median)`,
  );
}
