import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { generateApiKey } from '../../server/auth.js';
import { testDatabase } from './backend.js';

/**
 * Several service processes on one database, as a host runs them behind a load balancer: the
 * built `forge-service` (server/dist/main.js), each its own process, sharing the database, the
 * API key, the secret key and a clock the test moves (FORGE_TEST_CLOCK_FILE).
 */

const MAIN = fileURLToPath(new URL('../../server/dist/main.js', import.meta.url));

/** The origin of the host's page that embeds the elements. */
export const APP_ORIGIN = 'http://app.example';

/** Far longer than anything here takes: a test that waits in vain fails instead of hanging. */
const GIVE_UP_MS = 20_000;

/** Parents of the catalog the instances run, named for what they do. */
export const MINUTELY = 'wf-minutely';
export const REFUSE = 'wf-refuse';
export const SETTINGS_BLOCK = 'f1111111-1111-4111-8111-111111111112';

export const OAUTH = 'chat';

const CATALOG = {
  integrations: [{ name: OAUTH, displayName: 'Chat', icon: 'slack.svg', type: 'oauth2' }],
  workflows: [
    {
      workflowId: MINUTELY,
      name: 'Every minute',
      integrations: [],
      blocks: [
        {
          name: 'Every minute',
          id: 'f1111111-1111-4111-8111-111111111111',
          type: 'schedule',
          parameters: { cron: '* * * * *' },
        },
        {
          name: 'Settings',
          id: SETTINGS_BLOCK,
          type: 'variables',
          parameters: {
            variables: Array.from({ length: 8 }, (_, i) => ({
              uuid: `f222222${i}-2222-4222-8222-222222222222`,
              name: `v${i}`,
              value: 0,
            })),
          },
        },
        {
          name: 'Note',
          id: 'f1111111-1111-4111-8111-111111111113',
          type: 'transform',
          parameters: { output: { ok: true } },
        },
      ],
    },
    {
      workflowId: REFUSE,
      name: 'Refuse orders',
      integrations: [],
      blocks: [
        { name: 'Order placed', id: 'f3333333-3333-4333-8333-333333333331', type: 'webhook', parameters: {} },
        {
          name: 'Refuse',
          id: 'f3333333-3333-4333-8333-333333333332',
          type: 'fail',
          parameters: { message: 'Refused' },
        },
      ],
    },
  ],
};

export interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read the answers field by field and check them.
  body: any;
}

/** One running `forge-service` process. */
export class Instance {
  readonly lines: string[] = [];
  private waiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = [];
  url = '';

  constructor(
    readonly name: string,
    private readonly process: ChildProcess,
    private readonly apiKey: string,
  ) {
    const out = createInterface({ input: process.stdout! });
    out.on('line', (line) => {
      this.lines.push(line);
      this.waiters = this.waiters.filter((w) => {
        if (!w.pattern.test(line)) return true;
        w.resolve(line);
        return false;
      });
    });
    process.stderr!.on('data', (chunk) => this.lines.push(String(chunk)));
  }

  /** The first line the process printed, or prints, that matches. */
  line(pattern: RegExp): Promise<string> {
    const seen = this.lines.find((l) => pattern.test(l));
    if (seen) return Promise.resolve(seen);
    return giveUpAfter(
      new Promise<string>((resolve) => this.waiters.push({ pattern, resolve })),
      () => `${this.name} never printed ${pattern}; it printed:\n${this.lines.join('\n')}`,
    );
  }

  /**
   * Calls the API; `credential` is the API key unless a user token is given, which is sent as
   * the embedded elements send it, from the host's page.
   */
  async api(method: string, path: string, body?: unknown, credential = this.apiKey): Promise<Answer> {
    const response = await fetch(`${this.url}/forge/2021-12${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${credential}`,
        ...(credential === this.apiKey ? {} : { Origin: APP_ORIGIN }),
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }

  /** SIGKILL: the process dies where it stands, as a crashed machine's would. */
  async kill(): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return;
    const exited = new Promise((resolve) => this.process.once('exit', resolve));
    this.process.kill('SIGKILL');
    await exited;
  }

