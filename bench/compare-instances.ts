import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startCluster } from '../scripts/pg-cluster.mjs';
import { benchInstances, INSTANCE_SECONDS, type InstancesResult } from './instances.js';
import { postgresCpuMs, statFields } from './logs.js';
import type { ServiceProcess } from './service.js';
import { newApiKey } from './service.js';
import { median } from './stats.js';

/**
 * `node --import tsx bench/compare-instances.ts [--rounds 3] [--counts] <main.js of another build>`:
 * issue 27 item 9 with two instances. Webhook runs per second on PostgreSQL with one instance and
 * with two on the same database (bench/instances.ts), for the other build and this one
 * (`server/dist/main.js`, build it first) in turns round after round, each on a fresh database
 * of one throwaway cluster with PostgreSQL's default durability; then each build's medians and
 * this build's share of the other's (the budget: at least 90%).
 *
 * `--counts`: what each load cost per run, counted around it (a quiet 11 s before and after, so
 * that every backend has reported): statements (`pg_stat_statements`, loaded for it), transactions,
 * writing ones, WAL flushes and bytes, and the CPU of the service's processes and of PostgreSQL's,
 * read as the load ends (the pools close idle connections, and an ended backend's CPU is gone);
 * then the statements each build sent most, per run.
 */
const { values, positionals } = parseArgs({
  options: { rounds: { type: 'string' }, counts: { type: 'boolean' } },
  allowPositionals: true,
});
const rounds = Number(values.rounds ?? 3);
if (positionals.length !== 1 || !(Number.isInteger(rounds) && rounds > 0)) {
  console.error(
    'Usage: node --import tsx bench/compare-instances.ts [--rounds 3] [--counts] <main.js of another build>',
  );
  process.exit(2);
}
/** Longer than PostgreSQL's PGSTAT_IDLE_INTERVAL (10 s), after which an idle backend reports its counts. */
const SETTLED_MS = 11_000;

const builds = [
  { name: 'other build', main: resolve(positionals[0]!), results: [] as InstancesResult[] },
  { name: 'this build', main: undefined, results: [] as InstancesResult[] },
];
const workDir = mkdtempSync(join(tmpdir(), 'forge-compare-instances-'));
const cluster = await startCluster({ durable: true });
let admin = new pg.Client({ connectionString: cluster.url });
await admin.connect();
try {
  if (values.counts) {
    await admin.query(`ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`);
    await admin.end();
    cluster.stop();
    cluster.start();
    admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query('CREATE EXTENSION pg_stat_statements');
  }
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
        values.counts
          ? (phase, instances, load) => counted(`${build.name}, ${phase}`, database, instances, load)
          : undefined,
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

/** Runs `load` and prints what it cost per run (`--counts`). */
async function counted(
  label: string,
  database: string,
  instances: ServiceProcess[],
  load: () => Promise<number>,
): Promise<number> {
  const serviceCpu = () => instances.reduce((sum, instance) => sum + (instance.cpuMs() ?? 0), 0);
  await new Promise((resolve) => setTimeout(resolve, SETTLED_MS));
  const before = await counts(database);
  const cpuBefore = { service: serviceCpu(), postgres: postgresCpuMs(before.postmaster) };
  await admin.query('SELECT pg_stat_statements_reset()');
  const runsPerSecond = await load();
  const cpuAfter = { service: serviceCpu(), postgres: postgresCpuMs(before.postmaster) };
  const { rows: statements } = await admin.query<{ query: string; calls: string; ms: number }>(
    `SELECT query, calls, total_exec_time AS ms FROM pg_stat_statements
     WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1) ORDER BY calls DESC`,
    [database],
  );
  await new Promise((resolve) => setTimeout(resolve, SETTLED_MS));
  const after = await counts(database);
  const runs = runsPerSecond * INSTANCE_SECONDS;
  const per = (n: number) => (n / runs).toFixed(2);
  let postgresCpu = 0;
  for (const [pid, used] of cpuAfter.postgres) postgresCpu += used - (cpuBefore.postgres.get(pid) ?? 0);
  const calls = statements.reduce((sum, s) => sum + Number(s.calls), 0);
  console.log(
    `  ${label}: ${runs} runs; per run ${per(calls)} statements, ${per(after.commits - before.commits)} transactions, ` +
      `${per(after.writeCommits - before.writeCommits)} writing, ${per(after.walSyncs - before.walSyncs)} WAL flushes, ` +
      `${Math.round((after.walBytes - before.walBytes) / runs)} WAL bytes, CPU ${Math.round(((cpuAfter.service - cpuBefore.service) * 1000) / runs)} µs service + ` +
      `${Math.round((postgresCpu * 1000) / runs)} µs PostgreSQL (load average ${loadavg()[0]!.toFixed(1)})`,
  );
  for (const s of statements.slice(0, 10))
    console.log(
      `    ${per(Number(s.calls))} × ${Math.round((s.ms * 1000) / Number(s.calls))} µs: ${s.query.replace(/\s+/g, ' ').slice(0, 150)}`,
    );
  return runsPerSecond;
}

/** The database's transactions so far, the transaction ids handed out, the cluster's WAL flushes and position, and its postmaster. */
async function counts(database: string) {
  const { rows } = await admin.query<{
    commits: string;
    next_xid: string;
    wal_syncs: string;
    lsn: string;
    pid: number;
  }>(
    `SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = $1) AS commits,
       pg_snapshot_xmax(pg_current_snapshot())::text AS next_xid, (SELECT wal_sync FROM pg_stat_wal) AS wal_syncs,
       pg_current_wal_lsn() - '0/0' AS lsn, pg_backend_pid() AS pid`,
    [database],
  );
  const row = rows[0]!;
  return {
    commits: Number(row.commits),
    writeCommits: Number(row.next_xid),
    walSyncs: Number(row.wal_syncs),
    walBytes: Number(row.lsn),
    postmaster: Number(statFields(row.pid)![1]),
  };
}
