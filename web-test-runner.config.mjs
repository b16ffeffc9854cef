import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { esbuildPlugin } from '@web/dev-server-esbuild';
import { defaultReporter } from '@web/test-runner';
import { oauthReturnPage } from './dist/src/host/index.js';
import { startService } from './server/dist/app.js';
import { DEMO_CATALOG } from './server/dist/paths.js';
import { startSandbox } from './server/dist/sandbox.js';
import {
  closeOtherWindows,
  consentInPopup,
  ENGINES,
  engineOf,
  launchers,
  pressChord,
  startWebKitDriver,
} from './test/engines.mjs';
import { frameworkPlugin } from './test/frameworks/plugin.mjs';

/**
 * Browser tests run in Chromium, Firefox and WebKit (test/engines.mjs; `WTR_BROWSERS=firefox,webkit`
 * picks some) against the real local Forge service, started here over HTTP with an in-memory
 * database. The test page reaches it two ways:
 * - directly at `service.url` (CORS allows this runner's origin), as a host page would;
 * - through `/faulty/<engine>` on this server, a pass-through proxy that a test can arm to answer
 *   a 500, drop the connection or cut a body short for the next matching request, for the
 *   failures the real service cannot be asked to produce, or to hold requests until several wait
 *   together (which shows what a page sent side by side). Each engine has its own, since the
 *   engines run side by side.
 * The `forge` server command does what a host backend does with the API key (create users,
 * mint tokens), so the key never reaches the page. `/test-host/token?user=<id>` is a token
 * endpoint like a host's, for `token-url`.
 */
// WTR_PORT lets several runs share one machine.
const PORT = Number(process.env.WTR_PORT ?? 8765);
const ORIGIN = `http://localhost:${PORT}`;
const COUNTS_FILE = process.env.WTR_COUNTS_FILE;
const BROWSERS = process.env.WTR_BROWSERS?.split(',').filter(Boolean) ?? ENGINES;
// WebKitWebDriver and its Xvfb display take the next port.
const WEBKIT_DRIVER_PORT = PORT + 1;
const stopWebKitDriver = BROWSERS.includes('webkit') ? await startWebKitDriver(WEBKIT_DRIVER_PORT) : () => undefined;

// The workflows' HTTP blocks call the sandbox's stand-in apps, so runs succeed and fail for real.
const sandbox = await startSandbox({ port: 0 });
const service = await startService({ port: 0, db: ':memory:', allowedOrigins: [ORIGIN], sandboxUrl: sandbox.url });
// A service whose local provider's consent page sends Cross-Origin-Opener-Policy: same-origin, as
// Microsoft's login does: the popup loses its opener (test/config-modal.coop.test.ts).
const coopService = await startService({
  port: 0,
  db: ':memory:',
  allowedOrigins: [ORIGIN],
  localProvider: { consentOpenerPolicy: 'same-origin' },
});
const coopApi = (path, init = {}) =>
  fetch(`${coopService.url}/forge/2021-12${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${coopService.apiKey}`, 'Content-Type': 'application/json' },
  }).then(async (r) => ({ status: r.status, body: await r.json() }));

/**
 * A catalog of LONG_LIST_ROWS workflows (copies of the demo's first one, numbered), on a service of
 * its own: long enough that <forge-workflow-list> renders only the rows near the viewport. Each
 * also works with one of LONG_LIST_APPS more apps, so <forge-integration-list> has a long grid too.
 */
