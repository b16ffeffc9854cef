// Pictures of the elements, from a page of its own: the local service and sandbox in this process
// (in-memory database), users whose workflows really ran, the CDN build. Run `npm run build` first.
//   node scripts/screenshots.mjs
//     the README's pictures of the list's run health (docs/img/health-*.png), in Chromium
//     (then, to keep the repository small: pngquant --ext .png --force docs/img/health-*.png)
//   node scripts/screenshots.mjs --views <dir> [--engines chromium,firefox,webkit] [--only apps,confirm]
//     every view (the list, its Runs view, the integration list and its disconnect confirmation,
//     each step of the modal; --only: those named) in light and dark at 1280 px, light at 768 px,
//     and light and dark at 360 px, in
//     each engine, on a page served with a strict Content-Security-Policy, and one contact sheet
//     per view (<dir>/sheet-<view>.png) that puts the engines and themes side by side
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { remote } from 'webdriverio';
import { startService } from '../server/dist/app.js';
import { startSandbox } from '../server/dist/sandbox.js';
import { startWebKitDriver } from '../test/engines.mjs';

const CDN = new URL('../dist/cdn/', import.meta.url);
const OUT = new URL('../docs/img/', import.meta.url);
const STRIPE_TO_SLACK = '64b14ff1704e5bc1057506db';
const SUBSCRIBERS_TO_SHEETS = '64b13345c5ce3aeb4f592a6f';
const DAILY_SUMMARY = '64b1aa96c495decefd1bbaa5';
const HUBSPOT_TO_SLACK = '64b1d6aac655b8a937b7db20';

const options = parseArgs({
  options: {
    views: { type: 'string' },
    engines: { type: 'string', default: 'chromium,firefox,webkit' },
    only: { type: 'string' },
    // Only the contact sheets, from the pictures already in --views.
    'sheets-only': { type: 'boolean' },
  },
}).values;

