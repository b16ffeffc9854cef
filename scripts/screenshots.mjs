// Makes the README's pictures of the list's run health (docs/img/health-*.png) from a page of
// its own: the local service and sandbox in this process (in-memory database), a user whose
// workflows really ran, the CDN build in Chromium. Run `npm run build` first.
//   node scripts/screenshots.mjs   (then, to keep the repository small: pngquant --ext .png --force docs/img/health-*.png)
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { chromium } from 'playwright-core';
import { startService } from '../server/dist/app.js';
import { startSandbox } from '../server/dist/sandbox.js';

const CDN = new URL('../dist/cdn/', import.meta.url);
const OUT = new URL('../docs/img/', import.meta.url);
const STRIPE_TO_SLACK = '64b14ff1704e5bc1057506db';
const SUBSCRIBERS_TO_SHEETS = '64b13345c5ce3aeb4f592a6f';
const DAILY_SUMMARY = '64b1aa96c495decefd1bbaa5';

const page = (theme) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<script type="module" src="/forge-embed.min.js"></script>
<style>body { margin: 0; padding: 16px; background: ${theme === 'dark' ? '#0f0f12' : '#f3f4f6'}; }</style></head>
<body><forge-workflow-list api-base="__API__" token-url="/token" theme="${theme}"></forge-workflow-list></body></html>`;

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
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(payload),
  });
};
const sheets = await install(SUBSCRIBERS_TO_SHEETS);
await run(sheets, { email: 'grace@example.com', name: 'Grace Hopper' }); // no spreadsheet id yet: fails
await api(
  'PATCH',
  `/workflow/${sheets}/variables/b44f2839-f946-40e6-95b1-59f2f096d154`,
  { spreadsheetId: 'subs' },
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
    res
      .writeHead(200, { 'Content-Type': 'application/json' })
      .end(JSON.stringify(await api('GET', `/user/${userId}/token`)));
  } else if (url.pathname.endsWith('.js')) {
    res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(readFileSync(new URL(`.${url.pathname}`, CDN)));
  } else {
    const theme = url.searchParams.get('theme') ?? 'light';
    res.writeHead(200, { 'Content-Type': 'text/html' }).end(page(theme).replace('__API__', service.url));
  }
});

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
  await service.close();
  await sandbox.close();
  host.close();
}
console.log('docs/img/health-*.png written');
