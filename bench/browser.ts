import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { startSandbox } from '../server/sandbox.js';
import { seedListUser, seedModalUser, writeAppsCatalog, writeLargeCatalog } from './fixtures.js';
import { type BenchHost, startHost } from './host.js';
import { spawnService } from './service.js';
import { median, percentile, round1 } from './stats.js';

export const OPEN_RUNS = 30;
/** First opens, each on a fresh page whose modal chunk is not loaded yet. */
export const COLD_OPEN_RUNS = 5;
export const HEAP_CYCLES = 1000;
/** Opens before the first heap reading, enough for the JIT and the browser's caches to settle. */
const HEAP_WARM_UP = 50;
export const LIST_ROWS = 1000;
export const LIST_RUNS = 10;
export const BIG_LIST_ROWS = 10_000;
export const BIG_LIST_RUNS = 3;
export const TOGGLE_RUNS = 20;
export const APPS = 200;
export const APPS_RUNS = 10;
/** Scrolls of the whole list, each on a fresh page, so rows come into view for the first time. */
export const SCROLL_RUNS = 3;
/** Frames per scroll from top to bottom: about 5 s at 60 Hz, a fast fling through 1,000 rows. */
export const SCROLL_STEPS = 300;

/** Debian's `chromium-headless-shell`: Chromium's engine without the browser's own window UI. */
const HEADLESS_SHELL = '/usr/bin/chromium-headless-shell';

/**
 * The bench's pages run in Chromium's headless shell where it is installed (the build Playwright
 * runs headless by default), else in Chromium. Every measurement takes a fresh page in a context
 * of its own, and the full browser builds each such window's own UI while the page loads and
 * renders: a traced `<forge-integration-list>` page saw some 240 `chrome://` loads of the
 * omnibox's WebUI in a renderer of its own, during the interval measured, on the same 2 cores.
 * No page a user keeps open pays that; the shell runs the same Blink and V8 without it.
 */
export const BENCH_BROWSER =
  process.env.CHROMIUM_PATH ?? (existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : '/usr/bin/chromium');

export interface BrowserResult {
  openToInteractiveMs: number;
  /** The first open of a page: new connections and CORS preflights included. */
  openColdMs: number;
  /** The first open through the list on a page that has not loaded the modal's chunk (median). */
  firstOpenWithChunkMs: number;
  firstOpenWithChunkRequests: number;
  firstOpenWithChunkRoundTrips: number;
  openRequests: number;
  /** Longest chain of requests that waited on one another during an open. */
  openRoundTrips: number;
  heapGrowthBytesAfter1000Opens: number;
  /** From the service's last answer to 1,000 rows shown and laid out: the element's own time. */
  list1000RenderMs: number;
  /** From connecting the list to the same point: the service's answers and the network included. */
  list1000LoadMs: number;
  list10000RenderMs: number;
  list10000LoadMs: number;
  /** From the service's last answer to a `<forge-integration-list>` of 200 apps shown and laid out. */
  apps200RenderMs: number;
  /** From connecting it to the same point: the service's answers and the network included. */
  apps200LoadMs: number;
  toggleFeedbackMs: number;
  /** From the click to the service's confirmation, for comparison. */
  toggleConfirmedMs: number;
  /** 95th percentile frame interval while scrolling the list from top to bottom (median of the scrolls). */
  list1000ScrollFrameP95Ms: number;
  /** Frames that took over twice the display's frame budget during one scroll (median of the scrolls). */
  list1000ScrollDroppedFrames: number;
  /** The display's frame interval with nothing to do: the frame budget. */
  frameBudgetMs: number;
  /** How far one scroll went, in CSS pixels. */
  scrollDistancePx: number;
}

