import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { benchWebhookRuns, type CommitsPerRun, onPostgres } from './logs.js';
import { newApiKey } from './service.js';
import { median } from './stats.js';
import { benchThroughput, FLOOR_READS, floorRatio, type ThroughputResult } from './throughput.js';

/**
 * `node --import tsx bench/compare-throughput.ts [--rounds 5] <main.js of another build>…`: the
 * throughput bench against other builds of the service (an earlier commit's checkout, built) and
 * this one (`server/dist/main.js`, build it first), taking turns round after round so that all
 * see the same machine; then the median of each figure and its change against the first build
 * named, each read also as a ratio to the floor measured in its run, and webhook runs on SQLite,
 * which must not be lower than the first build's (issue 29; the exit status says). A shared
 * machine drifts by more than the differences worth knowing, so single runs compare nothing.
 * FORGE_LOG=off compares them without the request log.
 *
 * `--postgres` (with `--webhook-only`): webhook runs on PostgreSQL instead, on one throwaway
 * cluster with PostgreSQL's default durability, a fresh database per build and round (issue 27,
 * item 9: not lower than 90% of the first build's). `--commits N` adds what each call cost the
 * database (transactions, writing ones, WAL flushes) and the CPU of the service and of PostgreSQL,
 * under the load (CONNECTIONS at once) and over N calls one by one after it.
 */
const args = process.argv.slice(2);
const roundsAt = args.indexOf('--rounds');
const rounds = roundsAt === -1 ? 5 : Number(args.splice(roundsAt, 2)[1]);
// `--webhook-only`: webhook runs alone, without the reads (a few seconds a turn, not minutes).
const webhookOnlyAt = args.indexOf('--webhook-only');
const webhookOnly = webhookOnlyAt !== -1 && args.splice(webhookOnlyAt, 1).length === 1;
const postgresAt = args.indexOf('--postgres');
const postgres = postgresAt !== -1 && args.splice(postgresAt, 1).length === 1;
const commitsAt = args.indexOf('--commits');
const commitsOver = commitsAt === -1 ? 0 : Number(args.splice(commitsAt, 2)[1]);
const others = args.map((path) => resolve(path));
if (
  others.length === 0 ||
  !others.every((path) => existsSync(path)) ||
  !(rounds > 0) ||
  (postgres && !webhookOnly) ||
  (commitsOver !== 0 && !(postgres && Number.isInteger(commitsOver) && commitsOver > 0))
) {
  console.error(
    'Usage: node --import tsx bench/compare-throughput.ts [--rounds 5] [--webhook-only [--postgres [--commits N]]] <main.js of another build>…',
  );
  process.exit(2);
}
const change = (a: number, b: number) => `${a >= b ? '+' : ''}${((a / b - 1) * 100).toFixed(1)}%`;
const env = process.env.FORGE_LOG ? { FORGE_LOG: process.env.FORGE_LOG } : undefined;
const targets = [...others.map((main) => ({ name: main, main })), { name: 'this build', main: undefined }];
const results = targets.map(() => [] as ThroughputResult[]);
const KEYS = [...FLOOR_READS.map((read) => read.key), 'install'] as const;
/**
 * Webhook runs, per build and round: on SQLite the budget is that none is slower than the first
 * build named; on PostgreSQL that none is below 90% of it (issue 27, item 9).
 */
const webhookRuns = targets.map(() => [] as number[]);
const perRun = targets.map(() => [] as CommitsPerRun[]);
const perRunUnderLoad = targets.map(() => [] as CommitsPerRun[]);
const load = () => `load ${loadavg()[0]!.toFixed(1)}`;

/** Where each turn's webhook database is: a SQLite file in the turn's directory, or a fresh PostgreSQL database. */
let webhookDatabase = async (workDir: string, _name: string) => join(workDir, 'webhook.db');
const compare = async () => {
  for (let round = 0; round < rounds; round++) {
    // Each round starts with the next build, so that a trend in the machine's load favours none.
    for (let turn = 0; turn < targets.length; turn++) {
      const index = (round + turn) % targets.length;
      await compareTurn(round, index);
    }
  }
};
if (postgres)
  await onPostgres(async (database) => {
    webhookDatabase = (_workDir, name) => database(name);
    await compare();
  });
else await compare();

