import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Catalog } from '../server/catalog/catalog.js';
import { DEMO_CATALOG } from '../server/paths.js';
import { SecretBox } from '../server/secrets.js';
import { Store } from '../server/store/store.js';
import { API_PREFIX, newApiKey, type ServiceProcess, spawnFloor, spawnService } from './service.js';
import { median, round1 } from './stats.js';
import { info, missed, type Row, table } from './table.js';

/** autocannon's default, so the figures read like the usual Node HTTP benchmarks. */
export const THROUGHPUT_CONNECTIONS = 10;
/**
 * The floor and the reads go round this many times, each read's ratio the median of its rounds:
 * within one run of eight-second reads the floor moved from 23,712 to 41,831 requests/s (the
 * machine at half speed, then full), and a single read's ratio followed the floor runs that
 * happened to stand beside it (docs/design-notes.md, the session's quiet bench after the merges).
 */
export const FLOOR_ROUNDS = 3;
/** A read's turn in each round, and the floor's between two reads: short, to track the machine's drift. */
export const READ_TURN_SECONDS = 3;
const FLOOR_SECONDS = 2;
/** Each read runs this long first, unmeasured, so the service's code is compiled hot before it is timed. */
const WARM_UP_SECONDS = 1;
/** Each install is by a user of its own (a second one would be a 409), so installs are counted, not timed. */
export const INSTALLS = 5_000;

export interface Throughput {
  rps: number;
  p99Ms: number;
  /**
   * The service's CPU time per answer, in µs (where /proc tells it): unlike requests per second,
   * hardly moved by what else a shared machine runs, so builds compare on it.
   */
  cpuUsPerRequest?: number;
}

/**
 * The reads measured against the floor (issue 29), in the order they run, each with its least
 * ratio to the floor's requests per second. Embed reads carry a user token, as the elements send them.
 */
export const FLOOR_READS = [
  { key: 'healthz', what: 'GET /healthz, no credential (the whole plugin stack)', atLeast: 0.8 },
  { key: 'workflowListApiKey', what: 'GET /workflow, API key', atLeast: 0.4 },
  { key: 'workflowList', what: 'GET /workflow, user token', atLeast: 0.25 },
  { key: 'workflowSummary', what: 'GET /workflow-summary, user token', atLeast: 0.25 },
  { key: 'setup', what: 'GET /setup?workflowId=, user token', atLeast: 0.25 },
  { key: 'user', what: "GET /user/:id (the token's own), user token", atLeast: 0.25 },
] as const;

export type FloorReadKey = (typeof FLOOR_READS)[number]['key'];

export interface ThroughputResult extends Record<FloorReadKey, Throughput> {
  /**
   * The bare Fastify route (bench/floor-service.mjs), measured in each round before the first of
   * the service's reads and after each, every round in order: a read's ratio in a round divides
   * by the mean of the two floor runs beside it, so that a machine whose speed drifts during the
   * run (a shared one does) moves the floor and the read alike. `floor` is the mean of all; each
   * read's figures are the medians of its rounds.
   */
  floors: Throughput[];
  floor: Throughput;
  install: Throughput;
  /** Each read's requests per second over the mean of the two floor runs beside it, the median of the rounds. */
  ratios: Record<FloorReadKey, number>;
}

/** A read's requests per second as a multiple of the floor's measured on either side of it (median of the rounds). */
export function floorRatio(result: ThroughputResult, key: FloorReadKey): number {
  return result.ratios[key];
}

/**
 * The floor and the service's reads (FLOOR_READS) in turns, floor first and last, then POST
 * /workflow/:id/install (a save), each user a different one. The floor and the service run
 * side by side, each idle while the other is measured. autocannon drives
 * THROUGHPUT_CONNECTIONS keep-alive connections; any answer other than the expected status
 * stops the bench.
 */
