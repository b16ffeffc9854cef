import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { newApiKey } from './service.js';
import { median } from './stats.js';
import { benchThroughput, type ThroughputResult } from './throughput.js';

/**
 * `node --import tsx bench/compare-throughput.ts [--rounds 5] <main.js of another build>…`: the
 * throughput bench against other builds of the service (an earlier commit's checkout, built) and
 * this one (`server/dist/main.js`, build it first), taking turns round after round so that all
 * see the same machine; then the median of each figure and its change against the first build
 * named. A shared machine drifts by more than the differences worth knowing, so single runs
 * compare nothing. FORGE_LOG=off compares them without the request log.
 */
const args = process.argv.slice(2);
const roundsAt = args.indexOf('--rounds');
const rounds = roundsAt === -1 ? 5 : Number(args.splice(roundsAt, 2)[1]);
const others = args.map((path) => resolve(path));
if (others.length === 0 || !others.every((path) => existsSync(path)) || !(rounds > 0)) {
  console.error('Usage: node --import tsx bench/compare-throughput.ts [--rounds 5] <main.js of another build>…');
  process.exit(2);
}
const env = process.env.FORGE_LOG ? { FORGE_LOG: process.env.FORGE_LOG } : undefined;
const targets = [...others.map((main) => ({ name: main, main })), { name: 'this build', main: undefined }];
const results = targets.map(() => [] as ThroughputResult[]);
const KEYS = ['workflowList', 'setup', 'install'] as const;

for (let round = 0; round < rounds; round++) {
  // Each round starts with the next build, so that a trend in the machine's load favours none.
  for (let turn = 0; turn < targets.length; turn++) {
    const index = (round + turn) % targets.length;
    const workDir = mkdtempSync(join(tmpdir(), 'forge-compare-'));
    try {
      const result = await benchThroughput(workDir, newApiKey(), { main: targets[index]!.main, env });
      results[index]!.push(result);
      const figures = KEYS.map(
        (key) =>
          `${key} ${result[key].rps} req/s p99 ${result[key].p99Ms} ms CPU ${result[key].cpuUsPerRequest} µs/req`,
      );
      console.log(`round ${round + 1}, ${targets[index]!.name}: ${figures.join(', ')}`);
    } finally {
      rmSync(workDir, { recursive: true, force: true });
    }
  }
}

console.log(`\nMedians of ${rounds} rounds${env ? ' (FORGE_LOG=off)' : ''}; changes against ${targets[0]!.name}:`);
for (const [index, target] of targets.entries()) {
  const figures = KEYS.map((key) => {
    const rps = (i: number) => median(results[i]!.map((r) => r[key].rps));
    const cpu = (i: number) => median(results[i]!.map((r) => r[key].cpuUsPerRequest ?? Number.NaN));
    const p99 = median(results[index]!.map((r) => r[key].p99Ms));
    const change = (a: number, b: number) => `${a >= b ? '+' : ''}${((a / b - 1) * 100).toFixed(1)}%`;
    return `${key} ${rps(index)} req/s (${change(rps(index), rps(0))}) p99 ${p99} ms CPU ${cpu(index)} µs/req (${change(cpu(index), cpu(0))})`;
  });
  console.log(`${target.name}: ${figures.join(', ')}`);
}
