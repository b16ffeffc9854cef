import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';
import type { ActivityView, TestEventResult, WorkflowActivity } from '../../demo/activity.js';
import { type RunningDemo, startDemo } from '../../demo/app.js';
import { type RunningService, startService } from '../../server/app.js';
import { DEMO_CATALOG } from '../../server/paths.js';
import { type RunningSandbox, startSandbox } from '../../server/sandbox.js';
import { testDatabase } from './backend.js';

/**
 * The demo's claim: its workflows really run. The service, the sandbox and the demo host app run
 * here as `npm start` runs them; a test event sent through the demo's endpoint shows as an
 * execution in its activity endpoint, and one that fails shows its error log entry, delivered
 * to the demo's error webhook.
 */

let sandbox: RunningSandbox;
let service: RunningService;
let demo: RunningDemo;

before(async () => {
  sandbox = await startSandbox({ port: 0 });
  // The service must allow the demo's origin before the demo starts (its users connect Slack
  // through the OAuth flow, which checks the origin), so the demo's port is chosen first.
  const port = await freePort();
  service = await startService({
    port: 0,
    db: (await testDatabase()).db,
    catalog: DEMO_CATALOG,
    sandboxUrl: sandbox.url,
    allowedOrigins: [`http://localhost:${port}`],
    // As `npm start` does: the demo's error inbox listens on this machine.
    allowPrivateWebhooks: true,
    scheduler: false,
    delivery: { backoff: () => 50 },
  });
  // As `npm start` does: the sandbox's OAuth apps take only the local provider's valid tokens.
  sandbox.useProvider(service.url);
  demo = await startDemo({
    port,
    serviceUrl: service.url,
    apiKey: service.apiKey!,
    sandboxUrl: sandbox.url,
    stateDir: mkdtempSync(join(tmpdir(), 'forge-demo-')),
  });
});
after(async () => {
  await demo?.close();
  await service?.close();
  await sandbox?.close();
});

/** Calls the demo backend as the browser of a signed-in demo user does. */
async function asUser<T>(slug: string | null, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(demo.url + path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      ...(slug ? { Cookie: `orbit_session=${slug}` } : {}),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as T };
}

async function mayasPayments(): Promise<WorkflowActivity> {
  const { status, body } = await asUser<ActivityView>('maya', '/demo/activity');
  assert.equal(status, 200);
  const workflow = body.workflows.find((w) => w.name === 'Post new Stripe payments to Slack');
  assert.ok(workflow, 'Maya starts with Stripe payments to Slack installed');
  return workflow;
}

test('a test event runs the workflow against the sandbox and shows as a finished run', async () => {
  const before = await mayasPayments();
  assert.deepEqual(before.runs, []);
  assert.deepEqual(before.testEvent?.noun, 'a Stripe payment');

  const sent = await asUser<TestEventResult>('maya', '/demo/test-event', { workflowId: before.workflowId });
  assert.equal(sent.status, 200);
  assert.equal(sent.body.finished, true);

  const [run, ...older] = (await mayasPayments()).runs;
  assert.equal(older.length, 0);
  assert.equal(run!.executionId, sent.body.executionId);
  assert.equal(run!.outcome, 'finished');
  assert.deepEqual(
    run!.steps.map((s) => [s.name, s.status]),
    [
      ['Payment received', 'done'],
      ['Settings', 'done'],
      ['Amount is at least the minimum', 'done'],
      ['Post message', 'done'],
    ],
  );
  assert.equal(run!.error, null);
  // The Slack stand-in really got the message, and its answer is the last block's output.
  assert.deepEqual(sandbox.requests.at(-1), {
    method: 'POST',
    path: '/slack/chat.postMessage',
    body: { channel: '#payments', text: 'New payment: 249 usd from cus_RfQ2mN8xVb' },
  });
  assert.match(run!.steps[3]!.output!, /"ok": true/);
});

