import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningService, type ServiceOptions, startService } from '../../server/app.js';
import { type RunningSandbox, startSandbox } from '../../server/sandbox.js';
import { testDatabase } from './backend.js';

/** Shared set-up of the engine tests: a catalog made for them, the service, the sandbox. */

export const UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Block ids of the test catalog, named for what they do. */
export const B = {
  hook: 'a1111111-1111-4111-8111-111111111111',
  settings: 'a2222222-2222-4222-8222-222222222222',
  bigEnough: 'a3333333-3333-4333-8333-333333333333',
  message: 'a4444444-4444-4444-8444-444444444444',
  post: 'a5555555-5555-4555-8555-555555555555',
  schedule: 'b1111111-1111-4111-8111-111111111111',
  balance: 'b2222222-2222-4222-8222-222222222222',
  summary: 'b3333333-3333-4333-8333-333333333333',
  refuseHook: 'c1111111-1111-4111-8111-111111111111',
  refuse: 'c2222222-2222-4222-8222-222222222222',
  typoHook: 'd1111111-1111-4111-8111-111111111111',
  typo: 'd2222222-2222-4222-8222-222222222222',
} as const;

export const PAYMENTS = 'wf-payments';
export const BALANCE = 'wf-balance';
export const REFUSE = 'wf-refuse';
export const TYPO = 'wf-typo';

const CATALOG = {
  integrations: [
    {
      name: 'crm',
      displayName: 'CRM',
      icon: 'crm.svg',
      type: 'apiKey',
      requiredParameters: [{ name: 'apiKey', displayName: 'API key', description: 'The CRM API key.' }],
    },
  ],
  workflows: [
    {
      workflowId: PAYMENTS,
      name: 'Announce payments',
      integrations: ['crm'],
      blocks: [
        { name: 'Payment received', id: B.hook, type: 'webhook', parameters: {} },
        {
          name: 'Settings',
          id: B.settings,
          type: 'variables',
          parameters: {
            variables: [
              { uuid: 'e1111111-1111-4111-8111-111111111111', name: 'threshold', value: 10 },
              { uuid: 'e2222222-2222-4222-8222-222222222222', name: 'channel', value: '#general' },
            ],
          },
        },
        {
          name: 'Big enough',
          id: B.bigEnough,
          type: 'condition',
          parameters: { left: `{{${B.hook}.amount}}`, operator: '>=', right: '{{vars.threshold}}' },
        },
        {
          name: 'Message',
          id: B.message,
          type: 'transform',
          parameters: {
            output: {
              text: `Paid {{${B.hook}.amount}} by {{${B.hook}.customer.name}}`,
              amount: `{{${B.hook}.amount}}`,
            },
          },
        },
        {
          name: 'Post',
          id: B.post,
          type: 'http',
          integration: 'crm',
          parameters: {
            method: 'POST',
            url: '{{env.SANDBOX_URL}}/slack/chat.postMessage',
            body: { channel: '{{vars.channel}}', text: `{{${B.message}.text}}` },
          },
        },
      ],
    },
    {
      workflowId: BALANCE,
      name: 'Balance every quarter hour',
      integrations: ['crm'],
      blocks: [
        { name: 'Every 15 minutes', id: B.schedule, type: 'schedule', parameters: { cron: '*/15 * * * *' } },
        {
          name: 'Balance',
          id: B.balance,
          type: 'http',
          integration: 'crm',
          parameters: { method: 'GET', url: '{{env.SANDBOX_URL}}/stripe/balance?currency=eur' },
        },
        {
          name: 'Summary',
          id: B.summary,
          type: 'transform',
          parameters: { output: { line: `Balance: {{${B.balance}.body.amount}} {{${B.balance}.body.currency}}` } },
        },
      ],
    },
    {
      workflowId: REFUSE,
      name: 'Refuse orders',
      integrations: [],
      blocks: [
        { name: 'Order placed', id: B.refuseHook, type: 'webhook', parameters: {} },
        {
          name: 'Refuse',
          id: B.refuse,
          type: 'fail',
          parameters: { message: `Refused order {{${B.refuseHook}.orderId}}` },
        },
      ],
    },
    {
      workflowId: TYPO,
      name: 'A workflow with a typo',
      integrations: [],
      blocks: [
        { name: 'Hook', id: B.typoHook, type: 'webhook', parameters: {} },
        { name: 'Greeting', id: B.typo, type: 'transform', parameters: { output: { text: 'Hello {{vars.nmae}}' } } },
      ],
    },
  ],
};

export function writeTestCatalog(): string {
  const dir = mkdtempSync(join(tmpdir(), 'forge-engine-'));
  const path = join(dir, 'catalog.json');
  writeFileSync(path, JSON.stringify(CATALOG));
  return path;
}

