import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { Store } from '../server/store/store.js';
import { API_PREFIX, newApiKey, spawnService } from './service.js';

/**
 * `node --import tsx bench/garbage.ts [--rounds 2] [--answers 150000] [--workflow] [<main.js> …]`:
 * a count, not a timing, for a machine whose speed moves (issues 28 and 29): the bytes of
 * garbage each answer makes. Each build (default this one's `server/dist/main.js`) runs with
 * `--trace-gc`, metrics and the request log on, and answers `GET /healthz` (with `--workflow`,
 * `GET /workflow` with the API key) 20,000 times to warm up, then `--answers` times over 10
 * connections; what its scavenges freed of the young generation, divided by the answers, is
 * printed with the scavenges, the CPU time per answer and the load average. The builds take
 * turns, round after round. The same build gives the same count within a percent or so at any
 * load; CPU time does not.
 */
const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = args.indexOf(name);
  return at === -1 ? fallback : args.splice(at, 2)[1]!;
};
const rounds = Number(option('--rounds', '2'));
const answers = Number(option('--answers', '150000'));
const workflow = args.includes('--workflow');
const mains = args.filter((arg) => !arg.startsWith('--')).map((path) => resolve(path));
const builds = mains.length ? mains : [undefined];
const workDir = mkdtempSync(join(tmpdir(), 'forge-garbage-'));
const db = join(workDir, 'garbage.db');
await (await Store.open(db)).close();
const apiKey = newApiKey();
// `[Scavenge] 12.3 (14.0) -> 11.1 (15.0) MB`: the heap before and after, in MB.
const scavenge = /Scavenge(?: \(interleaved\))? ([\d.]+) \([\d.]+\) -> ([\d.]+)/g;
try {
  for (let round = 1; round <= rounds; round++) {
    for (const [i, main] of builds.entries()) {
      const logFile = join(workDir, `round${round}-build${i}.log`);
      const service = await spawnService({ db, apiKey, main, logFile, nodeOptions: ['--trace-gc'] });
      try {
        const base = service.loopbackUrl;
        const request = workflow
          ? { url: `${base}${API_PREFIX}/workflow`, headers: { Authorization: `Bearer ${apiKey}` } }
          : { url: `${base}/healthz` };
        await autocannon({ ...request, connections: 10, amount: 20_000 });
        const before = readFileSync(logFile, 'utf8').length;
        const cpuBefore = service.cpuMs()!;
        const result = await autocannon({ ...request, connections: 10, amount: answers });
        const cpuMs = service.cpuMs()! - cpuBefore;
        let freedMb = 0;
        let scavenges = 0;
        for (const [, from, to] of readFileSync(logFile, 'utf8').slice(before).matchAll(scavenge)) {
          scavenges++;
          freedMb += Number(from) - Number(to);
        }
        const total = result.requests.total;
        const name = main ? main.split('/').slice(-4, -3)[0] : 'this build';
        console.log(
          `round ${round}, ${name}: ${total} answers (${result.non2xx} not 2xx), ${scavenges} scavenges, ${Math.round((freedMb * 2 ** 20) / total)} B of garbage per answer, CPU ${((cpuMs * 1000) / total).toFixed(1)} µs per answer (load ${loadavg()[0]!.toFixed(1)})`,
        );
      } finally {
        await service.stop();
      }
    }
  }
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
