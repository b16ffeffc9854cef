/**
 * Two service processes on one PostgreSQL database whose runs need the same token refreshed at
 * the same moment make exactly one refresh request, counted at the provider (oidc-provider on
 * loopback): the row lock holds the second until the first stored the new token, which it then
 * uses. On SQLite (one instance) the single flight inside the process does the same, tested in
 * test/server/oauth.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { BACKEND } from './backend.js';
import { Cluster, type Instance } from './instances-support.js';
import { followRedirects, startProvider, type TestProvider } from './oauth-support.js';

const skip = BACKEND === 'postgres' ? false : 'needs PostgreSQL (several instances share one database)';

let cluster: Cluster;
let provider: TestProvider;
let a: Instance;
let b: Instance;

before(async () => {
  if (skip) return;
  const started = await startProvider();
  const secret = 'cluster-secret-cluster-secret-cluster-secret';
  cluster = await Cluster.create(
    new Date(),
    { FORGE_CLUSTER_ID: 'cluster-client', FORGE_CLUSTER_SECRET: secret },
    {
      integrations: [
        {
          name: 'clusterco',
          displayName: 'ClusterCo',
          icon: 'slack.svg',
          type: 'oauth2',
          auth: {
            kind: 'oauth2',
            authorizationUrl: `${started.issuer}/auth`,
            tokenUrl: `${started.issuer}/token`,
            scopes: ['read'],
            clientAuth: 'basic',
            clientIdEnv: 'FORGE_CLUSTER_ID',
            clientSecretEnv: 'FORGE_CLUSTER_SECRET',
          },
          // The provider itself answers this path (its discovery document): any origin of the integration's would do.
          api: { baseUrl: started.issuer },
        },
      ],
      workflows: [
        {
          workflowId: 'wf-cluster',
          name: 'Ping',
          integrations: ['clusterco'],
          blocks: [
            { id: '00000000-0000-4000-8000-000000000001', name: 'Hook', type: 'webhook', parameters: {} },
            {
              id: '00000000-0000-4000-8000-000000000002',
              name: 'Ping',
              type: 'http',
              integration: 'clusterco',
              parameters: { url: '/.well-known/openid-configuration' },
            },
          ],
        },
      ],
    },
  );
  a = await cluster.start('a');
  b = await cluster.start('b');
  // Access tokens that live 4 s: refreshed once half their life has passed.
  provider = started.configure(
    [{ client_id: 'cluster-client', client_secret: secret, token_endpoint_auth_method: 'client_secret_basic' }],
    `${a.url}/forge/2021-12/oauth/callback`,
    4,
  );
});

after(async () => {
  await cluster?.close();
  await provider?.close();
});

test('two instances that need the same refresh at the same moment make one refresh request', { skip }, async () => {
  const user = await a.api('POST', '/user', { name: 'Ada', email: 'ada@example.com' });
  const token = (await a.api('GET', `/user/${user.body.userId}/token`)).body.token as string;
  const started = await a.api('POST', '/credentials/clusterco/oauth', undefined, token);
  assert.equal(started.status, 200, JSON.stringify(started.body));
  const toProvider = (await fetch(started.body.url, { redirect: 'manual' })).headers.get('location')!;
  const callback = await followRedirects(toProvider, `${a.url}/forge/2021-12/oauth/callback`);
  const page = await (await fetch(callback)).text();
  const grant = JSON.parse(/postMessage\((\{.*?\}), /.exec(page)![1]!).grant as string;
  assert.equal((await a.api('POST', '/credentials/clusterco/oauth/confirm', { grant }, token)).status, 200);
  const installed = await a.api('POST', '/workflow/wf-cluster/install', {}, token);
  assert.equal(installed.status, 201, JSON.stringify(installed.body));
  const child = await a.api('GET', `/workflow/${installed.body.workflowId}`);
  const hook = new URL(child.body.webhookUrl).pathname;
  // Past half the token's life, both runs need a refresh (not a timed assertion: a later start only finds it staler).
  await new Promise((resolve) => setTimeout(resolve, 2500));
  const before = provider.tokenRequests.refresh_token;
  const answers = await Promise.all(
    [a, b].map((instance) =>
      fetch(`${instance.url}${hook}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Prefer: 'wait=30' },
        body: '{}',
      }),
    ),
  );
  const executions = await Promise.all(answers.map((answer) => answer.json()));
  assert.deepEqual(
    executions.map((e) => e.finished ?? e.execution?.finished),
    [true, true],
    JSON.stringify(executions),
  );
  assert.equal(provider.tokenRequests.refresh_token, before + 1);
});