const LONG_LIST_ROWS = 300;
const LONG_LIST_APPS = 120;
/** The apps the long catalog's grid shows: the first workflow's and the LONG_LIST_APPS. */
let longListAppCount = 0;
function writeLongCatalog() {
  const dir = mkdtempSync(join(tmpdir(), 'forge-long-catalog-'));
  cpSync(join(dirname(DEMO_CATALOG), 'icons'), join(dir, 'icons'), { recursive: true });
  const demo = JSON.parse(readFileSync(DEMO_CATALOG, 'utf8'));
  const apps = Array.from({ length: LONG_LIST_APPS }, (_, n) => ({
    ...demo.integrations.find((app) => app.type === 'oauth2'),
    name: `long-app-${n + 1}`,
    displayName: `Long app ${n + 1}`,
  }));
  const workflows = Array.from({ length: LONG_LIST_ROWS }, (_, n) => ({
    ...demo.workflows[0],
    workflowId: `long-${String(n + 1).padStart(3, '0')}`,
    name: `Long list workflow ${n + 1}`,
    integrations: [...demo.workflows[0].integrations, apps[n % LONG_LIST_APPS].name],
  }));
  longListAppCount = new Set(workflows.flatMap((workflow) => workflow.integrations)).size;
  writeFileSync(
    join(dir, 'catalog.json'),
    JSON.stringify({ ...demo, integrations: [...demo.integrations, ...apps], workflows }),
  );
  return join(dir, 'catalog.json');
}
const longService = await startService({
  port: 0,
  db: ':memory:',
  catalog: writeLongCatalog(),
  allowedOrigins: [ORIGIN],
});
/**
 * The demo catalog plus a workflow with a setting of every type (test/fixtures/typed-workflow.json,
 * issue 26), on a service of its own, so the demo's workflows stay as the other tests know them.
 */
function writeTypedCatalog() {
  const dir = mkdtempSync(join(tmpdir(), 'forge-typed-catalog-'));
  cpSync(join(dirname(DEMO_CATALOG), 'icons'), join(dir, 'icons'), { recursive: true });
  const demo = JSON.parse(readFileSync(DEMO_CATALOG, 'utf8'));
  const typed = JSON.parse(readFileSync(new URL('./test/fixtures/typed-workflow.json', import.meta.url), 'utf8'));
  writeFileSync(join(dir, 'catalog.json'), JSON.stringify({ ...demo, workflows: [...demo.workflows, typed] }));
  return join(dir, 'catalog.json');
}
const typedService = await startService({
  port: 0,
  db: ':memory:',
  catalog: writeTypedCatalog(),
  allowedOrigins: [ORIGIN],
  sandboxUrl: sandbox.url,
});
// A service that allows no page's origin, and an address where nothing listens: a refused
// origin and a network failure, which the elements must tell apart (test/cors.test.ts).
const refusingService = await startService({ port: 0, db: ':memory:', allowedOrigins: [] });
const deadBase = await new Promise((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address();
    probe.close(() => resolve(`http://127.0.0.1:${port}`));
  });
});
const longApi = (path, init = {}) =>
  fetch(`${longService.url}/forge/2021-12${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${longService.apiKey}`, 'Content-Type': 'application/json' },
  }).then((r) => r.json());

/** The service a command is for: the demo's, or with `on: 'typed'` the one with typed settings. */
const serviceFor = (args) => (args.on === 'typed' ? typedService : service);

const api = (path, init = {}, on = service) =>
  fetch(`${on.url}/forge/2021-12${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${on.apiKey}`, 'Content-Type': 'application/json', ...init.headers },
  }).then(async (r) => ({ status: r.status, body: await r.json() }));

/** Faults armed by tests: each answers the next request from its engine whose method and path match, once. */
let faults = [];
/** Per engine, the requests a test asked the proxy to gather (`gatherRequests`), and the groups let go. */
const gatherings = new Map();

