import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { Catalog } from '../server/catalog/catalog.js';
import { DEMO_CATALOG } from '../server/paths.js';
import { Store } from '../server/store/store.js';
import type { BlockResult, ExecutionLogEntry } from '../src/api/types.js';
import { API_PREFIX, spawnService } from './service.js';
import { percentile, round1 } from './stats.js';

export const EXECUTIONS = 100_000;
const LIMIT = 30;
/** Page 1 and a page near the end of the log (3,334 pages of 30), which makes SQLite skip 90,000 rows. */
export const PAGES = [1, 3000];
/** autocannon's default, so the figures read like the usual Node HTTP benchmarks. */
export const CONNECTIONS = 10;
const WARM_UP_MS = 1_000;
export const LOAD_MS = 10_000;

export interface LogsResult {
  logsP99Ms: number;
  logsRps: number;
  /** p99 per page, for the table's note. */
  p99ByPage: Record<number, number>;
  requests: number;
}

/** Stores EXECUTIONS runs of one child workflow, each with a result per block it reached. */
async function seed(dbPath: string): Promise<{ childId: string }> {
  const catalog = new Catalog(DEMO_CATALOG);
  const parent = catalog.list().find((w) => w.blocks.some((b) => b.type === 'condition'))!;
  const store = await Store.open(dbPath);
  try {
    const userId = await store.createUser('Bench user', 'bench-logs@example.com');
    const child = await store.createChild(userId, parent.workflowId, {});
    const now = Date.now();
    await store.transaction(async (tx) => {
      for (let i = 0; i < EXECUTIONS; i++) {
        await tx.insertExecution(child.id, execution(parent.blocks, now - i * 60_000, i));
      }
    });
    return { childId: child.id };
  } finally {
    await store.close();
  }
}

/** What a run of a webhook → variables → condition → HTTP workflow records; one in five stops at the condition. */
function execution(blocks: Array<{ id: string; type: string }>, startedAtMs: number, n: number): ExecutionLogEntry {
  const amount = 20 + ((n * 37) % 400);
  const passes = n % 5 !== 0;
  const results: BlockResult[] = [];
  let at = startedAtMs;
  for (const block of blocks) {
    const json = blockOutput(block.type, amount, passes, n);
    const startedAt = new Date(at).toISOString();
    at += block.type === 'http' ? 180 : 3;
    results.push({
      blockId: block.id,
      startedAt,
      stoppedAt: new Date(at).toISOString(),
      data: [[{ json, id: randomUUID() }]],
    });
    if (block.type === 'condition' && !passes) break;
  }
  return {
    executionId: randomUUID(),
    startedAt: new Date(startedAtMs).toISOString(),
    stoppedAt: new Date(at).toISOString(),
    finished: true,
    results,
  };
}

function blockOutput(type: string, amount: number, passes: boolean, n: number): Record<string, unknown> {
  switch (type) {
    case 'webhook':
      return { id: `pi_${n.toString(36).padStart(10, '0')}`, amount, currency: 'usd', customer: `cus_${n % 977}` };
    case 'variables':
      return { channel: '#payments', minimumAmount: 50 };
    case 'condition':
      return { result: passes };
    default:
      return { status: 200, body: { ok: true, channel: 'C024BE91L', ts: `${1700000000 + n}.000100` } };
  }
}

/**
 * GET /workflow/:id/logs under load: CONNECTIONS keep-alive connections, each sending its next
 * request as soon as the last one answered, alternating the pages, for LOAD_MS after a warm-up.
 */
export async function benchLogs(workDir: string, apiKey: string): Promise<LogsResult> {
  const dbPath = join(workDir, 'logs.db');
  const { childId } = await seed(dbPath);
  const service = await spawnService({ db: dbPath, apiKey });
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  try {
    const target = new URL(service.loopbackUrl);
    const get = (page: number) =>
      timedGet(agent, {
        host: target.hostname,
        port: Number(target.port),
        path: `${API_PREFIX}/workflow/${childId}/logs?page=${page}&limit=${LIMIT}`,
        headers: { Authorization: `Bearer ${apiKey}` },
      });
    for (const page of PAGES) {
      const { body } = await get(page);
      const count = (JSON.parse(body) as { data: unknown[] }).data.length;
      if (count !== LIMIT) throw new Error(`logs page ${page} answered ${count} entries, expected ${LIMIT}`);
    }
    await load(get, WARM_UP_MS);
    return summarise(await load(get, LOAD_MS), LOAD_MS);
  } finally {
    agent.destroy();
    await service.stop();
  }
}

type Sample = { page: number; ms: number };

async function load(get: (page: number) => Promise<{ ms: number }>, durationMs: number): Promise<Sample[]> {
  const samples: Sample[] = [];
  const deadline = performance.now() + durationMs;
  const connection = async (offset: number) => {
    for (let i = offset; performance.now() < deadline; i++) {
      const page = PAGES[i % PAGES.length]!;
      samples.push({ page, ms: (await get(page)).ms });
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, (_, c) => connection(c)));
  return samples;
}

function summarise(samples: Sample[], durationMs: number): LogsResult {
  const p99ByPage: Record<number, number> = {};
  for (const page of PAGES) {
    p99ByPage[page] = round1(
      percentile(
        samples.filter((s) => s.page === page).map((s) => s.ms),
        99,
      ),
    );
  }
  return {
    logsP99Ms: round1(
      percentile(
        samples.map((s) => s.ms),
        99,
      ),
    ),
    logsRps: Math.round(samples.length / (durationMs / 1000)),
    p99ByPage,
    requests: samples.length,
  };
}

function timedGet(
  agent: Agent,
  options: { host: string; port: number; path: string; headers: Record<string, string> },
): Promise<{ ms: number; body: string }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ ...options, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        // A fast error is not an answer: any failure stops the bench rather than flatter it.
        if (res.statusCode !== 200) reject(new Error(`GET ${options.path} answered ${res.statusCode}: ${body}`));
        else resolve({ ms: performance.now() - started, body });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
