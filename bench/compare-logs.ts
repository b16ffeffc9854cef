import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { startCluster } from '../scripts/pg-cluster.mjs';
import { Store } from '../server/store/store.js';
import {
  type Answers,
  CONNECTIONS,
  cannonLoad,
  FIRST_PAGES,
  LIMIT,
  type LoadRequest,
  load,
  newDatabase,
  postgresCpuMs,
  seedLogs,
  statFields,
  timedRequest,
} from './logs.js';
import { API_PREFIX, newApiKey, type ServiceProcess, spawnService } from './service.js';
import { median, percentile, round1, round2 } from './stats.js';

/**
 * `npm run build`, then `node --import tsx bench/compare-logs.ts [--backend postgres|sqlite]
 * [--rounds 4] [--seconds 4] [--this <main.js>] <main.js of another build>`: the logs row of
 * `npm run bench` (pages 1–10 of a child with 100,000 runs, limit 30, and `/healthz`, by the same
 * client, 10 connections) on two builds of the service, both started once on one seeded database
 * and loaded in turns, the order turned every round. Each turn prints its p99, its answers per
 * second, the service's CPU time per answer and, on PostgreSQL, the CPU time per answer of all of
 * PostgreSQL's processes and the statements it ran per answer (pg_stat_statements), with the load
 * average; the end prints each build's medians, the pages' p99 as a ratio to `/healthz`'s of the
 * same round. The requests come from a process of their own, as in bench/logs.ts.
 *
 * With `--generators`, one build (`<main.js>`) and two load generators in turns instead: the
 * bench's (autocannon, `cannonLoad`) and the one it replaced (Node's own client, `timedRequest`),
 * each turn also printing the generator's own CPU time per answer and the bytes the service read
 * and wrote per answer (/proc/<pid>/io: the requests, the answers and the request log's lines),
 * which must agree between the generators for them to measure the same thing.
 */
const CLIENT = '--compare-logs-client';

interface Target {
  name: string;
  url: string;
  pid: number;
}

type Generator = 'autocannon' | 'node-http';

interface ClientJob {
  targets: Target[];
  generators: Generator[];
  childId: string;
  apiKey: string;
  rounds: number;
  seconds: number;
  /** The seeded database on PostgreSQL, to read pg_stat_statements and its processes' CPU. */
  postgres?: string;
}

interface Turn {
  /** The build, and with `--generators` the load generator. */
  build: string;
  read: 'pages' | 'healthz';
  load: number;
  answers: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  serviceCpuUs: number;
  /** The service's context switches per answer (waits for I/O, and preemptions by other processes). */
  serviceSwitches: number;
  /** The load generator's own CPU time per answer. */
  clientCpuUs: number;
  /** Bytes per answer as the generator counted them (autocannon: head and body; Node's client: none). */
  clientBytes?: number;
  /** Bytes the service read and wrote per answer (/proc/<pid>/io rchar, wchar). */
  serviceReadBytes: number;
  serviceWrittenBytes: number;
  /** The service's read and write calls per answer (/proc/<pid>/io syscr, syscw): a write the socket takes in parts costs more than one. */
  serviceReadCalls: number;
  serviceWriteCalls: number;
  postgresCpuUs?: number;
  postgresSwitches?: number;
  statements?: number;
  /** The statements that ran most in the turn: calls per answer and mean time in PostgreSQL, in µs. */
  top?: Array<{ query: string; perAnswer: number; meanUs: number }>;
}

if (process.argv[2] === CLIENT) {
  await runClient(JSON.parse(process.argv[3]!) as ClientJob);
} else {
  await runHarness();
}