const forgeCommands = {
  name: 'forge-commands',
  async serverStop() {
    stopWebKitDriver();
    await service.close();
    await longService.close();
    await refusingService.close();
    await coopService.close();
    await typedService.close();
    await sandbox.close();
  },
  async executeCommand({ command, payload, session }) {
    if (command === 'press-chord') return pressChord(session, payload.keys);
    if (command !== 'forge') return undefined;
    const engine = engineOf(session);
    const { action, ...args } = payload;
    switch (action) {
      case 'info':
        return {
          apiBase: service.url,
          faultyBase: `${ORIGIN}/faulty/${engine}`,
          refusingBase: refusingService.url,
          typedBase: typedService.url,
          deadBase,
        };
      case 'longList': {
        const n = Math.random().toString(36).slice(2, 10);
        const { userId } = await longApi('/user', {
          method: 'POST',
          body: JSON.stringify({ name: `Long list user ${n}`, email: `long-${n}@example.com` }),
        });
        return {
          apiBase: longService.url,
          userId,
          rows: LONG_LIST_ROWS,
          apps: longListAppCount,
        };
      }
      case 'longToken':
        return (await longApi(`/user/${args.userId}/token`)).token;
      case 'createUser': {
        const n = Math.random().toString(36).slice(2, 10);
        const { body } = await api(
          '/user',
          {
            method: 'POST',
            body: JSON.stringify({ name: args.name ?? `Test user ${n}`, email: `user-${n}@example.com` }),
          },
          serviceFor(args),
        );
        return body.userId;
      }
      case 'token': {
        const qs = args.expiresIn ? `?expiresIn=${args.expiresIn}` : '';
        return (await api(`/user/${args.userId}/token${qs}`, {}, serviceFor(args))).body.token;
      }
      case 'getUser':
        return (await api(`/user/${args.userId}`, {}, serviceFor(args))).body;
      case 'api':
        return api(
          args.path,
          { method: args.method ?? 'GET', body: args.body && JSON.stringify(args.body), headers: args.headers },
          serviceFor(args),
        );
      case 'fault':
        faults.push({ engine, method: args.method, path: new RegExp(args.path), kind: args.kind, body: args.body });
        return true;
      case 'clearFaults':
        faults = faults.filter((f) => f.engine !== engine);
        gatherings.delete(engine);
        return true;
      case 'gather':
        gatherings.set(engine, {
          method: args.method,
          path: new RegExp(args.path),
          count: args.count,
          waiting: [],
          groups: [],
        });
        return true;
      case 'gathered':
        return gatherings.get(engine)?.groups ?? [];
      case 'authorize':
        return authorizeWithoutBrowser(args.url);
      case 'consent':
        return consentInPopup(session, args.decision, args.detached);
      case 'closeOtherWindows':
        return closeOtherWindows(session);
      case 'coopUser': {
        const n = Math.random().toString(36).slice(2, 10);
        const { body } = await coopApi('/user', {
          method: 'POST',
          body: JSON.stringify({ name: `COOP user ${n}`, email: `coop-${n}@example.com` }),
        });
        return { apiBase: coopService.url, userId: body.userId };
      }
      case 'connect':
        // Stands in for a finished OAuth popup or parameter form: the user's credential is stored.
        // `revoked`: one the apps refuse (the sandbox answers 401 to a token that starts so).
        // `account`: the label the app gave; `broken`: one the service found the app refuses.
        for (const integration of args.integrations) {
          const accessToken = `${args.revoked ? 'revoked' : 'test'}-${integration}`;
          const target = serviceFor(args);
          await target.store.credentials.save(
            args.userId,
            integration,
            target.secrets.seal({ kind: 'oauth2', accessToken }),
            args.account ?? null,
          );
          if (args.broken) await target.store.credentials.markBroken(args.userId, integration);
        }
        return true;
      default:
        throw new Error(`Unknown forge action ${action}`);
    }
  },
};

/**
 * Completes a one-time OAuth authorization URL over plain HTTP, as a user who presses Allow on
 * the local consent page would: for tests that need a user with a connected account. Answers
 * the grant the callback page posts to its opener, which the page then confirms.
 */
async function authorizeWithoutBrowser(url) {
  const consentPage = (await fetch(url, { redirect: 'manual' })).headers.get('location');
  const decided = await fetch(consentPage, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'decision=allow',
  });
  const page = await (await fetch(decided.headers.get('location'))).text();
  return /"grant":"([\w-]+)"/.exec(page)?.[1];
}