  /** SIGTERM: the graceful stop a host's orchestrator sends. */
  async stop(): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return;
    const exited = new Promise((resolve) => this.process.once('exit', resolve));
    this.process.kill('SIGTERM');
    await exited;
  }
}

/** A database, the shared settings and the clock of a group of instances. */
export class Cluster {
  readonly apiKey = generateApiKey();
  readonly instances: Instance[] = [];
  private readonly dir = mkdtempSync(join(tmpdir(), 'forge-instances-'));
  private readonly clockFile = join(this.dir, 'clock');
  private readonly catalog = join(this.dir, 'catalog.json');
  private readonly secretKey = randomBytes(32).toString('base64');
  private nowMs: number;

  private constructor(
    readonly db: string,
    private readonly drop: (() => Promise<void>) | undefined,
    start: Date,
    private readonly env: Record<string, string>,
    catalog: unknown = CATALOG,
  ) {
    this.nowMs = start.getTime();
    writeFileSync(this.clockFile, String(this.nowMs));
    writeFileSync(this.catalog, JSON.stringify(catalog));
  }

  /** A new database (a SQLite file, or one on the test PostgreSQL server) and its clock at `start`. */
  static async create(start: Date, env: Record<string, string> = {}, catalog?: unknown): Promise<Cluster> {
    // A SQLite file, which several processes share in WAL mode, or a database of its own on the
    // PostgreSQL server the suite runs against.
    const dir = mkdtempSync(join(tmpdir(), 'forge-instances-db-'));
    const { db, drop } = await testDatabase(join(dir, 'forge.db'));
    const removeAll = async () => {
      await drop?.();
      rmSync(dir, { recursive: true, force: true });
    };
    return new Cluster(db, removeAll, start, env, catalog);
  }

  get now(): Date {
    return new Date(this.nowMs);
  }

  /** Moves every instance's clock to `at` ("minute 12:00 passed"); they look at once. */
  setClock(at: Date): void {
    this.nowMs = at.getTime();
    writeFileSync(this.clockFile, String(this.nowMs));
  }

  advance(ms: number): void {
    this.setClock(new Date(this.nowMs + ms));
  }

  get environment(): Record<string, string> {
    return {
      ...(process.env as Record<string, string>),
      FORGE_API_KEY: this.apiKey,
      FORGE_SECRET_KEY: this.secretKey,
      FORGE_TEST_CLOCK_FILE: this.clockFile,
      FORGE_LOG: 'off',
      FORGE_ALLOWED_ORIGINS: APP_ORIGIN,
      // Error deliveries go to a receiver on loopback.
      FORGE_ALLOW_PRIVATE_WEBHOOKS: '1',
      ...this.env,
    };
  }

  /** Starts one more instance on a free port and waits until it listens. */
  async start(name: string): Promise<Instance> {
    const child = spawn(process.execPath, [MAIN, '--port', '0', '--db', this.db, '--catalog', this.catalog], {
      env: this.environment,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const instance = new Instance(name, child, this.apiKey);
    this.instances.push(instance);
    const listening = await instance.line(/"msg":"Forge service listening on /);
    instance.url = /listening on (http:\/\/[^/]+)/.exec(listening)![1]!;
    return instance;
  }

  /** Runs `forge-service <args>` on this cluster's database and answers what it printed. */
  run(...args: string[]): Promise<{ code: number | null; output: string }> {
    const child = spawn(process.execPath, [MAIN, ...args, '--db', this.db], { env: this.environment });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    return new Promise((resolve) => child.on('exit', (code) => resolve({ code, output })));
  }

  async close(): Promise<void> {
    await Promise.all(this.instances.map((i) => i.kill()));
    await this.drop?.();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function giveUpAfter<T>(promise: Promise<T>, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const giveUp = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Gave up waiting: ${what()}`)), GIVE_UP_MS);
  });
  return Promise.race([promise, giveUp]).finally(() => clearTimeout(timer));
}

/** Resolves when `check` holds, looking again every few milliseconds. */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  giveUpMs = GIVE_UP_MS,
): Promise<void> {
  const deadline = Date.now() + giveUpMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