test('an event that fails shows its error log entry, delivered to the demo’s error webhook', async () => {
  const { workflowId } = await mayasPayments();
  const sent = await asUser<TestEventResult>('maya', '/demo/test-event', { workflowId, failing: true });
  assert.equal(sent.status, 200);
  assert.equal(sent.body.finished, false);
  assert.match(sent.body.sent, /amount arrives as text/);

  const workflow = await mayasPayments();
  const run = workflow.runs[0]!;
  assert.equal(run.executionId, sent.body.executionId);
  assert.equal(run.outcome, 'failed');
  assert.deepEqual(
    run.steps.map((s) => s.status),
    ['done', 'done', 'failed', 'not-run'],
  );
  assert.equal(
    run.error?.message,
    'The condition "Amount is at least the minimum" compares numbers with >=, but its left is "1,249.00".',
  );
  assert.equal(run.error?.blockName, 'Amount is at least the minimum');
  assert.equal(run.error?.blockType, 'condition');
  assert.ok(run.error?.deliveredAt, 'the service delivered the entry to the demo’s error webhook');
  assert.equal(workflow.errorCount, 1);

  const { body } = await asUser<ActivityView>('maya', '/demo/activity');
  assert.equal(body.errorWebhook.isDemoReceiver, true);
  assert.equal(body.errorWebhook.received, 1);
});

test('the good payments are sent in turn, and one below the minimum finishes early at the condition', async () => {
  const { workflowId } = await mayasPayments();
  const sent: string[] = [];
  for (let i = 0; i < 3; i++) {
    sent.push((await asUser<TestEventResult>('maya', '/demo/test-event', { workflowId })).body.executionId);
  }
  const runs = (await mayasPayments()).runs.filter((r) => sent.includes(r.executionId));
  assert.deepEqual(runs.map((r) => r.outcome).sort(), ['finished', 'finished', 'stopped']);
  const stopped = runs.find((r) => r.outcome === 'stopped')!;
  assert.deepEqual(
    stopped.steps.map((s) => s.status),
    ['done', 'done', 'done', 'not-run'],
  );
});

test('a switched-off workflow refuses the test event and says how to fix it', async () => {
  const { workflowId } = await mayasPayments();
  const headers = { Authorization: `Bearer ${service.apiKey!}` };
  await fetch(`${service.url}/forge/2021-12/workflow/${workflowId}/deactivate`, { method: 'PUT', headers });
  try {
    const refused = await asUser<{ message: string }>('maya', '/demo/test-event', { workflowId });
    assert.equal(refused.status, 409);
    assert.match(refused.body.message, /switched off.*Switch it on/);
  } finally {
    await fetch(`${service.url}/forge/2021-12/workflow/${workflowId}/activate`, { method: 'PUT', headers });
  }
});

test('each user sees and drives only their own workflows; the page never gets a webhook URL', async () => {
  const { workflowId } = await mayasPayments();
  const jonas = await asUser<ActivityView>('jonas', '/demo/activity');
  assert.deepEqual(jonas.body.workflows, []);
  assert.equal(jonas.body.errorWebhook.received, 0);

  const intruder = await asUser<{ message: string }>('jonas', '/demo/test-event', { workflowId });
  assert.equal(intruder.status, 404);
  const signedOut = await asUser<{ message: string }>(null, '/demo/activity');
  assert.equal(signedOut.status, 401);
  assert.match(signedOut.body.message, /Reload the page/);

  const page = JSON.stringify((await asUser<ActivityView>('maya', '/demo/activity')).body);
  assert.doesNotMatch(page, /\/hooks\//);
  assert.ok(!page.includes(service.apiKey!));
});

test('a scheduled workflow offers no test event, and its due run shows the sandbox’s error', async () => {
  const sync = async () => (await asUser<ActivityView>('priya', '/demo/activity')).body.workflows[0]!;
  const { workflowId, trigger, testEvent } = await sync();
  assert.equal(trigger?.kind, 'schedule');
  assert.equal(testEvent, null);
  const refused = await asUser<{ message: string }>('priya', '/demo/test-event', { workflowId });
  assert.equal(refused.status, 409);
  assert.match(refused.body.message, /runs on a schedule/);

  // Priya never set her Mailchimp audience, so the hourly run fails where Mailchimp would.
  await service.engine.tick(new Date('2026-03-02T10:00:00Z'));
  const [run] = (await sync()).runs;
  assert.equal(run?.outcome, 'failed');
  assert.equal(run?.error?.blockName, 'Add to audience');
  assert.match(run!.error!.message, /members answered 404 Not Found: .*Set the audience id\./);
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
    probe.on('error', reject);
  });
}