async function compareTurn(round: number, index: number): Promise<void> {
  const workDir = mkdtempSync(join(tmpdir(), 'forge-compare-'));
  try {
    const apiKey = newApiKey();
    const result = webhookOnly
      ? undefined
      : await benchThroughput(workDir, apiKey, { main: targets[index]!.main, env });
    if (result) results[index]!.push(result);
    const loadBefore = load();
    const webhook = await benchWebhookRuns(
      await webhookDatabase(workDir, `bench_webhook_${round + 1}_${index + 1}`),
      apiKey,
      { ...env, FORGE_SECRET_KEY: randomBytes(32).toString('base64') },
      targets[index]!.main,
      commitsOver,
    );
    webhookRuns[index]!.push(webhook.runsPerSecond);
    if (webhook.perRun) perRun[index]!.push(webhook.perRun);
    if (webhook.underLoad) perRunUnderLoad[index]!.push(webhook.underLoad);
    const cost = (run: CommitsPerRun) =>
      `${run.commits} transactions, ${run.writeCommits} writing, ${run.walSyncs} WAL flushes, ${run.ms} ms, CPU ${run.serviceCpuMs} ms service + ${run.postgresCpuMs} ms PostgreSQL`;
    const taken = webhook.underLoad?.takenOnAcceptance;
    const costs = [
      webhook.underLoad &&
        `; per run under the load (${webhook.underLoad.calls} calls): ${cost(webhook.underLoad)}${taken === undefined ? '' : `; jobs taken on acceptance ${taken}, through the queue ${webhook.underLoad.queued}`}`,
      webhook.perRun && `; per run over ${webhook.perRun.calls} calls one by one: ${cost(webhook.perRun)}`,
    ]
      .filter(Boolean)
      .join('');
    const figures = result
      ? [
          `floor ${result.floor.rps} req/s`,
          ...KEYS.map(
            (key) =>
              `${key} ${result[key].rps} req/s p99 ${result[key].p99Ms} ms CPU ${result[key].cpuUsPerRequest} µs/req`,
          ),
        ]
      : [];
    console.log(
      `round ${round + 1}, ${targets[index]!.name}: ${[...figures, `webhook runs ${webhook.runsPerSecond}/s p99 ${webhook.p99Ms} ms (${loadBefore} → ${load()})${costs}`].join(', ')}`,
    );
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

console.log(`\nMedians of ${rounds} rounds${env ? ' (FORGE_LOG=off)' : ''}; changes against ${targets[0]!.name}:`);
for (const [index, target] of targets.entries()) {
  if (webhookOnly) {
    const webhook = median(webhookRuns[index]!);
    console.log(`${target.name}: webhook runs ${webhook}/s (${change(webhook, median(webhookRuns[0]!))})`);
    continue;
  }
  const figures = KEYS.map((key) => {
    const rps = (i: number) => median(results[i]!.map((r) => r[key].rps));
    const cpu = (i: number) => median(results[i]!.map((r) => r[key].cpuUsPerRequest ?? Number.NaN));
    const p99 = median(results[index]!.map((r) => r[key].p99Ms));
    return `${key} ${rps(index)} req/s (${change(rps(index), rps(0))}) p99 ${p99} ms CPU ${cpu(index)} µs/req (${change(cpu(index), cpu(0))})`;
  });
  const ratios = FLOOR_READS.map(
    ({ key }) => `${key} ${median(results[index]!.map((r) => floorRatio(r, key))).toFixed(2)}×`,
  );
  const webhook = median(webhookRuns[index]!);
  console.log(
    `${target.name}: ${figures.join(', ')}; × floor: ${ratios.join(', ')}; webhook runs ${webhook}/s (${change(webhook, median(webhookRuns[0]!))})`,
  );
}
for (const [costs, how] of [
  [perRunUnderLoad, 'under the load'],
  [perRun, 'one by one'],
] as const) {
  for (const [index, target] of targets.entries()) {
    if (costs[index]!.length === 0) continue;
    const of = (key: Exclude<keyof CommitsPerRun, 'calls'>) =>
      Math.round(median(costs[index]!.map((cost) => cost[key])) * 100) / 100;
    console.log(
      `${target.name}: per run ${how} ${of('commits')} transactions, ${of('writeCommits')} writing, ${of('walSyncs')} WAL flushes, ${of('ms')} ms, CPU ${of('serviceCpuMs')} ms service + ${of('postgresCpuMs')} ms PostgreSQL`,
    );
  }
}
const [first, ...rest] = webhookRuns.map((runs) => median(runs));
// On PostgreSQL, issue 27 item 9's budget: at least 90% of the first build's runs.
const floor = postgres ? 0.9 * first! : first!;
const slower = rest.filter((runs) => runs < floor);
console.log(
  postgres
    ? `Webhook runs on PostgreSQL at least 90% of ${targets[0]!.name}'s (issue 27, item 9): ${slower.length === 0 ? 'yes' : 'NO'} (medians ${[first, ...rest].join(', ')}/s)`
    : `Webhook runs not lower than ${targets[0]!.name}'s (issue 29): ${slower.length === 0 ? 'yes' : 'NO'} (medians ${[first, ...rest].join(', ')}/s)`,
);
if (slower.length > 0) process.exitCode = 1;