async function runHarness(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: string) => {
    const at = args.indexOf(name);
    return at === -1 ? fallback : args.splice(at, 2)[1]!;
  };
  const backend = option('--backend', 'postgres');
  const rounds = Number(option('--rounds', '4'));
  const seconds = Number(option('--seconds', '4'));
  const thisMain = args.includes('--this') ? resolve(option('--this', '')) : undefined;
  const generatorsAt = args.indexOf('--generators');
  const generators: Generator[] = generatorsAt === -1 ? ['autocannon'] : ['node-http', 'autocannon'];
  if (generatorsAt !== -1) args.splice(generatorsAt, 1);
  const [other] = args.map((path) => resolve(path));
  if (!other || !(rounds > 0) || !(seconds > 0) || (backend !== 'postgres' && backend !== 'sqlite')) {
    console.error(
      'Usage: node --import tsx bench/compare-logs.ts [--backend postgres|sqlite] [--rounds 4] [--seconds 4] [--this <main.js>] <main.js of another build>\n   or: node --import tsx bench/compare-logs.ts --generators [--backend postgres|sqlite] [--rounds 4] [--seconds 4] <main.js>',
    );
    process.exit(2);
  }
  const workDir = mkdtempSync(join(tmpdir(), 'forge-compare-logs-'));
  const cluster = backend === 'postgres' ? await startCluster({ durable: true }) : undefined;
  const services: ServiceProcess[] = [];
  try {
    let location = join(workDir, 'logs.db');
    if (cluster) {
      // pg_stat_statements counts the statements of each turn; it loads only at the server's start.
      const admin = await Store.open(cluster.url);
      try {
        await sql`ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`.execute(admin.db);
      } finally {
        await admin.close();
      }
      cluster.stop();
      cluster.start();
      location = await newDatabase(cluster.url, 'bench_logs');
      const store = await Store.open(location);
      try {
        await sql`CREATE EXTENSION pg_stat_statements`.execute(store.db);
      } finally {
        await store.close();
      }
    }
    const started = performance.now();
    const { childId } = await seedLogs(location);
    console.log(`seeded in ${round1((performance.now() - started) / 1000)} s (load ${loadavg()[0]!.toFixed(1)})`);
    const apiKey = newApiKey();
    const env = { FORGE_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') };
    // Both builds on the one database: they share its schema (no build here adds a schema step).
    // Each service's request log to a file, as bench/logs.ts has them.
    for (const [i, main] of (generators.length > 1 ? [other] : [other, thisMain]).entries()) {
      services.push(
        await spawnService({ db: location, apiKey, env, main, logFile: join(workDir, `service-${i}.log`) }),
      );
    }
    const job: ClientJob = {
      targets: services.map((service, i) => ({
        name: i === 0 ? 'other' : 'this',
        url: service.loopbackUrl,
        pid: service.pid,
      })),
      generators,
      childId,
      apiKey,
      rounds,
      seconds,
      postgres: cluster ? location : undefined,
    };
    const turns = await runClientApart(job);
    summarise(turns, rounds, seconds, other, backend);
  } finally {
    await Promise.all(services.map((service) => service.stop()));
    cluster?.remove();
    rmSync(workDir, { recursive: true, force: true });
  }
}

function runClientApart(job: ClientJob): Promise<Turn[]> {
  const child = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), CLIENT, JSON.stringify(job)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const turns: Turn[] = [];
  let pending = '';
  child.stdout.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    let end = pending.indexOf('\n');
    while (end !== -1) {
      const turn = JSON.parse(pending.slice(0, end)) as Turn;
      pending = pending.slice(end + 1);
      turns.push(turn);
      console.log(describe(turn));
      end = pending.indexOf('\n');
    }
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(turns) : reject(new Error(`The client exited with code ${code}`)),
    );
  });
}

function describe(turn: Turn): string {
  const postgres =
    turn.postgresCpuUs === undefined
      ? ''
      : `, PostgreSQL ${turn.postgresCpuUs} µs/answer, ${turn.postgresSwitches} switches/answer, ${turn.statements} statements/answer${turn.top?.length ? ` [${turn.top.map((t) => `${t.perAnswer}× ${t.meanUs} µs ${t.query}`).join('; ')}]` : ''}`;
  const bytes = `${turn.clientBytes === undefined ? '' : `${turn.clientBytes} B/answer received, `}service read ${turn.serviceReadBytes} B in ${turn.serviceReadCalls} calls, wrote ${turn.serviceWrittenBytes} B in ${turn.serviceWriteCalls} calls per answer`;
  return `${turn.build} ${turn.read}: ${turn.answers} answers, p50 ${turn.p50Ms} ms, p99 ${turn.p99Ms} ms, ${turn.rps}/s, service ${turn.serviceCpuUs} µs/answer, ${turn.serviceSwitches} switches/answer, generator ${turn.clientCpuUs} µs/answer, ${bytes}${postgres} (load ${turn.load})`;
}

