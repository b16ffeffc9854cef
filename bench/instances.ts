import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { startCluster } from '../scripts/pg-cluster.mjs';
import { API_PREFIX, type ServiceProcess, spawnService } from './service.js';
import type { Row } from './table.js';

/** Connections in all, split evenly over the instances, so one and two instances get the same load. */
export const INSTANCE_CONNECTIONS = 10;
export const INSTANCE_SECONDS = 10;
/** Child workflows the webhooks go to, each of its own user, called in turn. */
const WORKFLOWS = 20;

export interface InstancesResult {
  /** Webhook runs per second answered by one instance. */
  oneInstanceRunsPerSecond: number;
  /** The same load spread over two instances on the same database. */
  twoInstancesRunsPerSecond: number;
  /** Two instances' runs per second over one's. */
  ratio: number;
}

const CATALOG = {
  integrations: [],
  workflows: [
    {
      workflowId: 'bench-hook',
      name: 'Record an order',
      integrations: [],
      blocks: [
        { name: 'Order placed', id: 'a0000000-0000-4000-8000-000000000001', type: 'webhook', parameters: {} },
        {
          name: 'Line',
          id: 'a0000000-0000-4000-8000-000000000002',
          type: 'transform',
          parameters: { output: { line: 'Order {{a0000000-0000-4000-8000-000000000001.orderId}}' } },
        },
      ],
    },
  ],
};

/**
 * Webhook runs per second with one instance and with two on the same database (`db`: a SQLite
 * file, or a PostgreSQL URL): each POST to a child workflow's webhook URL runs it and stores its
 * execution before the answer. The same INSTANCE_CONNECTIONS connections go to one instance,
 * then half to each of two; any answer other than 200 stops the bench.
 */
export async function benchInstances(
  workDir: string,
  apiKey: string,
  db: string,
  env: Record<string, string> = {},
  /** Another build's `main.js` (bench/compare-instances.ts); default this build's. */
  main?: string,
  /**
   * Runs each load (`phase` one or two instances), to count around it what it cost
   * (bench/compare-instances.ts `--counts`); it answers the load's runs per second.
   */
  measure: (phase: 'one' | 'two', instances: ServiceProcess[], load: () => Promise<number>) => Promise<number> = (
    _phase,
    _instances,
    run,
  ) => run(),
): Promise<InstancesResult> {
  const catalog = join(workDir, 'instances-catalog.json');
  writeFileSync(catalog, JSON.stringify(CATALOG));
  const start = () =>
    spawnService({
      db,
      apiKey,
      catalog,
      main,
      env: {
        FORGE_LOG: 'off',
        FORGE_RATE_LIMITS: 'token=off,webhook=off',
        FORGE_SECRET_KEY: secretKey,
        ...env,
      },
    });
  const secretKey = randomBytes(32).toString('base64');
  const first = await start();
  let second: ServiceProcess | undefined;
  try {
    const paths = await installWebhooks(first);
    const one = await measure('one', [first], () => load([first], paths));
    second = await start();
    const both = [first, second];
    const two = await measure('two', both, () => load(both, paths));
    return {
      oneInstanceRunsPerSecond: one,
      twoInstancesRunsPerSecond: two,
      ratio: Math.round((two / one) * 100) / 100,
    };
  } finally {
    await second?.stop();
    await first.stop();
  }
}

/**
 * The figure the issue asks for: webhook runs per second on PostgreSQL with one instance and with
 * two, on a throwaway cluster with PostgreSQL's default durability, removed afterwards.
 */
export async function benchInstancesOnPostgres(workDir: string, apiKey: string): Promise<InstancesResult> {
  const cluster = await startCluster({ durable: true });
  try {
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query('CREATE DATABASE bench_instances');
    await admin.end();
    return await benchInstances(workDir, apiKey, cluster.url.replace(/\/postgres$/, '/bench_instances'));
  } finally {
    cluster.remove();
  }
}

/** The row run.ts adds to its table. */
export function instancesRow(result: InstancesResult): Row {
  return [
    'webhook runs on PostgreSQL, 1 and 2 instances',
    `${result.oneInstanceRunsPerSecond} and ${result.twoInstancesRunsPerSecond} runs/s (× ${result.ratio})`,
    `webhook → transform over ${WORKFLOWS} workflows, ${INSTANCE_CONNECTIONS} connections in all`,
  ];
}

/** WORKFLOWS users, each with the bench's webhook workflow installed; answers their webhook paths. */
async function installWebhooks(service: ServiceProcess): Promise<string[]> {
  const paths: string[] = [];
  for (let i = 0; i < WORKFLOWS; i++) {
    const { userId } = await service.hostApi<{ userId: string }>('POST', '/user', {
      name: `Bench ${i}`,
      email: `bench-${i}-${randomBytes(4).toString('hex')}@example.com`,
    });
    const { token } = await service.hostApi<{ token: string }>('GET', `/user/${userId}/token`);
    const installed = await fetch(`${service.loopbackUrl}${API_PREFIX}/workflow/bench-hook/install`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    if (installed.status !== 201) throw new Error(`install answered ${installed.status}: ${await installed.text()}`);
    const { workflowId } = (await installed.json()) as { workflowId: string };
    const child = await service.hostApi<{ webhookUrl: string }>('GET', `/workflow/${workflowId}`);
    paths.push(new URL(child.webhookUrl).pathname);
  }
  return paths;
}

/** Drives the webhooks over INSTANCE_CONNECTIONS connections split over `instances`; answers runs per second. */
async function load(instances: ServiceProcess[], paths: string[]): Promise<number> {
  const runs = await Promise.all(
    instances.map(
      (instance) =>
        new Promise<number>((resolve, reject) => {
          autocannon(
            {
              url: instance.loopbackUrl,
              connections: INSTANCE_CONNECTIONS / instances.length,
              duration: INSTANCE_SECONDS,
              bailout: 1,
              requests: paths.map((path, i) => ({
                method: 'POST',
                path,
                // Each answer waits for its run, so the row counts runs finished (issue 27 queued them).
                headers: { 'Content-Type': 'application/json', Prefer: 'wait=30' },
                body: JSON.stringify({ orderId: i }),
              })),
            },
            (error, result) => {
              if (error) return reject(error);
              if (result.non2xx > 0 || result.errors > 0) {
                return reject(new Error(`webhooks answered ${result.non2xx} non-2xx and ${result.errors} errors`));
              }
              resolve(result['2xx']);
            },
          );
        }),
    ),
  );
  return Math.round(runs.reduce((sum, n) => sum + n, 0) / INSTANCE_SECONDS);
}
