// Runs every test suite (the service's node tests, then the browser tests in every engine) and
// ends with one line `N passed, N failed` over all of them. Exits non-zero when anything failed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const work = mkdtempSync(join(tmpdir(), 'forge-test-'));
const run = (command, args, env = {}) =>
  spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, ...env } }).status ?? 1;

let passed = 0;
let failed = 0;

// The tests load the service, the CDN bundle and the package entries from dist/, so build
// everything first; a type error fails the run.
if (run('npm', ['run', '--silent', 'build']) !== 0) {
  console.error('The build failed; see the errors above.');
  failed++;
}

const serverTests = readdirSync('test/server')
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => join('test/server', f));
const tap = join(work, 'server.tap');
run('node', [
  '--import',
  'tsx',
  '--test',
  '--test-concurrency=1',
  '--test-reporter=spec',
  '--test-reporter-destination=stdout',
  '--test-reporter=tap',
  `--test-reporter-destination=${tap}`,
  ...serverTests,
]);
const tapText = existsSync(tap) ? readFileSync(tap, 'utf8') : '';
const count = (name) => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(tapText)?.[1] ?? 0);
if (!tapText) failed++;
passed += count('pass');
failed += count('fail') + count('cancelled');

// One run for the three engines (Chromium, Firefox, WebKit), side by side: on a 2-core machine
// that took 90 s against 153 s for one run per engine after the other (41 + 63 + 49 s).
const counts = join(work, 'browser.json');
run('npx', ['web-test-runner', '--config', 'web-test-runner.config.mjs'], { WTR_COUNTS_FILE: counts });
if (existsSync(counts)) {
  const browser = JSON.parse(readFileSync(counts, 'utf8'));
  passed += browser.passed;
  failed += browser.failed;
} else {
  console.error('The browser tests did not report; see the output above.');
  failed++;
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
