import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startCluster } from '../scripts/pg-cluster.mjs';
import { benchInstances, type InstancesResult } from './instances.js';
import { newApiKey } from './service.js';
import { median } from './stats.js';

/**
 * `node --import tsx bench/compare-instances.ts [--rounds 3] <main.js of another build>`: issue 27
 * item 9 with two instances. Webhook runs per second on PostgreSQL with one instance and with two
 * on the same database (bench/instances.ts), for the other build and this one
 * (`server/dist/main.js`, build it first) in turns round after round, each on a fresh database
 * of one throwaway cluster with PostgreSQL's default durability; then each build's medians and
 * this build's share of the other's (the budget: at least 90%).
 */
const { values, positionals } = parseArgs({ options: { rounds: { type: 'string' } }, allowPositionals: true });
const rounds = Number(values.rounds ?? 3);
if (positionals.length !== 1 || !(Number.isInteger(rounds) && rounds > 0)) {
  console.error('Usage: node --import tsx bench/compare-instances.ts [--rounds 3] <main.js of another build>');
  process.exit(2);
}
const builds = [
  { name: 'other build', main: resolve(positionals[0]!), results: [] as InstancesResult[] },
  { name: 'this build', main: undefined, results: [] as InstancesResult[] },
];
const workDir = mkdtempSync(join(tmpdir(), 'forge-compare-instances-'));
const cluster = await startCluster({ durable: true });
const admin = new pg.Client({ connectionString: cluster.url });
await admin.connect();
try {
  const apiKey = newApiKey();
  for (let round = 0; round < rounds; round++) {
    // Which build goes first alternates, so neither always follows the other.
    for (const [i, build] of (round % 2 ? [...builds].reverse() : builds).entries()) {
      const database = `compare_instances_${round}_${i}`;
      await admin.query(`CREATE DATABASE ${database}`);
      const result = await benchInstances(
        workDir,
        apiKey,
        cluster.url.replace(/\/postgres$/, `/${database}`),
        {},
        build.main,
      );
      build.results.push(result);
      console.log(
        `round ${round + 1} ${build.name}: one instance ${result.oneInstanceRunsPerSecond} runs/s, two ${result.twoInstancesRunsPerSecond} (load average ${loadavg()[0]!.toFixed(1)})`,
      );
    }
  }
  const [other, self] = builds.map(({ results }) => ({
    one: median(results.map((r) => r.oneInstanceRunsPerSecond)),
    two: median(results.map((r) => r.twoInstancesRunsPerSecond)),
  }));
  const share = (a: number, b: number) => `${Math.round((a / b) * 100)}%`;
  console.log(
    `\nmedians of ${rounds} rounds: one instance ${self!.one} against ${other!.one} runs/s (${share(self!.one, other!.one)}), ` +
      `two instances ${self!.two} against ${other!.two} (${share(self!.two, other!.two)})`,
  );
} finally {
  await admin.end();
  cluster.remove();
  rmSync(workDir, { recursive: true, force: true });
}
