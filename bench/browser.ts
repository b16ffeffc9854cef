import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { seedListUser, seedModalUser, writeLargeCatalog } from './fixtures.js';
import { type BenchHost, startHost } from './host.js';
import { spawnService } from './service.js';
import { median, percentile, round1 } from './stats.js';

export const OPEN_RUNS = 30;
export const HEAP_CYCLES = 200;
/** Opens before the first heap reading, enough for the JIT and the browser's caches to settle. */
const HEAP_WARM_UP = 50;
export const LIST_ROWS = 1000;
export const LIST_RUNS = 10;
export const TOGGLE_RUNS = 20;
/** Scrolls of the whole list, each on a fresh page, so rows come into view for the first time. */
export const SCROLL_RUNS = 3;
/** Frames per scroll from top to bottom: about 5 s at 60 Hz, a fast fling through 1,000 rows. */
export const SCROLL_STEPS = 300;

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface BrowserResult {
  openToInteractiveMs: number;
  /** The first open of a page: new connections and CORS preflights included. */
  openColdMs: number;
  openRequests: number;
  /** Longest chain of requests that waited on one another during an open. */
  openRoundTrips: number;
  heapGrowthBytesAfter200Opens: number;
  list1000RenderMs: number;
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

/** The measurements taken in headless Chromium, against the service on loopback, through the CDN bundle. */
export async function benchBrowser(workDir: string, apiKey: string, cdnBundle: string): Promise<BrowserResult> {
  const host = await startHost(cdnBundle);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
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
  try {
    return {
      ...(await modalPhase(workDir, apiKey, host, browser)),
      ...(await listPhase(workDir, apiKey, host, browser)),
    };
  } finally {
    await browser.close();
    await host.close();
  }
}

async function modalPhase(workDir: string, apiKey: string, host: BenchHost, browser: Browser) {
  const db = join(workDir, 'modal.db');
  const { userId, parentId } = await seedModalUser(db);
  const service = await spawnService({ db, apiKey, allowedOrigins: [host.origin] });
  host.service = service;
  const config = { apiBase: service.url, tokenUrl: host.tokenUrl(userId), workflowId: parentId };
  try {
    const opens = await onPage(browser, host, (page) =>
      page.evaluate((args) => (window as unknown as BenchWindow).bench.openToInteractive(args), {
        ...config,
        runs: OPEN_RUNS,
      }),
    );
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
      heapGrowthBytesAfter200Opens: heapGrowth,
    };
  } finally {
    await service.stop();
  }
}

async function listPhase(workDir: string, apiKey: string, host: BenchHost, browser: Browser) {
  const catalog = writeLargeCatalog(workDir, LIST_ROWS);
  const db = join(workDir, 'list.db');
  const userId = await seedListUser(db, catalog);
  const service = await spawnService({ db, apiKey, catalog, allowedOrigins: [host.origin] });
  host.service = service;
  const config = { apiBase: service.url, tokenUrl: host.tokenUrl(userId), rows: LIST_ROWS };
  try {
    const renders: number[] = [];
    // A fresh page each time: every run connects a list as a page that just loaded would.
    for (let i = 0; i < LIST_RUNS; i++) {
      renders.push(
        await onPage(browser, host, (page) =>
          page.evaluate((args) => (window as unknown as BenchWindow).bench.renderList(args), config),
        ),
      );
    }
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
      list1000RenderMs: round1(median(renders)),
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

/** Runs `work` on a freshly loaded bench page; any error the page throws fails the bench. */
async function onPage<T>(browser: Browser, host: BenchHost, work: (page: Page) => Promise<T>): Promise<T> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`${message.text()} (${message.location().url})`);
  });
  try {
    await page.goto(host.origin);
    await page.waitForFunction(() => 'bench' in window && customElements.get('forge-config-modal'));
    const result = await work(page);
    if (errors.length > 0) throw new Error(`The bench page reported errors:\n  ${errors.join('\n  ')}`);
    return result;
  } finally {
    await context.close();
  }
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
  renderList(args: { apiBase: string; tokenUrl: string; rows: number }): Promise<number>;
  scrollList(args: { steps: number }): Promise<ScrollSample>;
  armToggle(): void;
  toggleResult(): Promise<ToggleSample>;
}