const page = (theme) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<script type="module" src="/forge-embed.min.js"></script>
<style>body { margin: 0; padding: 16px; background: ${theme === 'dark' ? '#0f0f12' : '#f3f4f6'}; }</style></head>
<body><forge-workflow-list api-base="__API__" token-url="/token" theme="${theme}"></forge-workflow-list></body></html>`;

/**
 * One view of the --views mode: a page under the demo's strict policy (no inline script or style),
 * whose own script (SCENE) sets the elements up and clicks through to the view, then marks the
 * page ready.
 */
const viewPage = (theme) => `<!doctype html>
<html lang="en" class="${theme}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>forge-embed</title><link rel="stylesheet" href="/scene.css">
<script type="module" src="/forge-embed.min.js"></script><script type="module" src="/scene.js"></script>
</head><body></body></html>`;
const SCENE_CSS = `body { margin: 0; padding: 16px; background: #f3f4f6; font: 15px system-ui, sans-serif; }
.dark body { background: #0f0f12; }`;
const SCENE = `
const params = new URLSearchParams(location.search);
const view = params.get('view');
const theme = document.documentElement.className;
const api = params.get('api');
const until = async (find) => {
  for (let i = 0; i < 200; i++) {
    const found = find();
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the view never showed: ' + view);
};
const make = (tag, attributes) => {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries({ 'api-base': api, theme, ...attributes })) el.setAttribute(name, value);
  document.body.append(el);
  return el;
};
const part = (el, name) => el.shadowRoot && el.shadowRoot.querySelector('[part~="' + name + '"]');
const button = (el, text) =>
  [...el.shadowRoot.querySelectorAll('button')].find((b) => b.textContent.trim() === text && !b.closest('[hidden]'));
await customElements.whenDefined('forge-workflow-list');
if (view === 'list' || view === 'runs') {
  const list = make('forge-workflow-list', { 'token-url': '/token?user=ada' });
  await until(() => part(list, 'health'));
  if (view === 'runs') {
    part(list, 'runs-button').click();
    (await until(() => part(list, 'run') && list.shadowRoot.querySelector('[part~="run"] summary'))).click();
  }
} else if (view === 'apps' || view === 'confirm') {
  const apps = make('forge-integration-list', { 'token-url': '/token?user=ada', 'filter-threshold': '3' });
  await until(() => part(apps, 'app'));
  if (view === 'confirm') {
    (await until(() => part(apps, 'disconnect-button'))).click();
    await until(() => part(apps, 'confirm'));
  }
} else {
  await customElements.whenDefined('forge-config-modal');
  const modal = (attributes) => make('forge-config-modal', attributes);
  if (view === 'connect') {
    const el = modal({ 'token-url': '/token?user=ada', 'workflow-id': '${HUBSPOT_TO_SLACK}' });
    el.show();
    await until(() => part(el, 'integration'));
  } else if (view === 'settings' || view === 'done') {
    const el = modal({ 'token-url': '/token?user=ben', 'workflow-id': '${STRIPE_TO_SLACK}' });
    el.show();
    await until(() => el.shadowRoot.querySelector('form#settings'));
    if (view === 'done') {
      el.shadowRoot.querySelector('button[form="settings"]').click();
      await until(() => button(el, 'Done'));
    }
  } else if (view === 'choose' || view === 'nothing') {
    const el = modal({ 'token-url': '/token?user=ben', integration: 'slack' });
    el.show();
    await until(() => part(el, 'switch'));
    if (view === 'nothing') {
      for (const control of el.shadowRoot.querySelectorAll('[part~="switch"]')) if (control.checked) control.click();
      button(el, 'Continue').click();
      (await until(() => button(el, 'Save'))).click();
      await until(() => button(el, 'Done'));
    }
  }
}
// Animations end, images arrive.
await new Promise((resolve) => setTimeout(resolve, 400));
document.documentElement.dataset.ready = 'true';
`;
const ALL_VIEWS = ['list', 'runs', 'apps', 'confirm', 'connect', 'settings', 'done', 'choose', 'nothing'];
const VIEWS = options.only ? options.only.split(',').filter((view) => ALL_VIEWS.includes(view)) : ALL_VIEWS;
const VARIANTS = [
  { theme: 'light', width: 1280 },
  { theme: 'dark', width: 1280 },
  // A tablet, or a desktop window half the screen wide: grids have fewer columns than at 1280.
  { theme: 'light', width: 768 },
  { theme: 'light', width: 360 },
  { theme: 'dark', width: 360 },
];
const variantName = ({ theme, width }) => `${theme}${width === 1280 ? '' : `-${width}`}`;

const sandbox = await startSandbox({ port: 0 });
const host = createServer();
await new Promise((resolve) => host.listen(0, '127.0.0.1', resolve));
const origin = `http://localhost:${host.address().port}`;
const service = await startService({ port: 0, db: ':memory:', allowedOrigins: [origin], sandboxUrl: sandbox.url });
const api = async (method, path, body, credential = service.apiKey) => {
  const response = await fetch(`${service.url}/forge/2021-12${path}`, {
    method,
    headers: { Authorization: `Bearer ${credential}`, 'Content-Type': 'application/json' },
    body: body && JSON.stringify(body),
  });
  return response.json();
};

// Ada: subscribers copied to a sheet (healthy, one failure earlier today), payments posted to
// Slack with a Slack access she revoked (failing), the daily summary not yet due (never ran).
const { userId } = await api('POST', '/user', { name: 'Ada Lovelace', email: 'ada@example.com' });
const token = (await api('GET', `/user/${userId}/token`)).token;
// Ben: Slack and Stripe connected, payments posted to Slack (the modal's settings, its done view).
const ben = (await api('POST', '/user', { name: 'Ben Okafor', email: 'ben@example.com' })).userId;
for (const integration of ['slack', 'stripe']) {
  await service.store.credentials.save(ben, integration, service.secrets.seal({ kind: 'oauth2', accessToken: 'ok' }));
}
await api('POST', `/workflow/${STRIPE_TO_SLACK}/install`, {}, (await api('GET', `/user/${ben}/token`)).token);
const users = { ada: userId, ben };
for (const [integration, accessToken] of [
  ['slack', 'revoked-by-ada'],
  ['google-sheets', 'sheets-token'],
  ['mailchimp', 'mailchimp-token'],
  ['stripe', 'stripe-token'],
]) {
  await service.store.credentials.save(userId, integration, service.secrets.seal({ kind: 'oauth2', accessToken }));
}
const install = async (parentId, variables) =>
  (await api('POST', `/workflow/${parentId}/install`, variables ? { variables } : {}, token)).workflowId;
const run = async (childId, payload) => {
  const { webhookUrl } = await api('GET', `/workflow/${childId}`);
  await fetch(webhookUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Prefer: 'wait=30' },
    body: JSON.stringify(payload),
  });
};
// The spreadsheet id is required; a blank tab name makes Sheets refuse the first row (a failure).
const sheetsSettings = { spreadsheetId: '1SubscribersSheet0123456789', sheetName: '' };
const sheets = await install(SUBSCRIBERS_TO_SHEETS, { 'b44f2839-f946-40e6-95b1-59f2f096d154': sheetsSettings });
await run(sheets, { email: 'grace@example.com', name: 'Grace Hopper' }); // no tab name yet: fails
await api(
  'PATCH',
  `/workflow/${sheets}/variables/b44f2839-f946-40e6-95b1-59f2f096d154`,
  { ...sheetsSettings, sheetName: 'Subscribers' },
  token,
);
for (const name of ['Alan Turing', 'Katherine Johnson', 'Edsger Dijkstra']) {
  await run(sheets, { email: `${name.split(' ')[0].toLowerCase()}@example.com`, name });
}
const payments = await install(STRIPE_TO_SLACK);
await run(payments, { amount: 120, currency: 'usd', customer: 'cus_123' });
await run(payments, { amount: 640, currency: 'eur', customer: 'cus_456' });
await install(DAILY_SUMMARY);

