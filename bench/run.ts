import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  benchBrowser,
  HEAP_CYCLES,
  LIST_ROWS,
  LIST_RUNS,
  OPEN_RUNS,
  SCROLL_RUNS,
  SCROLL_STEPS,
  TOGGLE_RUNS,
} from './browser.js';
import { benchInstancesOnPostgres, instancesRow } from './instances.js';
import { backendRows, benchBackends, EXECUTIONS } from './logs.js';
import { newApiKey } from './service.js';
import { buildFloor, cdnBundlePath, sizesOf } from './size.js';
import { round1 } from './stats.js';
import { type Row, table } from './table.js';
import { benchThroughput, INSTALLS, THROUGHPUT_CONNECTIONS, THROUGHPUT_SECONDS } from './throughput.js';

/**
 * `npm run bench`: builds the package, then measures size, speed and memory on this machine and
 * writes bench/results.json. See bench/README.md for what each number means.
 */
const RESULTS_FILE = fileURLToPath(new URL('results.json', import.meta.url));
/** The budget for the CDN bundle (issue 7). */
const CDN_GZIP_BUDGET = 16_000;
const OPEN_GOAL_MS = 100;
const OPEN_ROUND_TRIPS_GOAL = 2;
/**
 * "No leak": 200 opens may leave behind what V8's optimised code and the browser's capped
 * performance-entry buffers grow by (about 0.1 MB), not what a leaked open holds (its dialog,
 * loaded workflow and listeners: kilobytes each, so megabytes over 200 opens).
 */
const HEAP_GROWTH_GOAL = 256 * 1024;
/**
 * "Smooth" scrolling: at least 95% of frames within 20 ms. Frames come on the display's 16.7 ms
 * beat (60 Hz), so an interval is about 16.7 ms, or 33.3 ms when a frame was missed; 20 ms leaves
 * room for timer jitter, not for a missed frame.
 */
const SCROLL_P95_GOAL_MS = 20;
/** At most 1% of a scroll's frames dropped: one in five seconds of flinging goes unnoticed, a run of them does not. */
const SCROLL_DROPPED_GOAL = Math.floor(SCROLL_STEPS / 100);

const step = (text: string) => console.log(`\n▸ ${text}`);
const began = performance.now();

/** Timings only mean something on an otherwise idle machine; say so when it is not. */
function warnIfBusy(): void {
  const [load] = loadavg();
  const cores = availableParallelism();
  if (load! > cores / 2) {
    console.warn(
      `\nWarning: this machine is busy (load average ${load!.toFixed(1)} on ${cores} cores); timings will be slower and noisier than on an idle machine. Run the bench when nothing else is running.`,
    );
  }
}

warnIfBusy();

step('Building the package (npm run build)');
try {
  execFileSync('npm', ['run', 'build'], { stdio: 'inherit', cwd: fileURLToPath(new URL('..', import.meta.url)) });
} catch {
  console.error(
    '\nnpm run build failed (its output is above); the bench measures the built package, so fix the build first.',
  );
  process.exit(1);
}

step('Sizes: the CDN bundle and the floor bundle (lit, @lit/task, decodeJwt)');
const cdnFile = cdnBundlePath();
const cdn = sizesOf(cdnFile);
const floor = sizesOf(buildFloor());