/** Headless Chromium as every browser measurement runs it. */
export const launchBenchBrowser = () =>
  chromium.launch({
    executablePath: BENCH_BROWSER,
    args: [
      '--no-sandbox',
      '--js-flags=--expose-gc',
      '--enable-precise-memory-info',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });

/** The measurements taken in headless Chromium, against the service on loopback, through the CDN bundle. */
export async function benchBrowser(workDir: string, apiKey: string, cdnBundle: string): Promise<BrowserResult> {
  const host = await startHost(cdnBundle);
  const browser = await launchBenchBrowser();
  try {
    return {
      ...(await modalPhase(workDir, apiKey, host, browser)),
      ...(await listPhase(workDir, apiKey, host, browser)),
      ...(await bigListPhase(workDir, apiKey, host, browser)),
      ...(await appsPhase(workDir, apiKey, host, browser)),
    };
  } finally {
    await browser.close();
    await host.close();
  }
}

async function modalPhase(workDir: string, apiKey: string, host: BenchHost, browser: Browser) {
  const db = join(workDir, 'modal.db');
  const { userId, parentId } = await seedModalUser(db);
  // The workflow's Slack channel offers the channels the app lists: the sandbox answers that read,
  // as it does in the demo, so the modal opens as a user's does (no failed read on the page).
  const sandbox = await startSandbox({ port: 0 });
  const service = await spawnService({
    db,
    apiKey,
    allowedOrigins: [host.origin],
    env: { FORGE_SANDBOX_URL: sandbox.url },
  });
  host.service = service;
  const config = { apiBase: service.url, tokenUrl: host.tokenUrl(userId), workflowId: parentId };
  try {
    const opens = await onPage(browser, host, (page) =>
      page.evaluate((args) => (window as unknown as BenchWindow).bench.openToInteractive(args), {
        ...config,
        runs: OPEN_RUNS,
      }),
    );
    const cold: OpenSample[] = [];
    for (let i = 0; i < COLD_OPEN_RUNS; i++) {
      cold.push(
        await onPage(
          browser,
          host,
          (page) => page.evaluate((args) => (window as unknown as BenchWindow).bench.coldOpen(args), config),
          { idlePrefetch: false },
        ),
      );
    }
    const heapGrowth = await onPage(browser, host, (page) =>
      page.evaluate((args) => (window as unknown as BenchWindow).bench.heapGrowth(args), {
        ...config,
        warmUp: HEAP_WARM_UP,
        cycles: HEAP_CYCLES,
      }),
    );
    return {
      openToInteractiveMs: round1(median(opens.map((o) => o.ms))),
      openColdMs: round1(opens[0]!.ms),
      openRequests: median(opens.map((o) => o.requests)),
      openRoundTrips: median(opens.map((o) => o.roundTrips)),
      firstOpenWithChunkMs: round1(median(cold.map((o) => o.ms))),
      firstOpenWithChunkRequests: median(cold.map((o) => o.requests)),
      firstOpenWithChunkRoundTrips: median(cold.map((o) => o.roundTrips)),
      heapGrowthBytesAfter1000Opens: heapGrowth,
    };
  } finally {
    await service.stop();
    await sandbox.close();
  }
}

/** A service whose catalog offers `rows` workflows, a tenth of them installed by its one user. */
async function listService(workDir: string, apiKey: string, host: BenchHost, rows: number) {
  const catalog = writeLargeCatalog(workDir, rows);
  const db = join(workDir, `list-${rows}.db`);
  const userId = await seedListUser(db, catalog);
  const service = await spawnService({ db, apiKey, catalog, allowedOrigins: [host.origin] });
  host.service = service;
  return { service, config: { apiBase: service.url, tokenUrl: host.tokenUrl(userId), rows } };
}

/** `runs` lists rendered, each on a fresh page: every run connects a list as a page that just loaded would. */
async function renderLists(browser: Browser, host: BenchHost, config: ListConfig, runs: number) {
  const renders: ListSample[] = [];
  for (let i = 0; i < runs; i++) {
    renders.push(
      await onPage(browser, host, (page) =>
        page.evaluate((args) => (window as unknown as BenchWindow).bench.renderList(args), config),
      ),
    );
  }
  return { renderMs: round1(median(renders.map((r) => r.renderMs))), ms: round1(median(renders.map((r) => r.ms))) };
}

async function listPhase(workDir: string, apiKey: string, host: BenchHost, browser: Browser) {
  const { service, config } = await listService(workDir, apiKey, host, LIST_ROWS);
  try {
    const renders = await renderLists(browser, host, config, LIST_RUNS);
    const toggles = await onPage(browser, host, async (page) => {
      await page.evaluate((args) => (window as unknown as BenchWindow).bench.renderList(args), config);
      const toggle = page.locator('forge-workflow-list [part~="switch"]').first();
      const times: ToggleSample[] = [];
      for (let i = 0; i < TOGGLE_RUNS; i++) {
        await page.evaluate(() => (window as unknown as BenchWindow).bench.armToggle());
        await toggle.click();
        times.push(await page.evaluate(() => (window as unknown as BenchWindow).bench.toggleResult()));
      }
      return times;
    });
    const scrolls: ScrollSample[] = [];
    for (let i = 0; i < SCROLL_RUNS; i++) {
      scrolls.push(
        await onPage(browser, host, async (page) => {
          await page.evaluate((args) => (window as unknown as BenchWindow).bench.renderList(args), config);
          return page.evaluate((steps) => (window as unknown as BenchWindow).bench.scrollList({ steps }), SCROLL_STEPS);
        }),
      );
    }
    const frameBudgetMs = median(scrolls.map((s) => s.budgetMs));
    return {
      list1000RenderMs: renders.renderMs,
      list1000LoadMs: renders.ms,
      toggleFeedbackMs: round1(median(toggles.map((t) => t.shownMs))),
      toggleConfirmedMs: round1(median(toggles.map((t) => t.confirmedMs))),
      list1000ScrollFrameP95Ms: round1(median(scrolls.map((s) => percentile(s.intervals, 95)))),
      list1000ScrollDroppedFrames: median(
        scrolls.map((s) => s.intervals.filter((interval) => interval > 2 * frameBudgetMs).length),
      ),
      frameBudgetMs,
      scrollDistancePx: Math.round(median(scrolls.map((s) => s.distance))),
    };
  } finally {
    await service.stop();
  }
}

async function bigListPhase(workDir: string, apiKey: string, host: BenchHost, browser: Browser) {
  const { service, config } = await listService(workDir, apiKey, host, BIG_LIST_ROWS);
  try {
    const renders = await renderLists(browser, host, config, BIG_LIST_RUNS);
    return { list10000RenderMs: renders.renderMs, list10000LoadMs: renders.ms };
  } finally {
    await service.stop();
  }
}

/** `<forge-integration-list>` over a catalog of APPS apps, measured as the list is (renderLists). */
export async function appsPhase(workDir: string, apiKey: string, host: BenchHost, browser: Browser) {
  const { service, config } = await appsService(workDir, apiKey, [host]);
  try {
    const renders: ListSample[] = [];
    for (let i = 0; i < APPS_RUNS; i++) renders.push(await renderAppsOnce(browser, host, config));
    return {
      apps200RenderMs: round1(median(renders.map((r) => r.renderMs))),
      apps200LoadMs: round1(median(renders.map((r) => r.ms))),
    };
  } finally {
    await service.stop();
  }
}

/**
 * The service of the apps phase (APPS apps, the user of `seedListUser`), behind every host given:
 * `bench/apps.ts` serves two builds of the elements from two hosts to one service.
 */
export async function appsService(workDir: string, apiKey: string, hosts: BenchHost[]) {
  const catalog = writeAppsCatalog(workDir, APPS);
  const db = join(workDir, 'apps.db');
  const userId = await seedListUser(db, catalog);
  const service = await spawnService({ db, apiKey, catalog, allowedOrigins: hosts.map((host) => host.origin) });
  for (const host of hosts) host.service = service;
  return {
    service,
    config: { apiBase: service.url, tokenUrl: (host: BenchHost) => host.tokenUrl(userId), apps: APPS },
  };
}

/** One fresh page of the apps phase: the grid appended, until its cards are shown and laid out. */
export const renderAppsOnce = (
  browser: Browser,
  host: BenchHost,
  { tokenUrl, ...config }: Awaited<ReturnType<typeof appsService>>['config'],
) =>
  onPage(browser, host, (page) =>
    page.evaluate((args) => (window as unknown as BenchWindow).bench.renderApps(args), {
      ...config,
      tokenUrl: tokenUrl(host),
    }),
  );

/**
 * Runs `work` on a freshly loaded bench page; any error the page throws fails the bench. With
 * `idlePrefetch: false` the page never sees the browser idle, so nothing loads the modal's chunk
 * before the bench opens it.
 */
async function onPage<T>(
  browser: Browser,
  host: BenchHost,
  work: (page: Page) => Promise<T>,
  { idlePrefetch = true } = {},
): Promise<T> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  // A string, not a function: tsx's transform would wrap a function in helpers the page lacks.
  if (!idlePrefetch) await context.addInitScript({ content: 'window.requestIdleCallback = () => 0;' });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`${message.text()} (${message.location().url})`);
  });
  try {
    await page.goto(host.origin);
    await page.waitForFunction(() => 'bench' in window && customElements.get('forge-workflow-list'));
    const result = await work(page);
    if (errors.length > 0) throw new Error(`The bench page reported errors:\n  ${errors.join('\n  ')}`);
    return result;
  } finally {
    await context.close();
  }
}