export interface Harness {
  service: RunningService;
  sandbox: RunningSandbox;
  /** Calls the service; `credential` is the API key unless a user token is given. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read the answers field by field and check them.
  api<T = any>(method: string, path: string, body?: unknown, credential?: string): Promise<{ status: number; body: T }>;
  close(): Promise<void>;
}

export async function startHarness(options: ServiceOptions = {}): Promise<Harness> {
  const sandbox = await startSandbox({ port: 0 });
  const { db, drop } = await testDatabase(options.db);
  const service = await startService({
    port: 0,
    catalog: writeTestCatalog(),
    sandboxUrl: sandbox.url,
    scheduler: false,
    // The receivers of error deliveries listen on loopback.
    allowPrivateWebhooks: true,
    ...options,
    db,
  });
  const api = async (method: string, path: string, body?: unknown, credential = service.apiKey!) => {
    const response = await fetch(`${service.url}/forge/2021-12${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${credential}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };
  return {
    service,
    sandbox,
    api,
    async close() {
      await service.close();
      await sandbox.close();
      await drop?.();
    },
  };
}

let emails = 0;

/** A new user with a token; `install` gives it a child of a parent, its integrations connected. */
export async function newUser(h: Harness) {
  const created = await h.api<{ userId: string }>('POST', '/user', {
    name: 'Test user',
    email: `user${++emails}-${Date.now()}@example.com`,
  });
  const userId = created.body.userId;
  const token = (await h.api<{ token: string }>('GET', `/user/${userId}/token`)).body.token;
  return {
    userId,
    token,
    async install(parentId: string, variables?: Record<string, Record<string, string | number>>): Promise<string> {
      for (const integration of h.service.catalog.get(parentId)!.integrations) {
        const values = Object.fromEntries(
          (integration.requiredParameters ?? []).map((p) => [p.name, `${p.name}-value`]),
        );
        const sealed =
          integration.type === 'oauth2' ? { kind: 'oauth2', accessToken: 'access' } : { kind: 'parameters', values };
        await h.service.store.credentials.save(userId, integration.name, h.service.secrets.seal(sealed));
      }
      const installed = await h.api('POST', `/workflow/${parentId}/install`, variables ? { variables } : {}, token);
      if (installed.status !== 201) throw new Error(`install failed: ${JSON.stringify(installed.body)}`);
      return installed.body.workflowId;
    },
  };
}

/** A child workflow's webhook URL, as its owner is given it. */
export async function hookOf(h: Harness, childId: string): Promise<string> {
  return `${h.service.url}/forge/2021-12/hooks/${(await h.service.store.children.get(childId))!.webhookToken}`;
}

/** POSTs `body` as JSON to `url`: the answer's status, headers and parsed body. */
export async function post(url: string, headers: Record<string, string> = {}, body: unknown = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

/**
 * POSTs to a child workflow's webhook URL, as a webhook sender would, asking to wait for the run
 * (`Prefer: wait`): the answer says whether it finished, as the tests of runs need.
 */
export async function sendWebhook(h: Harness, childId: string, payload: unknown) {
  const { status, body } = await post(await hookOf(h, childId), { Prefer: 'wait=30' }, payload);
  return { status, body };
}

/**
 * A host's error receiver: records what it is sent. It can be taken down and brought back up
 * on the same port, as a host's endpoint that is down for a while.
 */
export class Receiver {
  // biome-ignore lint/suspicious/noExplicitAny: what arrives is JSON that the tests check field by field.
  readonly received: Array<{ headers: IncomingHttpHeaders; body: any }> = [];
  port = 0;
  private server: Server | undefined;
  private waiters: Array<{ count: number; resolve: () => void }> = [];

  constructor(private readonly answer: () => { status: number; body: unknown } = () => ({ status: 204, body: '' })) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/errors`;
  }

  async up(): Promise<this> {
    this.server = createServer(async (req, res) => {
      let text = '';
      for await (const chunk of req) text += chunk;
      const body = JSON.parse(text);
      this.received.push({ headers: req.headers, body });
      const answer = this.answer();
      res
        .writeHead(answer.status, { 'Content-Type': 'application/json' })
        .end(answer.body === '' ? '' : JSON.stringify(answer.body));
      this.waiters = this.waiters.filter((w) => {
        if (this.received.length < w.count) return true;
        w.resolve();
        return false;
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async down(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }

  /** Resolves once `count` requests in all have arrived. */
  waitFor(count: number): Promise<void> {
    if (this.received.length >= count) return Promise.resolve();
    const arrived = new Promise<void>((resolve) => this.waiters.push({ count, resolve }));
    return orGiveUp(arrived, () => `expected ${count} requests, got ${this.received.length}`);
  }
}

/** Far longer than anything here takes: a test that waits in vain fails instead of hanging. */
const GIVE_UP_MS = 15_000;

function orGiveUp(promise: Promise<void>, what: () => string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const giveUp = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Gave up waiting: ${what()}`)), GIVE_UP_MS);
  });
  return Promise.race([promise, giveUp]).finally(() => clearTimeout(timer));
}

/** Resolves when `check` holds, looking again every few milliseconds. */
export function until(check: () => boolean | Promise<boolean>, what = check.toString()): Promise<void> {
  let stop = false;
  const poll = async () => {
    while (!(await check()) && !stop) await new Promise((resolve) => setTimeout(resolve, 10));
  };
  return orGiveUp(poll(), () => what).finally(() => {
    stop = true;
  });
}
