// `apps200RenderMs` alone, without the rest of the bench: the browser phase that renders a
// `<forge-integration-list>` of 200 apps on fresh pages (bench/browser.ts `appsPhase`), for one
// build, or for this build and another in turns, page by page, so that both see the same load.
//
//   npm run build
//   node --import tsx bench/apps.ts [--pages 10]
//   node --import tsx bench/apps.ts --baseline <another build's dist/cdn/forge-embed.min.js> [--pages 20]
//   node --import tsx bench/apps.ts --trace /tmp/apps-trace.json   # a Chromium trace of one more page
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { APPS_RUNS, appsService, launchBenchBrowser, renderAppsOnce } from './browser.js';
import { type BenchHost, startHost } from './host.js';
import { newApiKey } from './service.js';
import { cdnBundlePath } from './size.js';
import { median, percentile, round1 } from './stats.js';

const { values } = parseArgs({
  options: { baseline: { type: 'string' }, pages: { type: 'string' }, trace: { type: 'string' } },
});
const pages = Number(values.pages ?? (values.baseline ? 20 : APPS_RUNS));
if (!Number.isInteger(pages) || pages < 1) {
  console.error(`--pages takes a whole number of pages per build, not ${values.pages}.`);
  process.exit(2);
}

const builds: { name: string; host: BenchHost; renders: number[]; loads: number[] }[] = [];
for (const [name, entry] of [
  ...(values.baseline ? [['baseline', resolve(values.baseline)]] : []),
  ['this build', cdnBundlePath()],
] as const) {
  builds.push({ name, host: await startHost(entry), renders: [], loads: [] });
}
const workDir = mkdtempSync(join(tmpdir(), 'forge-bench-apps-'));
const browser = await launchBenchBrowser();
const { service, config } = await appsService(
  workDir,
  newApiKey(),
  builds.map((build) => build.host),
);
const load = () => loadavg()[0]!.toFixed(1);
const loads: number[] = [];
try {
  for (let i = 0; i < pages; i++) {
    // Which build goes first alternates, so neither always follows the other.
    const turn = i % 2 ? [...builds].reverse() : builds;
    for (const build of turn) {
      const { renderMs, ms } = await renderAppsOnce(browser, build.host, config);
      build.renders.push(renderMs);
      build.loads.push(ms);
      loads.push(loadavg()[0]!);
      console.log(
        `page ${i + 1} ${build.name}: render ${round1(renderMs)} ms, load ${round1(ms)} ms (load average ${load()})`,
      );
    }
  }
  if (values.trace) {
    // One more page of this build under Chromium's tracing, for chrome://tracing or the Performance panel.
    await browser.startTracing(undefined, {
      path: values.trace,
      categories: [
        'devtools.timeline',
        'disabled-by-default-devtools.timeline',
        'blink',
        'v8.execute',
        'disabled-by-default-v8.cpu_profiler',
      ],
    });
    const { renderMs } = await renderAppsOnce(browser, builds.at(-1)!.host, config);
    await browser.stopTracing();
    console.log(`traced page: render ${round1(renderMs)} ms, written to ${values.trace}`);
  }
  console.log(
    `\n${pages} pages per build, load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}:`,
  );
  for (const { name, renders, loads: appendToShown } of builds) {
    console.log(
      `${name}: apps200RenderMs median ${round1(median(renders))} ms (fastest ${round1(Math.min(...renders))}, ` +
        `first quartile ${round1(percentile(renders, 25))}), apps200LoadMs median ${round1(median(appendToShown))} ms`,
    );
  }
} finally {
  await service.stop();
  await browser.close();
  for (const { host } of builds) await host.close();
  rmSync(workDir, { recursive: true, force: true });
}
