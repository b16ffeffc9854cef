import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startCluster } from '../scripts/pg-cluster.mjs';
import { Catalog } from '../server/catalog/catalog.js';
import { DEMO_CATALOG } from '../server/paths.js';
import { SecretBox } from '../server/secrets.js';
import { Store } from '../server/store/store.js';
import { newDatabase } from './logs.js';
import { API_PREFIX, newApiKey, type ServiceProcess, spawnService } from './service.js';

/**
 * `npm run build`, then `node --import tsx bench/compare-answers.ts [--postgres] <main.js of another build>`:
 * both builds, side by side on one database, are sent every embed read (with a user token and,
 * where it may, the API key; under two origins; with each filter) and must answer byte for byte
 * alike, status, headers (all but Date) and body. Issue 29 made answers faster without changing
 * one byte of them; this is how that was checked against the build before. Exits with status 1
 * on any difference. `--postgres`: both on a throwaway PostgreSQL cluster instead of a SQLite file.
 * `--stack`: instead of the embed reads, every path of the OpenAPI document and the probes (and
 * a 404, a 414, a NUL, a compressed body), each as a GET, a HEAD, a bare OPTIONS and a preflight
 * for each of its methods, with no, an allowed, a foreign and an empty Origin, and no credential,
 * the API key, a user token and a bad one: what the plugin stack answers (issue 29's hooks).
 */
const args = process.argv.slice(2);
const onPostgres = args.includes('--postgres');
const stack = args.includes('--stack');
const ALLOWED_ORIGIN = 'https://app.example.test';
const other = args.find((arg) => !arg.startsWith('--'));
if (!other) {
  console.error('Usage: node --import tsx bench/compare-answers.ts [--postgres] <main.js of another build>');
  process.exit(2);
}