const workDir = mkdtempSync(join(tmpdir(), 'forge-bench-'));
const apiKey = newApiKey();
try {
  step(`Store on SQLite and PostgreSQL: logs paging at ${EXECUTIONS.toLocaleString('en')} executions, webhook runs`);
  const backends = await benchBackends(workDir, apiKey);
  step('Instances: webhook runs on PostgreSQL with one service instance, then two on the same database');
  const instances = await benchInstancesOnPostgres(workDir, apiKey);
  step(
    `Service throughput: GET /workflow and GET /setup for ${THROUGHPUT_SECONDS} s each, ${INSTALLS.toLocaleString('en')} installs, ${THROUGHPUT_CONNECTIONS} connections`,
  );
  const throughput = await benchThroughput(workDir, apiKey);
  step(
    `Browser: ${OPEN_RUNS} opens, ${HEAP_CYCLES} open/close cycles, ${LIST_RUNS} lists of ${LIST_ROWS}, ${TOGGLE_RUNS} toggles, ${SCROLL_RUNS} scrolls`,
  );
  const web = await benchBrowser(workDir, apiKey, cdnFile);

  const results = {
    cdnGzipBytes: cdn.gzipBytes,
    cdnBrotliBytes: cdn.brotliBytes,
    cdnMinBytes: cdn.minBytes,
    floorGzipBytes: floor.gzipBytes,
    openToInteractiveMs: web.openToInteractiveMs,
    openRequests: web.openRequests,
    list1000RenderMs: web.list1000RenderMs,
    toggleFeedbackMs: web.toggleFeedbackMs,
    list1000ScrollFrameP95Ms: web.list1000ScrollFrameP95Ms,
    list1000ScrollDroppedFrames: web.list1000ScrollDroppedFrames,
    heapGrowthBytesAfter200Opens: web.heapGrowthBytesAfter200Opens,
    backends,
    instances,
    workflowListRps: throughput.workflowList.rps,
    workflowListP99Ms: throughput.workflowList.p99Ms,
    setupRps: throughput.setup.rps,
    setupP99Ms: throughput.setup.p99Ms,
    installRps: throughput.install.rps,
    installP99Ms: throughput.install.p99Ms,
  };
  writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);

  const bytes = (n: number) => `${n.toLocaleString('en')} B`;
  const ms = (n: number) => `${n} ms`;
  const rows: Row[] = [
    ['cdnGzipBytes', bytes(cdn.gzipBytes), `≤ ${bytes(CDN_GZIP_BUDGET)}`, cdn.gzipBytes <= CDN_GZIP_BUDGET],
    ['cdnBrotliBytes', bytes(cdn.brotliBytes)],
    ['cdnMinBytes', bytes(cdn.minBytes)],
    [
      'floorGzipBytes',
      bytes(floor.gzipBytes),
      `CDN bundle = ${(cdn.gzipBytes / floor.gzipBytes).toFixed(2)}× floor (+${bytes(cdn.gzipBytes - floor.gzipBytes)})`,
    ],
    [
      'openToInteractiveMs',
      ms(web.openToInteractiveMs),
      `< ${ms(OPEN_GOAL_MS)} (first open of a page, with new connections and CORS preflights: ${ms(web.openColdMs)})`,
      web.openToInteractiveMs < OPEN_GOAL_MS,
    ],
    [
      'openRequests',
      String(web.openRequests),
      `${web.openRoundTrips} round trips; goal ≤ ${OPEN_ROUND_TRIPS_GOAL}`,
      web.openRoundTrips <= OPEN_ROUND_TRIPS_GOAL,
    ],
    ['list1000RenderMs', ms(web.list1000RenderMs)],
    [
      'list1000ScrollFrameP95Ms',
      ms(web.list1000ScrollFrameP95Ms),
      `smooth: ≤ ${ms(SCROLL_P95_GOAL_MS)} (frame budget ${ms(round1(web.frameBudgetMs))}; ${SCROLL_STEPS} frames over ${web.scrollDistancePx.toLocaleString('en')} px)`,
      web.list1000ScrollFrameP95Ms <= SCROLL_P95_GOAL_MS,
    ],
    [
      'list1000ScrollDroppedFrames',
      String(web.list1000ScrollDroppedFrames),
      `frames over ${ms(round1(2 * web.frameBudgetMs))} of ${SCROLL_STEPS}; goal ≤ ${SCROLL_DROPPED_GOAL}`,
      web.list1000ScrollDroppedFrames <= SCROLL_DROPPED_GOAL,
    ],
    [
      'toggleFeedbackMs',
      ms(web.toggleFeedbackMs),
      `optimistic: shown before the service confirms (${ms(web.toggleConfirmedMs)})`,
      web.toggleFeedbackMs < web.toggleConfirmedMs,
    ],
    [
      'heapGrowthBytesAfter200Opens',
      bytes(web.heapGrowthBytesAfter200Opens),
      `no leak: < ${bytes(HEAP_GROWTH_GOAL)}`,
      web.heapGrowthBytesAfter200Opens < HEAP_GROWTH_GOAL,
    ],
    ...backendRows(backends),
    instancesRow(instances),
    ...(
      [
        ['workflowList', throughput.workflowList, 'GET /workflow'],
        ['setup', throughput.setup, 'GET /setup?workflowId='],
        ['install', throughput.install, `POST /workflow/:id/install, ${INSTALLS.toLocaleString('en')} users`],
      ] as const
    ).map(
      ([key, { rps, p99Ms }, what]): Row => [
        `${key}Rps, ${key}P99Ms`,
        `${rps} req/s, p99 ${ms(p99Ms)}`,
        `${what}, user token, ${THROUGHPUT_CONNECTIONS} connections`,
      ],
    ),
  ];
  console.log(`\n${table(rows)}\n`);
  warnIfBusy();
  console.log(`Wrote ${RESULTS_FILE} in ${((performance.now() - began) / 1000).toFixed(0)} s.`);
  // The size budget is the one hard limit; the goals are reported for the reader to judge.
  if (cdn.gzipBytes > CDN_GZIP_BUDGET) {
    console.error(`The CDN bundle is over its budget of ${bytes(CDN_GZIP_BUDGET)} gzip.`);
    process.exitCode = 1;
  }
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