export async function benchThroughput(
  workDir: string,
  apiKey: string,
  target: Pick<Parameters<typeof spawnService>[0], 'main' | 'env'> = {},
): Promise<ThroughputResult> {
  const dbPath = join(workDir, 'throughput.db');
  const parent = new Catalog(DEMO_CATALOG).list()[0]!;
  const userIds = await seedUsers(
    dbPath,
    parent.integrations.map((i) => i.name),
  );
  const floor = await spawnFloor();
  // The request log to a file, as bench/observability.ts does: read from a pipe, it was drained
  // by this process, the one that drives the load, which took CPU from the client during every
  // service row and none during the floor's (issue 29's healthzToFloor; docs/design-notes.md).
  const service = await spawnService({ db: dbPath, apiKey, logFile: join(workDir, 'throughput.log'), ...target });
  const floors: Throughput[] = [];
  const reads = {} as Record<FloorReadKey, Throughput>;
  const turns: Partial<Record<FloorReadKey, Array<{ read: Throughput; ratio: number }>>> = {};
  const ratios = {} as Record<FloorReadKey, number>;
  let install: Throughput;
  try {
    const tokens: string[] = [];
    // In batches: thousands of requests at once would measure the bench's own queue.
    for (let i = 0; i < userIds.length; i += 50) {
      const batch = userIds.slice(i, i + 50);
      tokens.push(
        ...(await Promise.all(
          batch.map(async (id) => (await service.hostApi<{ token: string }>('GET', `/user/${id}/token`)).token),
        )),
      );
    }
    const [token] = tokens;
    const base = `${service.loopbackUrl}${API_PREFIX}`;
    const asUser = { Authorization: `Bearer ${token}` };
    const requests: Record<FloorReadKey, { url: string; headers?: Record<string, string> }> = {
      healthz: { url: `${service.loopbackUrl}/healthz` },
      workflowListApiKey: { url: `${base}/workflow`, headers: { Authorization: `Bearer ${apiKey}` } },
      workflowList: { url: `${base}/workflow`, headers: asUser },
      workflowSummary: { url: `${base}/workflow-summary`, headers: asUser },
      setup: { url: `${base}/setup?workflowId=${parent.workflowId}`, headers: asUser },
      user: { url: `${base}/user/${userIds[0]}`, headers: asUser },
    };
    for (let round = 0; round < FLOOR_ROUNDS; round++) {
      // Only the first round warms up: the code the later ones run is compiled hot already.
      const measure = round === 0 ? timedRead : readWithoutWarmUp;
      let before = await measure(floor, { url: floor.url }, FLOOR_SECONDS);
      floors.push(before);
      for (const { key } of FLOOR_READS) {
        const read = await measure(service, requests[key], READ_TURN_SECONDS);
        const after = await measure(floor, { url: floor.url }, FLOOR_SECONDS);
        floors.push(after);
        (turns[key] ??= []).push({ read, ratio: read.rps / ((before.rps + after.rps) / 2) });
        before = after;
      }
    }
    for (const { key } of FLOOR_READS) {
      const list = turns[key]!;
      reads[key] = {
        rps: median(list.map((turn) => turn.read.rps)),
        p99Ms: median(list.map((turn) => turn.read.p99Ms)),
        cpuUsPerRequest: list.every((turn) => turn.read.cpuUsPerRequest !== undefined)
          ? round1(median(list.map((turn) => turn.read.cpuUsPerRequest!)))
          : undefined,
      };
      ratios[key] = median(list.map((turn) => turn.ratio));
    }
    let next = 1;
    install = await run(
      service,
      {
        url: base,
        method: 'POST',
        amount: INSTALLS,
        requests: [
          {
            setupRequest: (request) => ({
              ...request,
              path: `${API_PREFIX}/workflow/${parent.workflowId}/install`,
              headers: { Authorization: `Bearer ${tokens[next++]}`, 'Content-Type': 'application/json' },
              body: '{}',
            }),
          },
        ],
      },
      201,
    );
  } finally {
    await Promise.all([service.stop(), floor.stop()]);
  }
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  return {
    floors,
    floor: {
      rps: Math.round(mean(floors.map((f) => f.rps))),
      p99Ms: round1(mean(floors.map((f) => f.p99Ms))),
      cpuUsPerRequest: floors.every((f) => f.cpuUsPerRequest !== undefined)
        ? round1(mean(floors.map((f) => f.cpuUsPerRequest!)))
        : undefined,
    },
    ...reads,
    install,
    ratios,
  };
}

/** A read for `seconds`, with no warm-up: the process answered the same read moments before. */
function readWithoutWarmUp(
  service: Pick<ServiceProcess, 'cpuMs'>,
  request: { url: string; headers?: Record<string, string> },
  seconds: number,
): Promise<Throughput> {
  return run(service, { ...request, duration: seconds });
}

/** A read for `seconds`, after WARM_UP_SECONDS of the same unmeasured. */
export async function timedRead(
  service: Pick<ServiceProcess, 'cpuMs'>,
  request: { url: string; headers?: Record<string, string> },
  seconds: number,
): Promise<Throughput> {
  await run(service, { ...request, duration: WARM_UP_SECONDS });
  return run(service, { ...request, duration: seconds });
}

/**
 * One user per install (and one for the reads), each with every integration of the parent
 * connected; `count` users in all.
 */