const workDir = mkdtempSync(join(tmpdir(), 'forge-compare-answers-'));
const cluster = onPostgres ? await startCluster() : undefined;
const db = cluster ? await newDatabase(cluster.url, 'answers') : join(workDir, 'answers.db');
// PostgreSQL's service refuses to start without the key of the secrets it stores.
const env = cluster ? { FORGE_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') } : undefined;
const apiKey = newApiKey();
const catalog = new Catalog(DEMO_CATALOG);
const [parent, second] = catalog.list();
const integration = parent!.integrations[0]!.name;

// The database both builds serve: one user with two installed workflows and their credentials,
// runs and an error; another user with nothing.
let services: ServiceProcess[] = [];
try {
  const allowedOrigins = [ALLOWED_ORIGIN];
  const first = await spawnService({ db, apiKey, env, main: resolve(other), allowedOrigins });
  services.push(first);
  const { userId } = await first.hostApi<{ userId: string }>('POST', '/user', {
    name: 'Ada Lovelace',
    email: 'ada@example.com',
  });
  const { userId: emptyUserId } = await first.hostApi<{ userId: string }>('POST', '/user', {
    name: 'Grace Hopper',
    email: 'grace@example.com',
  });
  const store = await Store.open(db);
  const childIds: string[] = [];
  try {
    const secrets = SecretBox.open(db, env?.FORGE_SECRET_KEY);
    for (const workflow of [parent!, second!]) {
      for (const { name } of workflow.integrations) {
        await store.credentials.save(userId, name, secrets.seal({ kind: 'compare' }));
      }
      childIds.push((await store.children.create(userId, workflow.workflowId, {})).id);
    }
    const started = new Date(Date.now() - 60_000);
    await store.logs.insertExecution(childIds[0]!, {
      executionId: '00000000-0000-4000-8000-000000000001',
      startedAt: started.toISOString(),
      stoppedAt: new Date(started.getTime() + 250).toISOString(),
      finished: true,
      results: [],
    });
    await store.logs.insertError({
      workflowId: childIds[0]!,
      executionId: '00000000-0000-4000-8000-000000000001',
      blockId: parent!.blocks[0]!.id,
      blockType: parent!.blocks[0]!.type,
      error: 'The Slack channel does not exist.',
      kind: 'app',
    });
  } finally {
    await store.close();
  }
  services.push(await spawnService({ db, apiKey, env, allowedOrigins }));
  const { token } = await first.hostApi<{ token: string }>('GET', `/user/${userId}/token`);
  const { token: emptyToken } = await first.hostApi<{ token: string }>('GET', `/user/${emptyUserId}/token`);

  // The stack's answers, or the embed reads; either way the services and the cluster are stopped below.
  if (stack) await compareStack(services, { userId, childId: childIds[0]!, token });
  else {
    const reads = [
      '/workflow',
      `/workflow?integration=${integration}`,
      '/workflow?integration=no-such-integration',
      '/workflow?integration=',
      '/workflow-summary',
      `/workflow-summary?integration=${integration}`,
      '/workflow-summary?integration=no-such-integration',
      `/setup?workflowId=${parent!.workflowId}`,
      `/setup?workflowId=${second!.workflowId}`,
      `/setup?integration=${integration}`,
      '/setup?integration=no-such-integration',
      '/setup?workflowId=no-such-workflow',
      '/setup',
      `/user/${userId}`,
      ...childIds.flatMap((id) => [`/workflow/${id}`, `/workflow/${id}/logs`, `/workflow/${id}/errors`]),
      '/workflow-health',
      '/.well-known/jwks.json',
    ];
    const callers: Array<[string, string | undefined, Record<string, string>?]> = [
      ['user token', token],
      ["another user's token", emptyToken],
      ['API key', apiKey],
      ['a wrong API key', newApiKey()],
      ['the API key from a browser page', apiKey, { Origin: 'https://host.example.test' }],
      ['no credential', undefined],
    ];
    // The origin a caller reached the service at is in the answers (icon URLs): both builds are
    // reached under the same two.
    const hosts = ['forge.example.test', 'localhost:4010'];
    let compared = 0;
    const differences: string[] = [];
    const statuses = new Map<string, number>();
    // The hosts alternate from one request to the next: an origin kept from the last Host must not
    // reach the answer to another.
    for (const path of reads) {
      for (const [caller, credential, headers] of callers) {
        // Twice each: the first answer of a kind is made afresh, the second may be one kept.
        for (let time = 1; time <= 2; time++) {
          for (const host of hosts) {
            const [a, b] = await Promise.all(
              services.map((service) => answer(service, path, host, credential, headers)),
            );
            compared++;
            const status = a!.slice(0, 3);
            statuses.set(status, (statuses.get(status) ?? 0) + 1);
            if (a !== b) differences.push(`${caller}, Host ${host}, GET ${path} (time ${time}):\n${a}\n---\n${b}`);
          }
        }
      }
    }
    for (const difference of differences) console.log(`\nDIFFERENT: ${difference}`);
    console.log(
      `${compared} answers compared (status, headers but Date, body; ${[...statuses].map(([status, n]) => `${n} × ${status}`).join(', ')}): ${differences.length === 0 ? 'all byte-identical' : `${differences.length} different`}.`,
    );
    if (differences.length > 0) process.exitCode = 1;
  }
} finally {
  await Promise.all(services.map((service) => service.stop()));
  services = [];
  cluster?.remove();
  rmSync(workDir, { recursive: true, force: true });
}

/** `--stack`: every path and probe, as each method a browser or backend may send without a body. */
async function compareStack(
  services: ServiceProcess[],
  { userId, childId, token }: { userId: string; childId: string; token: string },
): Promise<void> {
  const document = (await (await fetch(`${services[0]!.loopbackUrl}${API_PREFIX}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  const fill = (path: string) =>
    path
      .replace('{userId}', userId)
      .replace('{workflowId}', childId)
      .replace(/\{[^}]+\}/g, 'x1');
  const targets: Array<{ path: string; methods: string[] }> = Object.entries(document.paths).map(([path, item]) => ({
    path: fill(path),
    methods: Object.keys(item).map((method) => method.toUpperCase()),
  }));
  targets.push(
    { path: '/healthz', methods: ['GET'] },
    { path: '/readyz', methods: ['GET'] },
    { path: `${API_PREFIX}/no-such-endpoint`, methods: ['GET'] },
    { path: '/no-such-endpoint', methods: ['GET'] },
    { path: `${API_PREFIX}/workflow?integration=${'x'.repeat(9000)}`, methods: ['GET'] },
    { path: `${API_PREFIX}/user/%00`, methods: ['GET'] },
  );
  const origins = [undefined, ALLOWED_ORIGIN, 'https://elsewhere.example.test', ''];
  const credentials = [undefined, apiKey, token, 'not-a-credential'];
  let compared = 0;
  const differences: string[] = [];
  const statuses = new Map<string, number>();
  const compare = async (
    label: string,
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: Buffer,
  ) => {
    // A token is new at each call (its time and id): its text is left out, its presence kept.
    const [a, b] = (
      await Promise.all(
        services.map((service) => answer(service, path, 'localhost:4010', undefined, headers, method, body)),
      )
    ).map((text) => text.replace(/"token":"[^"]+"/, '"token":"…"'));
    compared++;
    const status = a!.slice(0, 3);
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    if (a !== b) differences.push(`${label} ${method} ${path.slice(0, 80)}:\n${a}\n---\n${b}`);
  };
  for (const { path, methods } of targets) {
    for (const origin of origins) {
      const withOrigin: Record<string, string> = origin === undefined ? {} : { Origin: origin };
      for (const credential of credentials) {
        const headers = { ...withOrigin, ...(credential ? { Authorization: `Bearer ${credential}` } : {}) };
        const label = `Origin ${origin ?? '(none)'}, ${credential === undefined ? 'no credential' : credential === apiKey ? 'API key' : credential === token ? 'user token' : 'bad credential'},`;
        await compare(label, 'GET', path, headers);
        await compare(label, 'HEAD', path, headers);
      }
      await compare(`Origin ${origin ?? '(none)'},`, 'OPTIONS', path, withOrigin);
      for (const method of methods) {
        await compare(`Origin ${origin ?? '(none)'}, preflight for ${method},`, 'OPTIONS', path, {
          ...withOrigin,
          'Access-Control-Request-Method': method,
          'Access-Control-Request-Headers': 'authorization,content-type',
        });
      }
    }
  }
  // A compressed body, refused before it is read (a bad credential first): nothing is written.
  const gzipped = Buffer.from([0x1f, 0x8b, 0x08, 0x00]);
  for (const credential of [apiKey, 'not-a-credential']) {
    for (const origin of [undefined, ALLOWED_ORIGIN]) {
      await compare(
        `compressed body, Origin ${origin ?? '(none)'},`,
        'POST',
        `${API_PREFIX}/user`,
        {
          ...(origin ? { Origin: origin } : {}),
          Authorization: `Bearer ${credential}`,
          'Content-Type': 'application/json',
          'Content-Encoding': 'gzip',
        },
        gzipped,
      );
    }
  }
  for (const difference of differences) console.log(`\nDIFFERENT: ${difference}`);
  console.log(
    `${compared} answers compared (status, headers but Date, body; ${[...statuses].map(([status, n]) => `${n} × ${status}`).join(', ')}): ${differences.length === 0 ? 'all byte-identical' : `${differences.length} different`}.`,
  );
  if (differences.length > 0) process.exitCode = 1;
}

/** An answer as text: the status line, every header but Date (in the order sent), the body. */
function answer(
  service: ServiceProcess,
  path: string,
  host: string,
  credential?: string,
  headers: Record<string, string> = {},
  method = 'GET',
  body?: Buffer,
): Promise<string> {
  // `--stack`'s paths are whole (the probes are outside the API's prefix).
  const url = new URL(`${service.loopbackUrl}${stack ? '' : API_PREFIX}${path}`);
  return new Promise((done, fail) => {
    const req = request(
      url,
      {
        method,
        headers: { Host: host, ...(credential ? { Authorization: `Bearer ${credential}` } : {}), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const headers: string[] = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2) {
            if (res.rawHeaders[i]!.toLowerCase() !== 'date')
              headers.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
          }
          done([`${res.statusCode} ${res.statusMessage}`, ...headers, '', Buffer.concat(chunks).toString()].join('\n'));
        });
        res.on('error', fail);
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}