function summarise(turns: Turn[], rounds: number, seconds: number, other: string, backend: string): void {
  console.log(`\n${backend}, ${rounds} rounds of ${seconds} s, ${CONNECTIONS} connections; other = ${other}`);
  for (const build of new Set(turns.map((t) => t.build))) {
    const of = (read: string) => turns.filter((t) => t.build === build && t.read === read);
    const pages = of('pages');
    const healthz = of('healthz');
    const ratios = pages.map((p, i) => round2(p.p99Ms / healthz[i]!.p99Ms));
    const figure = (values: number[]) => `median ${round2(median(values))}, min ${round2(Math.min(...values))}`;
    const lines = [
      `${build}: pages p99 ÷ /healthz p99 per round ${ratios.join(', ')} (median ${round2(median(ratios))})`,
      `  pages p99 ms ${figure(pages.map((t) => t.p99Ms))}; /healthz p99 ms ${figure(healthz.map((t) => t.p99Ms))}`,
      `  pages/s ${figure(pages.map((t) => t.rps))}; /healthz/s ${figure(healthz.map((t) => t.rps))}`,
      `  service µs/page ${figure(pages.map((t) => t.serviceCpuUs))}; µs/healthz ${figure(healthz.map((t) => t.serviceCpuUs))}`,
      `  service switches/page ${figure(pages.map((t) => t.serviceSwitches))}; /healthz ${figure(healthz.map((t) => t.serviceSwitches))}`,
      `  generator µs/page ${figure(pages.map((t) => t.clientCpuUs))}; µs/healthz ${figure(healthz.map((t) => t.clientCpuUs))}`,
      `  service bytes read/written per page ${figure(pages.map((t) => t.serviceReadBytes))} / ${figure(pages.map((t) => t.serviceWrittenBytes))}; per /healthz ${figure(healthz.map((t) => t.serviceReadBytes))} / ${figure(healthz.map((t) => t.serviceWrittenBytes))}`,
      `  service read/write calls per page ${figure(pages.map((t) => t.serviceReadCalls))} / ${figure(pages.map((t) => t.serviceWriteCalls))}; per /healthz ${figure(healthz.map((t) => t.serviceReadCalls))} / ${figure(healthz.map((t) => t.serviceWriteCalls))}`,
    ];
    if (pages[0]?.postgresCpuUs !== undefined) {
      lines.push(
        `  PostgreSQL µs/page ${figure(pages.map((t) => t.postgresCpuUs!))}; switches/page ${figure(pages.map((t) => t.postgresSwitches!))}; statements/page ${figure(pages.map((t) => t.statements!))}`,
      );
    }
    console.log(lines.join('\n'));
  }
}

// The client: its own process, its own heap (bench/logs.ts, measureLogsApart).

async function runClient(job: ClientJob): Promise<void> {
  // Node's own client, the logs rows' generator before autocannon, kept to compare the two.
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS * job.targets.length });
  const postgres = job.postgres ? await postgresProbe(job.postgres) : undefined;
  try {
    const reads = job.targets.flatMap((target) => {
      const { hostname, port } = new URL(target.url);
      const page = (n: number): LoadRequest => ({
        path: `${API_PREFIX}/workflow/${job.childId}/logs?page=${n}&limit=${LIMIT}`,
        headers: { Authorization: `Bearer ${job.apiKey}` },
      });
      const healthz: LoadRequest = { path: '/healthz', headers: {} };
      return job.generators.flatMap((generator) => {
        const send = (requests: LoadRequest[]) =>
          generator === 'autocannon'
            ? (ms: number) => cannonLoad(target.url, requests, ms)
            : async (ms: number): Promise<Answers> => {
                const started = performance.now();
                const samples = await load(
                  (n) => timedRequest(agent, { host: hostname, port: Number(port), ...requests[n]! }),
                  ms,
                  requests.map((_, n) => n),
                );
                return {
                  ms: samples.map((s) => s.ms),
                  bytes: Number.NaN,
                  seconds: (performance.now() - started) / 1000,
                };
              };
        const build = job.generators.length > 1 ? `${target.name} ${generator}` : target.name;
        return [
          { target, build, read: 'pages' as const, send: send(FIRST_PAGES.map(page)) },
          { target, build, read: 'healthz' as const, send: send([healthz]) },
        ];
      });
    });
    // A service just started needs some thousand answers before its code is compiled hot (bench/logs.ts).
    for (const { send } of reads) await send(3_000);
    for (let round = 0; round < job.rounds; round++) {
      for (const { target, build, read, send } of round % 2 === 0 ? reads : [...reads].reverse()) {
        await send(1_000);
        const loadAverage = round1(loadavg()[0]!);
        const before = {
          service: cpuMsOf(target.pid),
          switches: switchesOf(target.pid),
          io: ioOf(target.pid),
          client: process.cpuUsage(),
          postgres: await postgres?.snapshot(),
        };
        const { ms, bytes, seconds } = await send(job.seconds * 1_000);
        const clientUs = process.cpuUsage(before.client);
        const serviceMs = cpuMsOf(target.pid) - before.service;
        const switches = switchesOf(target.pid) - before.switches;
        const io = ioOf(target.pid);
        const answers = ms.length;
        const turn: Turn = {
          build,
          read,
          load: loadAverage,
          answers,
          rps: Math.round(answers / seconds),
          p50Ms: round1(percentile(ms, 50)),
          p99Ms: round1(percentile(ms, 99)),
          serviceCpuUs: Math.round((serviceMs * 1000) / answers),
          serviceSwitches: round2(switches / answers),
          clientCpuUs: Math.round((clientUs.user + clientUs.system) / answers),
          ...(Number.isNaN(bytes) ? {} : { clientBytes: Math.round(bytes / answers) }),
          serviceReadBytes: Math.round((io.read - before.io.read) / answers),
          serviceWrittenBytes: Math.round((io.written - before.io.written) / answers),
          serviceReadCalls: round2((io.readCalls - before.io.readCalls) / answers),
          serviceWriteCalls: round2((io.writeCalls - before.io.writeCalls) / answers),
        };
        if (postgres && before.postgres) Object.assign(turn, await postgres.since(before.postgres, answers));
        process.stdout.write(`${JSON.stringify(turn)}\n`);
      }
    }
  } finally {
    agent.destroy();
    await postgres?.end();
  }
}

