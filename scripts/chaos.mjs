// The chaos run of issue 27 (`npm run chaos`; `npm test` runs `--short`): three service
// instances on one throwaway PostgreSQL, on loopback only. Webhooks go out at a modest rate, each
// with an Idempotency-Key, some sent twice; ten children run every minute while a test clock
// makes minutes pass every few seconds. One instance is killed with SIGKILL and started again;
// PostgreSQL is stopped twice (once across a minute boundary, once while runs are in flight).
// Then it counts, straight from the database: accepted webhooks, lost ones (accepted, never
// stored), doubled ones (stored twice, or two executions for one key), scheduled minutes lost or
// doubled, instances that crashed, and how long each took to be ready after PostgreSQL came back.
// Exits non-zero unless lost = 0, doubled = 0 and crashed = 0. Needs the built service
// (npm run build) and PostgreSQL's programs (scripts/pg-cluster.mjs).
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { freePort, startCluster } from './pg-cluster.mjs';

const short = process.argv.includes('--short');
/** How long webhooks are sent, and when each fault comes, as fractions of it. */
const SEND_MS = short ? 40_000 : 150_000;
const WEBHOOKS_PER_SECOND = short ? 5 : 10;
/** A test-clock minute passes every this many real milliseconds. */
const MINUTE_EVERY_MS = short ? 3_000 : 4_000;
const CHILDREN = 10;
/** After the sending, how long the queue may take to run what is left (a killed instance's jobs wait for their lease). */
const SETTLE_MS = 120_000;

const MAIN = fileURLToPath(new URL('../server/dist/main.js', import.meta.url));
const MINUTE = 60_000;
const HOOK = 'chaos-hook';
const MINUTELY = 'chaos-minutely';
const CATALOG = {
  integrations: [],
  workflows: [
    {
      workflowId: HOOK,
      name: 'Chaos webhook',
      integrations: [],
      blocks: [
        { name: 'Called', id: 'c0000000-0000-4000-8000-000000000001', type: 'webhook', parameters: {} },
        {
          name: 'Echo',
          id: 'c0000000-0000-4000-8000-000000000002',
          type: 'transform',
          parameters: { output: { key: '{{c0000000-0000-4000-8000-000000000001.key}}' } },
        },
      ],
    },
    {
      workflowId: MINUTELY,
      name: 'Chaos minutely',
      integrations: [],
      blocks: [
        {
          name: 'Every minute',
          id: 'c0000000-0000-4000-8000-000000000011',
          type: 'schedule',
          parameters: { cron: '* * * * *' },
        },
        {
          name: 'Note',
          id: 'c0000000-0000-4000-8000-000000000012',
          type: 'transform',
          parameters: { output: { ok: true } },
        },
      ],
    },
  ],
};

const log = (line) => console.log(`[chaos ${new Date().toISOString().slice(11, 19)}] ${line}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const dir = mkdtempSync(join(tmpdir(), 'forge-chaos-'));
const clockFile = join(dir, 'clock');
const catalogFile = join(dir, 'catalog.json');
writeFileSync(catalogFile, JSON.stringify(CATALOG));
// The test clock starts just after a minute and moves a minute at a time.
let clockMs = Date.UTC(2026, 2, 2, 12, 0, 5);
writeFileSync(clockFile, String(clockMs));
const apiKey = `forge_sk_${randomBytes(24).toString('hex')}`;
const secretKey = randomBytes(32).toString('base64');

log('starting PostgreSQL');
const database = await startCluster();
const instances = [];
let crashed = 0;
let exitCode = 1;

/** One service process; `expectedExit` is set before the script kills or stops it. */
async function startInstance(name) {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [MAIN, '--port', String(port), '--db', database.url, '--catalog', catalogFile],
    {
      env: {
        ...process.env,
        FORGE_API_KEY: apiKey,
        FORGE_SECRET_KEY: secretKey,
        FORGE_TEST_CLOCK_FILE: clockFile,
        FORGE_LOG: 'off',
        FORGE_LOG_LEVEL: 'warn',
        FORGE_RATE_LIMITS: 'webhook=off',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const instance = { name, child, url: `http://127.0.0.1:${port}`, expectedExit: false, lines: [] };
  createInterface({ input: child.stdout }).on('line', (line) => instance.lines.push(line));
  createInterface({ input: child.stderr }).on('line', (line) => instance.lines.push(line));
  child.on('exit', (code, signal) => {
    if (instance.expectedExit) return;
    crashed++;
    log(`${name} exited by itself (code ${code}, signal ${signal}):\n${instance.lines.slice(-20).join('\n')}`);
  });
  await waitReady(instance, 60_000);
  return instance;
}

