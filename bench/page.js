// The bench's side of the page: measurements that must be taken inside the browser, called by
// browser.ts through page.evaluate. Everything goes through the elements' public API (attributes,
// show()/hide(), events) and their documented parts.

const TIMEOUT_MS = 15_000;

/** The CDN bundle's `loadIntegrationList()`: the page's own entry, imported again (the same module). */
const loadIntegrationList = async () =>
  (await import(document.querySelector('script[src^="/cdn/"]').src)).loadIntegrationList();

/**
 * Resolves with the first truthy answer of `check`, asked now and after every DOM change under
 * `root`; on timeout, the error says what was awaited and what `root` showed instead.
 */
function whenReady(root, check, what) {
  return new Promise((resolve, reject) => {
    const done = (value) => {
      observer.disconnect();
      clearTimeout(timer);
      resolve(value);
    };
    const observer = new MutationObserver(() => {
      const value = check();
      if (value) done(value);
    });
    const timer = setTimeout(() => {
      observer.disconnect();
      const shown = root.textContent.replace(/\s+/g, ' ').trim().slice(0, 300);
      reject(new Error(`Timed out after ${TIMEOUT_MS} ms waiting for ${what}; the page showed: ${shown}`));
    }, TIMEOUT_MS);
    observer.observe(root, { subtree: true, childList: true, attributes: true, characterData: true });
    const value = check();
    if (value) done(value);
  });
}

/** A task after the next frame: the frame that paints what is in the DOM now has been produced. */
const afterNextPaint = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve)));

/**
 * Answers the intervals between `count + 1` consecutive animation frames, calling `onFrame(i)`
 * in the first `count` of them. The intervals are between the frames' begin times, so the i-th
 * is how long the frame in which `onFrame(i)` ran took to be produced, whatever it made it do.
 */
function frameIntervals(count, onFrame = () => {}) {
  return new Promise((resolve) => {
    const intervals = [];
    let last;
    const frame = (now) => {
      if (last !== undefined) intervals.push(now - last);
      last = now;
      if (intervals.length === count) return resolve(intervals);
      onFrame(intervals.length);
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  });
}

/** The modal's first settings field once a user could focus it: in the open dialog, enabled, shown. */
function focusableField(modal) {
  const root = modal.shadowRoot;
  const field = root?.querySelector('dialog[open] [part~="input"]');
  if (!field || field.disabled || !field.checkVisibility()) return undefined;
  field.focus();
  return root.activeElement === field ? field : undefined;
}

/** A `<forge-config-modal>` on the page, once the CDN entry has registered it from its chunk. */
async function newModal({ apiBase, tokenUrl, workflowId }) {
  await customElements.whenDefined('forge-config-modal');
  const modal = document.createElement('forge-config-modal');
  modal.setAttribute('api-base', apiBase);
  modal.setAttribute('token-url', tokenUrl);
  modal.setAttribute('workflow-id', workflowId);
  document.body.append(modal);
  return modal;
}

/** Opens the modal, waits until its first field is focusable, closes it; answers the time and requests. */
async function openOnce(modal) {
  performance.clearResourceTimings();
  const started = performance.now();
  const shown = modal.show();
  await whenReady(modal.shadowRoot ?? modal, () => focusableField(modal), 'the first settings field');
  const interactive = performance.now();
  await shown;
  await modal.hide();
  // Resource entries appear once a response has ended; the ones that ended before `interactive` are all in.
  const requests = performance
    .getEntriesByType('resource')
    .filter((entry) => entry.startTime >= started && entry.responseEnd <= interactive);
  return { ms: interactive - started, requests: requests.length, roundTrips: roundTrips(requests) };
}

/** The longest chain of requests where each starts only after the one before it answered. */
function roundTrips(entries) {
  const sorted = [...entries].sort((a, b) => a.startTime - b.startTime);
  const depth = [];
  sorted.forEach((entry, i) => {
    depth[i] =
      1 + Math.max(0, ...sorted.slice(0, i).map((before, j) => (before.responseEnd <= entry.startTime ? depth[j] : 0)));
  });
  return Math.max(0, ...depth);
}

/** JS heap in use after forced collections, once pending work (timers, microtasks) has run out. */
async function settledHeap() {
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    window.gc();
  }
  return performance.memory.usedJSHeapSize;
}

/** A `<forge-workflow-list>` appended to the page. */
function newList({ apiBase, tokenUrl }) {
  const list = document.createElement('forge-workflow-list');
  list.setAttribute('api-base', apiBase);
  list.setAttribute('token-url', tokenUrl);
  document.body.append(list);
  return list;
}