test('the demo page passes axe with no violations, the elements inside included', async (t) => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  t.after(() => browser.close());
  // The demo's Content-Security-Policy forbids inline scripts, axe's included.
  const page = await browser.newPage({ bypassCSP: true });
  await page.goto(demo.url);
  // Audit the page as a user meets it: the list has loaded its rows, the apps their cards.
  await page.locator('forge-workflow-list [part~="row"]').first().waitFor();
  await page.locator('forge-integration-list [part~="app"]').first().waitFor();
  await page.addScriptTag({ content: readFileSync('node_modules/axe-core/axe.min.js', 'utf8') });
  const violations = await page.evaluate(async () => {
    const { violations } = await (window as unknown as { axe: typeof import('axe-core') }).axe.run(document);
    return violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  assert.deepEqual(violations, []);
});

test('the demo page opens the Runs view and the modal from the list and from the apps under its strict policy, with no violation', async (t) => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  t.after(() => browser.close());
  const page = await browser.newPage();
  const missing: string[] = [];
  page.on('response', (response) => {
    if (response.status() === 404) missing.push(response.url());
  });
  // Recorded from before the page's first script: what its Content-Security-Policy blocked.
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { violations: string[] }).violations = seen;
    document.addEventListener('securitypolicyviolation', (event) =>
      seen.push(`${event.violatedDirective} ${event.blockedURI} ${event.sample}`),
    );
  });
  await page.goto(demo.url);
  // The Runs view's chunk and its stylesheet (Maya's payments workflow is installed).
  await page.locator('forge-workflow-list [part~="runs-button"]').first().click();
  await page.locator('forge-workflow-list [part~="details"]').first().waitFor({ timeout: 10_000 });
  await page.locator('forge-workflow-list [part~="row"] button[part~="button"]').first().click();
  await page.locator('forge-workflow-list forge-config-modal [part~="dialog"][open]').waitFor({ timeout: 10_000 });
  await page.keyboard.press('Escape');
  // The apps' chunk, loaded because the page holds the element, and the modal it opens.
  await page.locator('forge-integration-list [part~="workflows-button"]').first().click();
  await page.locator('forge-integration-list forge-config-modal [part~="dialog"][open]').waitFor({ timeout: 10_000 });
  assert.deepEqual(missing, []);
  assert.deepEqual(await page.evaluate(() => (window as unknown as { violations: string[] }).violations), []);
});

// Last: Maya's Slack stays revoked.
test('Revoke Slack access makes the next run that reaches Slack fail as a connection problem', async () => {
  const { workflowId } = await mayasPayments();
  const revoke = (cookie?: string) =>
    fetch(`${demo.url}/demo/revoke`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(cookie ? { Cookie: cookie } : {}) },
      body: JSON.stringify({ integration: 'slack' }),
    });
  assert.equal((await revoke()).status, 401, 'signed-in users only');
  assert.equal((await revoke('orbit_session=maya')).status, 204);
  // The good payments take turns, and one below the minimum never reaches Slack: send until one does.
  let sent: TestEventResult | undefined;
  for (let turn = 0; turn < 3 && sent?.finished !== false; turn++) {
    sent = (await asUser<TestEventResult>('maya', '/demo/test-event', { workflowId })).body;
  }
  assert.equal(sent!.finished, false);
  const run = (await mayasPayments()).runs[0]!;
  // Slack refused the token (the grant is gone at the provider); the refresh after the 401 was
  // refused too (invalid_grant), so the connection is broken, not just this run failed.
  assert.match(run.error!.message, /Slack no longer accepts this connection/);
  const slackCalls = () => sandbox.requests.filter((r) => r.path.startsWith('/slack/')).length;
  const callsBefore = slackCalls();
  for (let turn = 0, failed = 0; turn < 3 && failed === 0; turn++) {
    const next = (await asUser<TestEventResult>('maya', '/demo/test-event', { workflowId })).body;
    if (next.finished === false) failed++;
  }
  assert.equal(slackCalls(), callsBefore, 'a broken connection fails without calling the app');
  const errors = await fetch(`${service.url}/forge/2021-12/workflow/${workflowId}/errors`, {
    headers: { Authorization: `Bearer ${service.apiKey}` },
  });
  assert.equal(((await errors.json()) as { errors: Array<{ kind: string }> }).errors[0]!.kind, 'connection');
});