export async function seedUsers(
  dbPath: string,
  integrations: string[],
  // One for the reads, one per install, and spares: autocannon may prepare a request per
  // connection beyond the last one it sends.
  count = 1 + INSTALLS + 2 * THROUGHPUT_CONNECTIONS,
  // Another build's store for that build's database (bench/compare-reads.ts): its schema may be
  // older than this one's, and a build refuses a database migrated past what it knows.
  stores: Pick<typeof Store, 'open'> = Store,
): Promise<string[]> {
  const store = await stores.open(dbPath);
  const secrets = SecretBox.open(dbPath);
  try {
    return await store.transaction(async (tx) => {
      const userIds: string[] = [];
      for (let i = 0; i < count; i++) {
        const userId = await tx.users.create(`Bench user ${i}`, `bench-${i}@example.com`);
        for (const name of integrations) await tx.credentials.save(userId, name, secrets.seal({ kind: 'bench' }));
        userIds.push(userId);
      }
      return userIds;
    });
  } finally {
    await store.close();
  }
}

async function run(
  service: Pick<ServiceProcess, 'cpuMs'>,
  options: autocannon.Options,
  expected = 200,
): Promise<Throughput> {
  const cpuBefore = service.cpuMs();
  const started = performance.now();
  // Timed here, from the start to the last answer: autocannon ends a run (and reports its
  // duration) on a whole-second tick, too coarse for a fixed count of installs.
  let lastAnswer = started;
  // The run is both a promise of the result and an emitter of each answer.
  const instance = autocannon({
    connections: THROUGHPUT_CONNECTIONS,
    ...options,
    expectBody: undefined,
  }) as Promise<autocannon.Result> & { on(event: 'response', listener: () => void): void };
  instance.on('response', () => {
    lastAnswer = performance.now();
  });
  const result = await instance;
  const seconds = (lastAnswer - started) / 1000;
  const wrong = result.non2xx + result.errors + result.timeouts;
  const status = result.statusCodeStats as Record<string, { count: number }> | undefined;
  const other = Object.entries(status ?? {}).filter(([code]) => Number(code) !== expected);
  if (wrong > 0 || other.length > 0) {
    throw new Error(
      `${options.method ?? 'GET'} ${options.url} answered other than ${expected}: ${JSON.stringify(status)}, ${result.errors} errors`,
    );
  }
  const cpuAfter = service.cpuMs();
  return {
    rps: Math.round(result.requests.total / seconds),
    p99Ms: round1(result.latency.p99),
    cpuUsPerRequest:
      cpuBefore === undefined || cpuAfter === undefined
        ? undefined
        : round1(((cpuAfter - cpuBefore) * 1000) / result.requests.total),
  };
}

/** The rows run.ts prints: the floor, each read as a ratio to it beside its own figures, and the installs. */
export function throughputRows(result: ThroughputResult): Row[] {
  // The process's CPU time per answer beside: it moves much less than requests per second with
  // what else a shared machine runs.
  const figures = ({ rps, p99Ms, cpuUsPerRequest }: Throughput) =>
    `${rps.toLocaleString('en')} req/s, p99 ${p99Ms} ms${cpuUsPerRequest === undefined ? '' : `, ${cpuUsPerRequest} µs CPU/req`}`;
  return [
    info(
      'floorRps',
      `${figures(result.floor)}`,
      String,
      `a bare Fastify route answering {"data": []}, its own process; mean of ${result.floors.length} runs: ${FLOOR_ROUNDS} rounds of one before each read below and one after the last (${result.floors.map((f) => f.rps.toLocaleString('en')).join(', ')}/s); each read is divided by the two beside it, and its row is the median of its rounds`,
    ),
    ...FLOOR_READS.map(({ key, what, atLeast }): Row => {
      const ratio = floorRatio(result, key);
      return [
        `${key}ToFloor`,
        `${ratio.toFixed(2)}× floor (${figures(result[key])})`,
        `≥ ${atLeast}×; ${what}, ${THROUGHPUT_CONNECTIONS} connections`,
        ratio >= atLeast,
      ];
    }),
    info(
      'installRps, installP99Ms',
      figures(result.install),
      String,
      `POST /workflow/:id/install, ${INSTALLS.toLocaleString('en')} users, ${THROUGHPUT_CONNECTIONS} connections`,
    ),
  ];
}

/**
 * `npm run build`, then `node --import tsx bench/throughput.ts`: the floor and the service's
 * throughput rows alone, as `npm run bench` measures them.
 */
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const workDir = mkdtempSync(join(tmpdir(), 'forge-bench-throughput-'));
  try {
    const result = await benchThroughput(workDir, newApiKey());
    const rows = throughputRows(result);
    console.log(table(rows));
    if (missed(rows).length > 0) process.exitCode = 1;
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}