window.bench = {
  /**
   * The first open of the modal on a page that has not loaded its chunk (browser.ts turns off the
   * idle prefetch for this page): a click on the list's Configure button, to the modal's first
   * field being focusable. The chunk's download, parse and registration are inside the time.
   */
  async coldOpen(config) {
    const list = newList(config);
    const root = list.shadowRoot;
    const button = await whenReady(
      root,
      () => root.querySelector('[part~="configure-button"]'),
      'the Configure button',
    );
    // The user clicks a list that is shown: its icons have arrived (they would otherwise share
    // the service with the open).
    await Promise.all([...root.querySelectorAll('img')].map((img) => img.decode().catch(() => undefined)));
    if (customElements.get('forge-config-modal'))
      throw new Error('The modal was loaded before the open, so this open would not be cold.');
    performance.clearResourceTimings();
    const started = performance.now();
    button.click();
    const modal = await whenReady(root, () => root.querySelector('forge-config-modal'), 'the modal element');
    await customElements.whenDefined('forge-config-modal');
    await whenReady(modal.shadowRoot, () => focusableField(modal), 'the first settings field');
    const interactive = performance.now();
    const requests = performance
      .getEntriesByType('resource')
      .filter((entry) => entry.startTime >= started && entry.responseEnd <= interactive);
    list.remove();
    return { ms: interactive - started, requests: requests.length, roundTrips: roundTrips(requests) };
  },

  async openToInteractive({ runs, ...config }) {
    const modal = await newModal(config);
    const samples = [];
    for (let i = 0; i < runs; i++) samples.push(await openOnce(modal));
    modal.remove();
    return samples;
  },

  async heapGrowth({ warmUp, cycles, ...config }) {
    const modal = await newModal(config);
    // Warm-up opens fill what is meant to stay (compiled code, templates, the preflight cache).
    for (let i = 0; i < warmUp; i++) await openOnce(modal);
    performance.clearResourceTimings();
    const before = await settledHeap();
    for (let i = 0; i < cycles; i++) await openOnce(modal);
    performance.clearResourceTimings();
    const after = await settledHeap();
    modal.remove();
    return after - before;
  },

  /**
   * A list connected to the page until its `rows` rows are shown and laid out (those near the
   * viewport, for a long list): the whole time, and the element's own part of it, from the
   * service's last answer (the workflows, the user's choices) having arrived.
   */
  async renderList({ apiBase, tokenUrl, rows }) {
    performance.clearResourceTimings();
    const started = performance.now();
    const list = newList({ apiBase, tokenUrl });
    // A long list renders the rows near the viewport; each says it is one of `rows`.
    const loaded = () => {
      const shown = list.shadowRoot.querySelectorAll('[part~="row"]');
      return shown.length === rows || shown[0]?.getAttribute('aria-setsize') === String(rows);
    };
    await whenReady(list.shadowRoot, loaded, `${rows} rows`);
    list.shadowRoot.querySelector('[part~="list"]').getBoundingClientRect();
    const done = performance.now();
    const answered = Math.max(
      ...performance
        .getEntriesByType('resource')
        .filter(({ name }) => name.startsWith(apiBase))
        .map((entry) => entry.responseEnd),
    );
    return { ms: done - started, renderMs: done - answered };
  },

  /**
   * A `<forge-integration-list>` of `apps` apps appended to a page that has its chunk already, as
   * renderList measures the list: answers the time from appending, and from the service's last
   * answer, to the cards shown (those near the viewport, for a grid this long, each saying it is
   * one of `apps`) and the grid laid out.
   */
  async renderApps({ apiBase, tokenUrl, apps }) {
    await loadIntegrationList();
    performance.clearResourceTimings();
    const started = performance.now();
    const grid = document.createElement('forge-integration-list');
    grid.setAttribute('api-base', apiBase);
    grid.setAttribute('token-url', tokenUrl);
    document.body.append(grid);
    const loaded = () => {
      const shown = grid.shadowRoot.querySelectorAll('[part~="app"]');
      return shown.length === apps || shown[0]?.getAttribute('aria-setsize') === String(apps);
    };
    await whenReady(grid.shadowRoot, loaded, `${apps} apps`);
    grid.shadowRoot.querySelector('[part~="grid"]').getBoundingClientRect();
    const done = performance.now();
    const answered = Math.max(
      ...performance
        .getEntriesByType('resource')
        .filter(({ name }) => name.startsWith(apiBase))
        .map((entry) => entry.responseEnd),
    );
    grid.remove();
    return { ms: done - started, renderMs: done - answered };
  },

  /**
   * Scrolls the page (the list has no scroll container of its own: it grows with its rows) from
   * top to bottom in `steps` equal steps, one per animation frame, as a fast fling would; answers
   * the frame intervals while scrolling, the idle interval before (the display's frame budget)
   * and the distance scrolled.
   */
  async scrollList({ steps }) {
    window.scrollTo(0, 0);
    const idle = await frameIntervals(30);
    const budgetMs = idle.sort((a, b) => a - b)[idle.length >> 1];
    // Rows not yet shown count at an estimated height until they are, so the page height moves
    // while it scrolls: each step aims at a share of its current height.
    const bottom = () => document.documentElement.scrollHeight - window.innerHeight;
    const intervals = await frameIntervals(steps, (i) => window.scrollTo(0, (bottom() * (i + 1)) / steps));
    const rows = document.querySelector('forge-workflow-list').shadowRoot.querySelectorAll('[part~="row"]');
    if (rows[rows.length - 1].getBoundingClientRect().top >= window.innerHeight) {
      throw new Error(`The scroll stopped at ${window.scrollY} px, above the last row.`);
    }
    return { intervals, budgetMs, distance: window.scrollY };
  },

  /**
   * Arms the measurement of the next click on the list's first switch: from the click's input
   * timestamp to the painted frame that shows the switch in its new state, and to the service's
   * confirmation (forge-toggle), so clicks never overlap and the feedback is seen to come first.
   */
  armToggle() {
    const list = document.querySelector('forge-workflow-list');
    const toggle = list.shadowRoot.querySelector('[part~="switch"]');
    const wanted = !toggle.checked;
    const confirmed = new Promise((resolve) => list.addEventListener('forge-toggle', resolve, { once: true }));
    window.benchToggle = new Promise((resolve, reject) => {
      toggle.addEventListener(
        'click',
        async (event) => {
          try {
            await whenReady(list.shadowRoot, () => toggle.checked === wanted, 'the switch to move');
            await afterNextPaint();
            const shownMs = performance.now() - event.timeStamp;
            const { detail } = await confirmed;
            if (detail.active !== wanted) throw new Error(`The service confirmed ${detail.active}, not ${wanted}.`);
            resolve({ shownMs, confirmedMs: performance.now() - event.timeStamp });
          } catch (error) {
            reject(error);
          }
        },
        { once: true },
      );
    });
  },

  toggleResult: () => window.benchToggle,
};
