import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import commonjs from '@rollup/plugin-commonjs';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import replace from '@rollup/plugin-replace';
import { rollup } from 'rollup';

/**
 * What the framework tests (test/frameworks/) need from the test server:
 * - `/__frameworks__/<name>.js`: each framework as an app would ship it. React is CommonJS only,
 *   so its apps are bundled here with rollup, once, on first request: React 18 (installed as
 *   `react18`/`react-dom18`) together with the package's built `forge-embed/react` wrapper, as an
 *   app's bundler would; React 19 on its own. Vue's own browser ES module build is used as is.
 * - the `frameworks` server command `installedWorkflow`: a new user who has connected Stripe and
 *   Slack and enabled "Post new Stripe payments to Slack", so a test can flip its switch;
 * - the `frameworks` server command `ssr`: test/frameworks/ssr-app.mjs rendered by React 19's
 *   react-dom/server in a Node process, with the package's built `forge-embed/react`, as a
 *   Next.js server would, for the page to hydrate.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const STRIPE_TO_SLACK = '64b14ff1704e5bc1057506db';

const ENTRIES = {
  react18: {
    code: `export { default as React } from 'react';
export { createRoot } from 'react-dom/client';
export { ForgeConfigModal, ForgeIntegrationList, ForgeWorkflowList } from ${JSON.stringify(`${ROOT}/dist/src/react/index.js`)};`,
    reactVersion: 18,
  },
  react19: {
    code: `export { default as React } from 'react';
export { createRoot } from 'react-dom/client';`,
    reactVersion: 19,
  },
  // The client half of the server-rendered page; its server half is the `ssr` command below.
  react19ssr: {
    code: `export { default as React } from 'react';
export { hydrateRoot } from 'react-dom/client';
export { SsrApp } from ${JSON.stringify(`${ROOT}/test/frameworks/ssr-app.mjs`)};`,
    reactVersion: 19,
  },
};

/** Points `react` and `react-dom` (also inside react-dom itself) at the React 18 aliases. */
const useReact18 = {
  name: 'use-react-18',
  resolveId(source, importer) {
    const match = /^(react|react-dom)(\/.*)?$/.exec(source);
    if (!match) return null;
    return this.resolve(`${match[1]}18${match[2] ?? ''}`, importer, { skipSelf: true });
  },
};

async function bundle({ code, reactVersion }) {
  const build = await rollup({
    input: '\0entry',
    plugins: [
      {
        name: 'entry',
        resolveId: (id) => (id === '\0entry' ? id : null),
        load: (id) => (id === '\0entry' ? code : null),
      },
      reactVersion === 18 ? useReact18 : null,
      replace({ preventAssignment: true, values: { 'process.env.NODE_ENV': JSON.stringify('development') } }),
      nodeResolve({ browser: true, rootDir: ROOT }),
      commonjs(),
    ],
    onwarn: () => undefined,
  });
  // One file per app: the list's Runs view (an `import()` chunk for a real app's bundler) goes inside.
  const { output } = await build.generate({ format: 'es', inlineDynamicImports: true });
  return output[0].code;
}

const bundles = new Map();

/** The server half of the server-rendered page (test/frameworks/ssr-render.mjs): its HTML for `config`. */
async function serverRender(config) {
  const script = resolve(import.meta.dirname, 'ssr-render.mjs');
  const { stdout } = await promisify(execFile)(process.execPath, [script, JSON.stringify(config)]);
  return stdout;
}

export function frameworkPlugin(service) {
  const api = async (path, init = {}) => {
    const response = await fetch(`${service.url}/forge/2021-12${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${service.apiKey}`, 'Content-Type': 'application/json', ...init.headers },
    });
    if (!response.ok) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
    return response;
  };

  async function installedWorkflow() {
    const n = Math.random().toString(36).slice(2, 10);
    const created = await api('/user', {
      method: 'POST',
      body: JSON.stringify({ name: `Framework ${n}`, email: `fw-${n}@example.com` }),
    });
    const { userId } = await created.json();
    // Stands in for the OAuth popup and the Stripe key form, which the modal's own tests cover.
    for (const integration of ['stripe', 'slack']) {
      await service.store.credentials.save(userId, integration, service.secrets.seal({ kind: 'test' }));
    }
    const { token } = await (await api(`/user/${userId}/token`)).json();
    const installed = await api(`/workflow/${STRIPE_TO_SLACK}/install`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
      body: '{}',
    });
    const { workflowId } = await installed.json();
    return { userId, workflowId };
  }

  return {
    name: 'frameworks',
    async serve(context) {
      const name = /^\/__frameworks__\/(\w+)\.js$/.exec(context.path)?.[1];
      if (name === 'vue') return { body: "export * from '/node_modules/vue/dist/vue.esm-browser.js';", type: 'js' };
      if (!name || !ENTRIES[name]) return undefined;
      if (!bundles.has(name)) bundles.set(name, bundle(ENTRIES[name]));
      return { body: await bundles.get(name), type: 'js' };
    },
    async executeCommand({ command, payload }) {
      if (command !== 'frameworks') return undefined;
      if (payload?.action === 'installedWorkflow') return installedWorkflow();
      if (payload?.action === 'ssr') return serverRender(payload.config);
      throw new Error(`Unknown frameworks action ${payload?.action}`);
    },
  };
}