/** Bytes the process has read and written so far through read and write calls, sockets and files alike. */
function ioOf(pid: number): { read: number; written: number; readCalls: number; writeCalls: number } {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(io)![1]);
  return { read: field('rchar'), written: field('wchar'), readCalls: field('syscr'), writeCalls: field('syscw') };
}

interface PostgresSnapshot {
  cpuMs: Map<number, number>;
  switches: Map<number, number>;
  statements: Map<string, { query: string; calls: number; totalMs: number }>;
}

/** What PostgreSQL did between two snapshots: its processes' CPU time and its statements. */
async function postgresProbe(url: string) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const postmaster = Number(statFields(rows[0]!.pid)![1]);
  const statements = async () => {
    const result = await client.query<{ queryid: string; query: string; calls: string; total_exec_time: number }>(
      `SELECT queryid::text, query, calls, total_exec_time FROM pg_stat_statements
        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    return new Map(
      result.rows.map((r) => [r.queryid, { query: r.query, calls: Number(r.calls), totalMs: r.total_exec_time }]),
    );
  };
  return {
    async snapshot(): Promise<PostgresSnapshot> {
      const cpuMs = postgresCpuMs(postmaster);
      return {
        statements: await statements(),
        cpuMs,
        switches: new Map([...cpuMs.keys()].map((pid) => [pid, switchesOf(pid)])),
      };
    },
    async since(before: PostgresSnapshot, answers: number) {
      const cpuMs = postgresCpuMs(postmaster);
      const after = await statements();
      let cpu = 0;
      for (const [pid, used] of cpuMs) cpu += used - (before.cpuMs.get(pid) ?? 0);
      // Only processes there at both readings: the pool closes connections idle for 10 s and opens new ones.
      let switches = 0;
      for (const [pid, was] of before.switches) if (cpuMs.has(pid)) switches += switchesOf(pid) - was;
      const ran = [...after]
        .map(([id, s]) => {
          const was = before.statements.get(id);
          return { query: s.query, calls: s.calls - (was?.calls ?? 0), ms: s.totalMs - (was?.totalMs ?? 0) };
        })
        // The probe's own reading of pg_stat_statements, once a turn.
        .filter((s) => s.calls > 0 && !s.query.includes('pg_stat_statements'));
      ran.sort((a, b) => b.calls - a.calls);
      return {
        postgresCpuUs: Math.round((cpu * 1000) / answers),
        postgresSwitches: round2(switches / answers),
        statements: round2(ran.reduce((sum, s) => sum + s.calls, 0) / answers),
        top: ran.slice(0, 2).map((s) => ({
          query: s.query.replace(/\s+/g, ' ').slice(0, 60),
          perAnswer: round2(s.calls / answers),
          meanUs: Math.round((s.ms * 1000) / s.calls),
        })),
      };
    },
    end: () => client.end(),
  };
}

/** CPU time the process has used so far, in ms. */
function cpuMsOf(pid: number): number {
  const fields = statFields(pid)!;
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Context switches of the process so far, voluntary and not (0 when it is gone). */
function switchesOf(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return [...status.matchAll(/ctxt_switches:\s+(\d+)/g)].reduce((sum, [, n]) => sum + Number(n), 0);
  } catch {
    return 0;
  }
}