host.on('request', async (req, res) => {
  const url = new URL(req.url, origin);
  if (url.pathname === '/token') {
    const user = users[url.searchParams.get('user') ?? 'ada'];
    res
      .writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' })
      .end(JSON.stringify(await api('GET', `/user/${user}/token`)));
  } else if (url.pathname === '/scene.js') {
    res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(SCENE);
  } else if (url.pathname === '/scene.css') {
    res.writeHead(200, { 'Content-Type': 'text/css' }).end(SCENE_CSS);
  } else if (url.pathname.startsWith('/shots/')) {
    res.writeHead(200, { 'Content-Type': 'image/png' }).end(readFileSync(join(shots, url.pathname.slice(7))));
  } else if (url.pathname === '/sheet') {
    res.writeHead(200, { 'Content-Type': 'text/html' }).end(sheet(url.searchParams.get('view')));
  } else if (url.pathname.endsWith('.js')) {
    res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(readFileSync(new URL(`.${url.pathname}`, CDN)));
  } else if (url.pathname === '/view') {
    const theme = url.searchParams.get('theme') ?? 'light';
    res
      .writeHead(200, {
        'Content-Type': 'text/html',
        'Content-Security-Policy': `default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: ${service.url}; connect-src 'self' ${service.url}`,
      })
      .end(viewPage(theme));
  } else {
    const theme = url.searchParams.get('theme') ?? 'light';
    res.writeHead(200, { 'Content-Type': 'text/html' }).end(page(theme).replace('__API__', service.url));
  }
});

const shots = options.views ? resolve(options.views) : '';
const engines = options.engines.split(',');

/** A page of one view's pictures: a row per engine, a column per variant. */
function sheet(view) {
  const cells = engines
    .map(
      (engine) =>
        `<div class="engine">${engine}</div>` +
        VARIANTS.map((v) => `<img src="/shots/${view}-${engine}-${variantName(v)}.png" alt="">`).join(''),
    )
    .join('');
  return `<!doctype html><html><head><style>
    body { margin: 0; padding: 8px; background: #888; font: 20px system-ui; }
    .grid { display: grid; grid-template-columns: 90px 1fr 1fr 0.6fr 300px 300px; gap: 8px; align-items: start; }
    img { width: 100%; border: 1px solid #444; }
    .head, .engine { color: #fff; }
  </style><script type="module">
    await Promise.all([...document.images].map((image) => image.decode().catch(() => undefined)));
    document.documentElement.dataset.ready = 'true';
  </script></head><body><div class="grid"><div></div>${VARIANTS.map((v) => `<div class="head">${view} ${variantName(v)}</div>`).join('')}${cells}</div></body></html>`;
}