interface ListConfig {
  apiBase: string;
  tokenUrl: string;
  rows: number;
}

interface ListSample {
  ms: number;
  renderMs: number;
}

interface ToggleSample {
  shownMs: number;
  confirmedMs: number;
}

interface ScrollSample {
  /** One frame interval per scroll step. */
  intervals: number[];
  budgetMs: number;
  distance: number;
}

interface OpenSample {
  ms: number;
  requests: number;
  roundTrips: number;
}

/**
 * What bench/page.js puts on the page's window. Typed here, not added to the global Window, so
 * no other code in the project sees it; the casts inside page.evaluate vanish when compiled.
 */
interface BenchWindow {
  bench: BenchApi;
}

interface BenchApi {
  coldOpen(args: { apiBase: string; tokenUrl: string }): Promise<OpenSample>;
  openToInteractive(args: {
    apiBase: string;
    tokenUrl: string;
    workflowId: string;
    runs: number;
  }): Promise<OpenSample[]>;
  heapGrowth(args: {
    apiBase: string;
    tokenUrl: string;
    workflowId: string;
    warmUp: number;
    cycles: number;
  }): Promise<number>;
  renderList(args: ListConfig): Promise<ListSample>;
  renderApps(args: { apiBase: string; tokenUrl: string; apps: number }): Promise<ListSample>;
  scrollList(args: { steps: number }): Promise<ScrollSample>;
  armToggle(): void;
  toggleResult(): Promise<ToggleSample>;
}