/**
 * A host page under a strict Content-Security-Policy, for test/csp.test.ts: no inline script or
 * style may run, and a `securitypolicyviolation` anywhere in it is recorded in `window.violations`
 * by a script of its own, loaded before the CDN bundle. The services' origins are allowed for
 * images (the catalog's icons) and requests, as any host whose Forge service runs elsewhere must.
 */
const STRICT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Strict CSP</title>
<script src="/csp/violations.js"></script>
<script type="module" src="/dist/cdn/forge-embed.min.js"></script>
</head><body></body></html>`;
const RECORD_VIOLATIONS = `window.violations = [];
document.addEventListener('securitypolicyviolation', (event) => {
  window.violations.push([event.violatedDirective, event.blockedURI, event.sample].filter(Boolean).join(' '));
});`;

function strictPage(ctx) {
  const services = `${service.url} ${longService.url}`;
  ctx.set(
    'Content-Security-Policy',
    `default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' ${services}; connect-src 'self' ${services}`,
  );
  ctx.type = 'text/html';
  ctx.body = STRICT_PAGE;
}

/** The host-style token endpoint and the fault-injecting proxy. */
async function testHost(ctx, next) {
  if (ctx.path === '/csp/page.html') return strictPage(ctx);
  // The OAuth return page forge-embed/host provides, on the test pages' origin.
  if (ctx.path === '/oauth-return') {
    ctx.type = 'text/html';
    ctx.body = oauthReturnPage();
    return;
  }
  if (ctx.path === '/csp/violations.js') {
    ctx.type = 'text/javascript';
    ctx.body = RECORD_VIOLATIONS;
    return;
  }
  // The CDN bundle on a page that cannot load its chunks: the entry file, and a 404 for the rest.
  const chunkless = /^\/cdn-without-chunks\/(.*)$/.exec(ctx.path);
  if (chunkless) {
    if (chunkless[1] !== 'forge-embed.min.js') {
      ctx.status = 404;
      return;
    }
    ctx.path = '/dist/cdn/forge-embed.min.js';
    return next();
  }
  if (ctx.path === '/test-host/token') {
    const user = ctx.query.user;
    const mode = ctx.query.mode;
    if (mode === 'error') {
      ctx.status = 500;
      ctx.body = 'token endpoint down';
      return;
    }
    if (mode === 'html') {
      ctx.type = 'text/html';
      ctx.body = '<html>login</html>';
      return;
    }
    if (mode === 'garbage') {
      ctx.type = 'application/json';
      ctx.body = JSON.stringify({ token: 'not-a-jwt' });
      return;
    }
    const { status, body } = await (ctx.query.service === 'coop' ? coopApi : api)(
      `/user/${user}/token${ctx.query.expiresIn ? `?expiresIn=${ctx.query.expiresIn}` : ''}`,
    );
    ctx.status = status;
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = JSON.stringify(body);
    return;
  }
  const faulty = /^\/faulty\/(\w+)(\/.*)$/.exec(ctx.path);
  if (faulty) {
    const [, engine, path] = faulty;
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      return;
    }
    const gathering = gatherings.get(engine);
    if (gathering && armedFor(gathering, ctx.method, path)) await gather(gathering, path);
    const fault = faults.find((f) => f.engine === engine && armedFor(f, ctx.method, path));
    if (fault) {
      faults = faults.filter((f) => f !== fault);
      if (fault.kind === 'network') {
        ctx.respond = false;
        const { socket } = ctx.req;
        if (engine === 'webkit') {
          // WebKit answers the two Content-Lengths below as a 200 whose body then fails; a status
          // line cut off mid-headers fails the fetch itself (Chromium and Firefox take that one for
          // an HTTP/0.9 answer instead).
          socket.write('HTTP/1.1 200 OK\r\nContent-Le');
          socket.destroy();
          return;
        }
        // Chrome silently re-sends a request whose reused keep-alive socket closes before any
        // response bytes, so a plain socket.destroy() often goes unnoticed. Headers it must
        // reject (two Content-Lengths) fail the fetch every time, and are never re-sent.
        socket.end('HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n');
        return;
      }
      if (fault.kind === 'truncated') {
        // A 200 whose body stops halfway: the connection closes before Content-Length is reached.
        ctx.respond = false;
        ctx.req.socket.end(
          'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 64\r\nConnection: close\r\n\r\n{"data": [',
        );
        return;
      }
      ctx.status = Number(fault.kind) || 500;
      if (fault.body !== undefined) {
        // An answer the real service would never give (a hostile or tampered one).
        ctx.type = 'application/json';
        ctx.body = JSON.stringify(fault.body);
        return;
      }
      ctx.type = 'application/problem+json';
      ctx.body = JSON.stringify({
        type: 'https://forge-embed.dev/problems/internal',
        title: 'Internal error',
        status: ctx.status,
        detail: 'The service failed to answer. Try again; if it keeps failing, see the service log.',
      });
      return;
    }
    const chunks = [];
    for await (const chunk of ctx.req) chunks.push(chunk);
    const headers = {};
    for (const name of ['authorization', 'content-type', 'accept']) if (ctx.get(name)) headers[name] = ctx.get(name);
    const response = await fetch(`${service.url}${path}${ctx.querystring ? `?${ctx.querystring}` : ''}`, {
      method: ctx.method,
      headers,
      body: chunks.length ? Buffer.concat(chunks) : undefined,
    });
    ctx.status = response.status;
    ctx.type = response.headers.get('content-type') ?? 'application/json';
    ctx.body = Buffer.from(await response.arrayBuffer());
    return;
  }
  return next();
}

