import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DEMO_CATALOG } from '../../server/paths.js';
import type { ErrorLogEntry, ExecutionLogEntry } from '../../src/api/types.js';
import { type Harness, newUser, sendWebhook, startHarness } from './engine-support.js';

/**
 * The demo catalog's workflows run for real against the sandbox: every one of them, so the
 * demo shows real logs, and a missing setting shows a real error.
 */

let h: Harness;
before(async () => {
  h = await startHarness({ catalog: DEMO_CATALOG });
});
after(() => h.close());

interface DemoCase {
  variables?: Record<string, Record<string, string | number>>;
  /** A webhook payload, or the minute a schedule is due. */
  trigger: Record<string, unknown> | Date;
  /** What the sandbox receives, in order. */
  sent: Array<{ method: string; path: string; body?: unknown }>;
}

const CASES: Record<string, DemoCase> = {
  '64b14ff1704e5bc1057506db': {
    trigger: { amount: 120, currency: 'usd', customer: 'cus_123' },
    sent: [
      {
        method: 'POST',
        path: '/slack/chat.postMessage',
        body: { channel: '#payments', text: 'New payment: 120 usd from cus_123' },
      },
    ],
  },
  '64b1d6aac655b8a937b7db20': {
    trigger: { stage: 'closedwon', pipeline: 'default', dealname: 'Acme renewal', amount: 5000 },
    sent: [
      {
        method: 'POST',
        path: '/slack/chat.postMessage',
        body: { channel: '#sales', text: 'Deal won: Acme renewal (5000)' },
      },
    ],
  },
  '64b1b0ffdd247fb57262db75': {
    variables: { '03a3399d-f04f-4383-8201-49dcf3247d7a': { spreadsheetId: '1AbCdEfGhIjKlMnOpQrStUvWxYz' } },
    trigger: { name: 'Ada', email: 'ada@example.com', created: '2026-03-02' },
    sent: [
      {
        method: 'POST',
        path: '/sheets/1AbCdEfGhIjKlMnOpQrStUvWxYz/Customers:append',
        body: { values: ['Ada', 'ada@example.com', '2026-03-02'] },
      },
    ],
  },
  '64b10ec47f57139c3f7e7cdd': {
    variables: { '757c5422-ea01-4a81-b660-5e14c461f044': { audienceId: 'aud 1' } },
    trigger: new Date('2026-03-02T10:00:00Z'),
    sent: [
      { method: 'GET', path: '/hubspot/contacts/recent', body: undefined },
      {
        method: 'POST',
        // A value in a URL is percent-encoded, so it cannot change the path.
        path: '/mailchimp/lists/aud%201/members',
        body: {
          contacts: [
            { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' },
            { email: 'alan@example.com', firstName: 'Alan', lastName: 'Turing' },
          ],
          tags: ['hubspot'],
        },
      },
    ],
  },
  '64b1aa96c495decefd1bbaa5': {
    trigger: new Date('2026-03-02T09:00:00Z'),
    sent: [
      { method: 'GET', path: '/stripe/balance?currency=usd', body: undefined },
      {
        method: 'POST',
        path: '/slack/chat.postMessage',
        body: { channel: '#finance', text: 'Revenue yesterday: 1842.5 usd' },
      },
    ],
  },
  '64b13345c5ce3aeb4f592a6f': {
    variables: { 'b44f2839-f946-40e6-95b1-59f2f096d154': { spreadsheetId: 'subscribers_sheet_2026' } },
    trigger: { email: 'new@example.com', name: 'New Subscriber' },
    sent: [
      {
        method: 'POST',
        path: '/sheets/subscribers_sheet_2026/Subscribers:append',
        body: { values: ['new@example.com', 'New Subscriber'] },
      },
    ],
  },
  '64b19ea54aa94ca62c61606e': {
    variables: { '3b0fb9fa-b2d2-4bcd-8da7-2ab3b64c0a5c': { ownerEmail: 'owner@example.com' } },
    trigger: { customer: 'cus_9' },
    sent: [
      {
        method: 'POST',
        path: '/hubspot/tasks',
        body: { owner: 'owner@example.com', dueInDays: 2, subject: 'Payment failed for cus_9' },
      },
    ],
  },
};

test('the cases cover every workflow of the demo catalog', () => {
  assert.deepEqual(
    Object.keys(CASES).sort(),
    h.service.catalog
      .list()
      .map((w) => w.workflowId)
      .sort(),
  );
});

for (const [parentId, demo] of Object.entries(CASES)) {
  test(`demo workflow ${parentId} runs to the end against the sandbox`, async () => {
    const user = await newUser(h);
    const child = await user.install(parentId, demo.variables);
    const before = h.sandbox.requests.length;
    if (demo.trigger instanceof Date) {
      const outcomes = await h.service.engine.tick(demo.trigger);
      assert.ok(
        outcomes.some((o) => o.workflowId === child),
        'the tick ran this workflow',
      );
    } else {
      assert.equal((await sendWebhook(h, child, demo.trigger)).status, 200);
    }
    const logs = await h.api<{ data: ExecutionLogEntry[] }>('GET', `/workflow/${child}/logs`, undefined, user.token);
    const errors = await h.api<{ errors: ErrorLogEntry[] }>('GET', `/workflow/${child}/errors`, undefined, user.token);
    assert.deepEqual(errors.body.errors, []);
    assert.equal(logs.body.data[0]!.finished, true);
    assert.equal(logs.body.data[0]!.results.length, h.service.catalog.get(parentId)!.blocks.length);
    // Other users' scheduled workflows may run in the same tick: look at this user's requests only.
    const sent = h.sandbox.requests.slice(before).filter((r) => demo.sent.some((s) => s.path === r.path));
    assert.deepEqual(sent, demo.sent);
  });
}

test('a required setting left empty is refused at install, naming it, instead of failing every run', async () => {
  const user = await newUser(h);
  const refused = await h.api('POST', '/workflow/64b1b0ffdd247fb57262db75/install', {}, user.token);
  assert.equal(refused.status, 400, JSON.stringify(refused.body));
  assert.match(JSON.stringify(refused.body.errors), /spreadsheetId/);
});

test('the daily summary skips weekends unless the user wants them too', async () => {
  const saturday = new Date('2026-03-07T09:00:00Z');
  const summary = '64b1aa96c495decefd1bbaa5';
  const block = 'fd8131d8-0092-4fb8-8189-45e70985ad09';
  const skipping = await (await newUser(h)).install(summary);
  const wanting = await (await newUser(h)).install(summary, { [block]: { weekends: 'true' } });
  const before = h.sandbox.requests.length;
  const outcomes = await h.service.engine.tick(saturday);
  assert.ok(outcomes.some((o) => o.workflowId === skipping) && outcomes.some((o) => o.workflowId === wanting));
  const posts = h.sandbox.requests.slice(before).filter((r) => r.path === '/slack/chat.postMessage');
  // Every other user's summary in the same tick skips Saturday too (their switch is off), so one post.
  assert.equal(posts.length, 1);
  const logs = async (child: string) =>
    (await h.api<{ data: ExecutionLogEntry[] }>('GET', `/workflow/${child}/logs`)).body.data[0]!;
  assert.equal((await logs(skipping)).results.at(-1)!.blockId, '8d3b5e19-c6f2-4a7d-b04e-7e29a1f5c836', 'stopped');
  assert.equal((await logs(wanting)).results.length, h.service.catalog.get(summary)!.blocks.length);
});

test('the sandbox fails on purpose when asked, and refuses a request without a credential', async () => {
  const asked = await fetch(`${h.sandbox.url}/stripe/balance?sandboxFail=503`, {
    headers: { Authorization: 'Bearer x' },
  });
  assert.equal(asked.status, 503);
  const header = await fetch(`${h.sandbox.url}/hubspot/contacts/recent`, {
    headers: { Authorization: 'Bearer x', 'X-Sandbox-Fail': '500' },
  });
  assert.equal(header.status, 500);
  assert.match((await header.json()).error.message, /on purpose/);
  const anonymous = await fetch(`${h.sandbox.url}/hubspot/contacts/recent`);
  assert.equal(anonymous.status, 401);
});
