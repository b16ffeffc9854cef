import { join } from 'node:path';
import autocannon from 'autocannon';
import { Catalog } from '../server/catalog/catalog.js';
import { DEMO_CATALOG } from '../server/paths.js';
import { SecretBox } from '../server/secrets.js';
import { Store } from '../server/store/store.js';
import { API_PREFIX, type ServiceProcess, spawnService } from './service.js';
import { round1 } from './stats.js';

/** autocannon's default, so the figures read like the usual Node HTTP benchmarks. */
export const THROUGHPUT_CONNECTIONS = 10;
export const THROUGHPUT_SECONDS = 10;
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

export interface ThroughputResult {
  workflowList: Throughput;
  setup: Throughput;
  install: Throughput;
}

/**
 * The service's throughput on the elements' three busiest calls, each with a user token as the
 * elements send it: GET /workflow (the list), GET /setup (a modal open), and POST
 * /workflow/:id/install (a save). autocannon drives THROUGHPUT_CONNECTIONS keep-alive
 * connections; any answer other than the expected status stops the bench.
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
  const service = await spawnService({ db: dbPath, apiKey, ...target });
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
    const read = (path: string) =>
      run(service, {
        url: `${base}${path}`,
        headers: { Authorization: `Bearer ${token}` },
        duration: THROUGHPUT_SECONDS,
      });
    const workflowList = await read('/workflow');
    const setup = await read(`/setup?workflowId=${parent.workflowId}`);
    let next = 1;
    const install = await run(
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
    return { workflowList, setup, install };
  } finally {
    await service.stop();
  }
}

/** One user per install (and one for the reads), each with every integration of the parent connected. */
async function seedUsers(dbPath: string, integrations: string[]): Promise<string[]> {
  const store = await Store.open(dbPath);
  const secrets = SecretBox.open(dbPath);
  try {
    return await store.transaction(async (tx) => {
      // One for the reads, one per install, and spares: autocannon may prepare a request per
      // connection beyond the last one it sends.
      const userIds: string[] = [];
      for (let i = 0; i < 1 + INSTALLS + 2 * THROUGHPUT_CONNECTIONS; i++) {
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

async function run(service: ServiceProcess, options: autocannon.Options, expected = 200): Promise<Throughput> {
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