async function ready(instance) {
  try {
    return (await fetch(`${instance.url}/readyz`)).status === 200;
  } catch {
    return false;
  }
}

async function waitReady(instance, giveUpMs) {
  const deadline = Date.now() + giveUpMs;
  while (!(await ready(instance))) {
    if (Date.now() > deadline) throw new Error(`${instance.name} was not ready within ${giveUpMs} ms`);
    await sleep(50);
  }
}

const api = async (instance, method, path, body, headers = {}) => {
  const response = await fetch(`${instance.url}/forge/2021-12${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${apiKey}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json().catch(() => undefined) };
};

try {
  for (const name of ['A', 'B', 'C']) instances.push(await startInstance(name));
  log('three instances ready');

  // The children: one webhook child, and ten that run every minute, each for a user of its own.
  const setUp = async (parentId) => {
    const user = await api(instances[0], 'POST', '/user', {
      name: 'Chaos',
      email: `chaos-${randomUUID()}@example.com`,
    });
    const token = (await api(instances[0], 'GET', `/user/${user.body.userId}/token`)).body.token;
    const installed = await fetch(`${instances[0].url}/forge/2021-12/workflow/${parentId}/install`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    return (await installed.json()).workflowId;
  };
  const hookChild = await setUp(HOOK);
  const hookPath = new URL((await api(instances[0], 'GET', `/workflow/${hookChild}`)).body.webhookUrl).pathname;
  const minutely = [];
  for (let i = 0; i < CHILDREN; i++) minutely.push(await setUp(MINUTELY));
  // Minutes from the next one on are expected, each once per child.
  const firstMinute = Math.floor(clockMs / MINUTE) * MINUTE + MINUTE;

  // The sender: round robin over the instances that are up; every tenth key is sent twice.
  const accepted = new Map();
  let refused = 0;
  let sending = true;
  let sent = 0;
  const sender = (async () => {
    const inFlight = new Set();
    while (sending) {
      const key = randomUUID();
      const times = sent % 10 === 0 ? 2 : 1;
      sent++;
      for (let t = 0; t < times; t++) {
        const up = instances.filter((i) => !i.down);
        const instance = up[(sent + t) % up.length];
        const call = (async () => {
          try {
            const response = await fetch(instance.url + hookPath, {
              method: 'POST',
              headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
              body: JSON.stringify({ key }),
              signal: AbortSignal.timeout(10_000),
            });
            const body = await response.json().catch(() => undefined);
            if (response.status === 202 || response.status === 200) {
              const had = accepted.get(key);
              if (had && had !== body.executionId) accepted.set(key, 'TWO IDS');
              else accepted.set(key, body.executionId);
            } else refused++;
          } catch {
            refused++;
          }
        })();
        inFlight.add(call);
        void call.finally(() => inFlight.delete(call));
      }
      await sleep(1000 / WEBHOOKS_PER_SECOND);
    }
    await Promise.all(inFlight);
  })();

  // The clock: a minute every MINUTE_EVERY_MS.
  let ticking = true;
  const clock = (async () => {
    while (ticking) {
      await sleep(MINUTE_EVERY_MS);
      if (!ticking) break;
      clockMs += MINUTE;
      writeFileSync(clockFile, String(clockMs));
    }
  })();

  const recoveries = [];
  /** PostgreSQL stopped for `ms`; then how long until every instance is ready again. */
  async function outage(ms, what) {
    log(`PostgreSQL stops for ${ms / 1000} s (${what})`);
    database.stop();
    await sleep(ms);
    database.start();
    const back = Date.now();
    await Promise.all(instances.filter((i) => !i.down).map((i) => waitReady(i, 60_000)));
    recoveries.push(Date.now() - back);
    log(`PostgreSQL is back; every instance ready after ${Date.now() - back} ms`);
  }

  await sleep(SEND_MS * 0.15);
  const victim = instances[1];
  log(`SIGKILL ${victim.name}`);
  victim.expectedExit = true;
  victim.down = true;
  victim.child.kill('SIGKILL');
  await sleep(SEND_MS * 0.1);
  log(`${victim.name} starts again`);
  instances[1] = await startInstance(`${victim.name} again`);

  await sleep(SEND_MS * 0.15);
  // Across a minute boundary: the clock moves while PostgreSQL is down.
  await outage(short ? 6_000 : 10_000, 'across a minute boundary');

  await sleep(SEND_MS * 0.15);
  // While runs are in flight: right after a minute comes due.
  clockMs += MINUTE;
  writeFileSync(clockFile, String(clockMs));
  await sleep(100);
  await outage(5_000, 'while scheduled runs are in flight');

  await sleep(SEND_MS * 0.2);
  sending = false;
  await sender;
  ticking = false;
  await clock;
  const lastMinute = Math.floor(clockMs / MINUTE) * MINUTE;
  log(`sending stopped: ${sent} keys sent, ${accepted.size} accepted, ${refused} calls refused or unanswered`);

  // Counts straight from the database, once the queue has run what is left.
  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  const webhookIds = [...accepted.values()].filter((id) => id !== 'TWO IDS');
  const count = async () => {
    const stored = await db.query('SELECT id FROM executions WHERE workflow_id = $1', [hookChild]);
    const ids = new Set(stored.rows.map((r) => r.id));
    const scheduled = await db.query(
      `SELECT workflow_id, (results::json)->0->'data'->0->0->'json'->>'scheduledAt' AS minute, count(*)::int AS n
       FROM executions WHERE workflow_id = ANY($1) GROUP BY 1, 2`,
      [minutely],
    );
    return { ids, storedHook: stored.rowCount, scheduled: scheduled.rows };
  };
  const expectedMinutes = (lastMinute - firstMinute) / MINUTE + 1;
  const settleBy = Date.now() + SETTLE_MS;
  let counted = await count();
  while (Date.now() < settleBy) {
    const missingHooks = webhookIds.filter((id) => !counted.ids.has(id)).length;
    const scheduledRuns = counted.scheduled.filter(
      (r) => Date.parse(r.minute) >= firstMinute && Date.parse(r.minute) <= lastMinute,
    ).length;
    if (missingHooks === 0 && scheduledRuns >= expectedMinutes * CHILDREN) break;
    await sleep(1_000);
    counted = await count();
  }
  await db.end();

  const lostHooks = webhookIds.filter((id) => !counted.ids.has(id)).length;
  const doubledHooks =
    [...accepted.values()].filter((id) => id === 'TWO IDS').length + (counted.storedHook - counted.ids.size);
  const strayHooks = [...counted.ids].filter((id) => !webhookIds.includes(id)).length;
  const perMinute = new Map(counted.scheduled.map((r) => [`${r.workflow_id} ${Date.parse(r.minute)}`, r.n]));
  let lostMinutes = 0;
  let doubledMinutes = 0;
  for (const child of minutely) {
    for (let minute = firstMinute; minute <= lastMinute; minute += MINUTE) {
      const n = perMinute.get(`${child} ${minute}`) ?? 0;
      if (n === 0) lostMinutes++;
      if (n > 1) doubledMinutes++;
    }
  }
  const lost = lostHooks + lostMinutes;
  const doubled = doubledHooks + doubledMinutes;
  console.log(`
accepted webhooks      ${accepted.size} (${sent} keys sent, ${Math.round(sent / 10)} of them twice)
stored without a 2xx   ${strayHooks} (the sender gave up waiting; the run was stored once)
lost webhooks          ${lostHooks}
doubled webhooks       ${doubledHooks}
scheduled minutes      ${expectedMinutes} × ${CHILDREN} children
lost minutes           ${lostMinutes}
doubled minutes        ${doubledMinutes}
crashed instances      ${crashed}
ready again after      ${recoveries.map((ms) => `${ms} ms`).join(', ')} (each PostgreSQL outage)
lost ${lost}, doubled ${doubled}, crashed ${crashed}`);
  exitCode = lost === 0 && doubled === 0 && crashed === 0 ? 0 : 1;
} catch (error) {
  console.error(`chaos: ${error.stack ?? error}`);
  for (const instance of instances) console.error(`--- ${instance.name}\n${instance.lines.slice(-30).join('\n')}`);
} finally {
  for (const instance of instances) {
    instance.expectedExit = true;
    instance.child.kill('SIGKILL');
  }
  database.remove();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(exitCode);