/** Whether a fault or a gathering a test armed is for this request: its method (any, if none given) and a path it matches. */
const armedFor = (armed, method, path) => (!armed.method || armed.method === method) && armed.path.test(path);

/**
 * Holds a request until `count` matching ones wait together, and lets them go at once; one that
 * waits a second goes on alone. Records the paths of each group let go, so a test sees which
 * requests were in flight together without reading any clock.
 */
function gather(gathering, path) {
  return new Promise((resolve) => {
    const waiter = { path, resolve };
    const letGo = (group) => {
      gathering.waiting = gathering.waiting.filter((w) => !group.includes(w));
      gathering.groups.push(group.map((w) => w.path).sort());
      for (const w of group) w.resolve();
    };
    gathering.waiting.push(waiter);
    if (gathering.waiting.length >= gathering.count) letGo([...gathering.waiting]);
    else setTimeout(() => gathering.waiting.includes(waiter) && letGo([waiter]), 1000);
  });
}

/** Writes how many tests passed and failed, for the one summary line of `npm test`. */
function countsReporter() {
  return {
    onTestRunFinished({ sessions }) {
      let passed = 0;
      let failed = 0;
      const walk = (suite) => {
        for (const t of suite.tests) if (!t.skipped) t.passed ? passed++ : failed++;
        for (const s of suite.suites) walk(s);
      };
      for (const session of sessions) {
        if (session.testResults) walk(session.testResults);
        // A file that failed to load or threw outside a test counts as a failure.
        if (!session.passed && session.errors.length > 0) failed++;
      }
      if (COUNTS_FILE) writeFileSync(COUNTS_FILE, JSON.stringify({ passed, failed }));
    },
  };
}

export default {
  files: ['test/**/*.test.ts', '!test/server/**'],
  nodeResolve: { exportConditions: ['production'] },
  port: PORT,
  rootDir: '.',
  concurrency: 1,
  testsFinishTimeout: 300_000,
  browserStartTimeout: 60_000,
  testFramework: { config: { timeout: 20_000 } },
  plugins: [
    esbuildPlugin({ ts: true, tsconfig: './tsconfig.json', target: 'es2022' }),
    forgeCommands,
    frameworkPlugin(service),
  ],
  middleware: [testHost],
  browsers: launchers(BROWSERS, { webkitDriverPort: WEBKIT_DRIVER_PORT }),
  reporters: [defaultReporter(), countsReporter()],
};