/** Opens a page in one engine, waits until its scene marks it ready, and takes the picture. */
async function openEngine(engine) {
  if (engine === 'webkit') {
    const port = 4800 + Math.floor(Math.random() * 800);
    const stopDriver = await startWebKitDriver(port);
    const browser = await remote({
      hostname: '127.0.0.1',
      port,
      logLevel: 'error',
      capabilities: {
        browserName: 'MiniBrowser',
        'wdio:enforceWebDriverClassic': true,
        'webkitgtk:browserOptions': {
          binary: process.env.MINIBROWSER_PATH ?? findMiniBrowser(),
          args: ['--automation'],
        },
      },
    });
    return {
      async shoot(url, width, path) {
        await browser.setWindowSize(width, 900);
        // The window's frame takes some of it: make the page itself `width` wide.
        const inner = await browser.execute(() => window.innerWidth);
        if (inner !== width) await browser.setWindowSize(width + (width - inner), 900);
        await browser.url(url);
        await browser.waitUntil(() => browser.execute(() => document.documentElement.dataset.ready === 'true'), {
          timeout: 20_000,
        });
        await browser.saveScreenshot(path);
      },
      async close() {
        await browser.deleteSession();
        stopDriver();
      },
    };
  }
  const browser = await puppeteer.launch(
    engine === 'firefox'
      ? { browser: 'firefox', executablePath: process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr', headless: true }
      : {
          executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
          headless: true,
          args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
        },
  );
  return {
    async shoot(url, width, path, fullPage = false) {
      const tab = await browser.newPage();
      await tab.setViewport({ width, height: 900 });
      await tab.goto(url);
      await tab.waitForFunction(() => document.documentElement.dataset.ready === 'true', { timeout: 20_000 });
      await tab.screenshot({ path, fullPage });
      await tab.close();
    },
    close: () => browser.close(),
  };
}

function findMiniBrowser() {
  const arch = { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu' }[process.arch];
  return `/usr/lib/${arch}/webkit2gtk-4.1/MiniBrowser`;
}

async function shootViews() {
  mkdirSync(shots, { recursive: true });
  for (const engine of options['sheets-only'] ? [] : engines) {
    const browser = await openEngine(engine);
    try {
      for (const view of VIEWS) {
        for (const variant of VARIANTS) {
          const path = join(shots, `${view}-${engine}-${variantName(variant)}.png`);
          const query = new URLSearchParams({ view, theme: variant.theme, api: service.url });
          await browser.shoot(`${origin}/view?${query}`, variant.width, path, view === 'list' || view === 'runs');
        }
      }
    } finally {
      await browser.close();
    }
  }
  const sheets = await openEngine('chromium');
  try {
    for (const view of VIEWS) {
      await sheets.shoot(`${origin}/sheet?view=${view}`, 2400, join(shots, `sheet-${view}.png`), true);
    }
  } finally {
    await sheets.close();
  }
}

async function shootDocs() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  try {
    for (const theme of ['light', 'dark']) {
      for (const width of [1280, 360]) {
        const tab = await browser.newPage({ viewport: { width, height: 900 }, deviceScaleFactor: 1 });
        await tab.goto(`${origin}/?theme=${theme}`);
        const list = tab.locator('forge-workflow-list');
        await list.locator('[part~="health"]').first().waitFor();
        const suffix = `${theme}${width === 360 ? '-360' : ''}`;
        await list.screenshot({ path: new URL(`health-list-${suffix}.png`, OUT).pathname });
        await list.locator('[part~="runs-button"]').first().click();
        await list.locator('[part~="run"]').first().waitFor();
        // The failed run's technical details, open.
        await list.locator('[part~="run"] summary').first().click();
        const row = list.locator('[part~="row"]', { has: tab.locator('[part~="details"]') });
        await row.screenshot({ path: new URL(`health-details-${suffix}.png`, OUT).pathname });
        await tab.close();
      }
    }
  } finally {
    await browser.close();
  }
}

try {
  if (shots) await shootViews();
  else await shootDocs();
} finally {
  await service.close();
  await sandbox.close();
  host.close();
}
console.log(shots ? `${shots}: every view, and sheet-<view>.png` : 'docs/img/health-*.png written');
