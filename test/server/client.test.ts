/** The typed client (`forge-embed/client`) in Node, against the real service. */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ForgeApiError, ForgeClient } from '../../src/api/index.js';
import { APP_ORIGIN, demoCatalog, otherParent, sample, TestService, unknownId } from './support.js';

let forge: TestService;
let host: ForgeClient;
before(async () => {
  forge = await TestService.start();
  host = new ForgeClient({ baseUrl: forge.url, credential: forge.apiKey });
});
after(() => forge.close());

/** The error a call rejects with; fails the test when the call succeeds or throws something else. */
async function failure(call: Promise<unknown>): Promise<ForgeApiError> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof ForgeApiError, `not a ForgeApiError: ${error}`);
    return error;
  }
  assert.fail('the call succeeded');
}

describe('ForgeClient with the API key (a host backend)', () => {
  test('manages a user from creation to deletion', async () => {
    const { userId } = await host.createUser({ name: 'Client User', email: 'client.user@example.com' });
    assert.ok((await host.listUsers()).some((u) => u._id === userId));
    assert.deepEqual(await host.getUser(userId), {
      _id: userId,
      fullName: 'Client User',
      email: 'client.user@example.com',
      workflows: [],
    });
    assert.deepEqual(await host.updateUser(userId, { email: 'renamed.client@example.com', fullName: 'Renamed' }), {
      _id: userId,
      fullName: 'Renamed',
      email: 'renamed.client@example.com',
    });
    const { token } = await host.getUserToken(userId, { expiresIn: 120 });
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
    assert.equal(claims.exp - claims.iat, 120);
    assert.equal(typeof (await host.disableUserWorkflows(userId)).message, 'string');
    assert.deepEqual(await host.deleteUser(userId), { success: true });
    assert.equal((await failure(host.getUser(userId))).status, 404);
  });

  test('a "/forge/2021-12" or trailing slash in baseUrl is not doubled', async () => {
    for (const baseUrl of [`${forge.url}/`, `${forge.url}/forge/2021-12`, `${forge.url}/forge/2021-12/`]) {
      const client = new ForgeClient({ baseUrl, credential: forge.apiKey });
      assert.ok((await client.listWorkflows()).length > 0, baseUrl);
    }
  });
});

describe('ForgeClient with a user token (the embedded elements)', () => {
  test('connects, installs, configures, switches, reads and uninstalls a workflow', async () => {
    const { userId, token } = await forge.newUser();
    const client = new ForgeClient({ baseUrl: forge.url, credential: token });

    const parents = await client.listWorkflows({ integration: sample.parent.integrations[0] });
    assert.ok(parents.some((p) => p.workflowId === sample.parent.workflowId));
    const parameters = demoCatalog.integrations.find((i) => i.requiredParameters?.length)!;
    const values = Object.fromEntries(parameters.requiredParameters!.map((p) => [p.name, 'v']));
    assert.equal((await client.saveCredential(parameters.name, values)).integration, parameters.name);
    assert.ok((await client.listCredentials()).some((c) => c.integration === parameters.name));
    for (const integration of sample.parent.integrations) await forge.connect(userId, integration);

    const installed = await client.installWorkflow(sample.parent.workflowId, {
      variables: { [sample.variablesBlock.id]: { [sample.number.name]: 7 } },
    });
    assert.equal(installed.active, true);
    const childId = installed.workflowId;
    assert.equal((await client.getWorkflow(childId)).parentId, sample.parent.workflowId);
    const block = await client.setVariables(childId, sample.variablesBlock.id, { [sample.text.name]: 'via client' });
    assert.deepEqual(
      block.variables.map((v) => v.value),
      sample.variablesBlock.parameters.variables!.map((v) =>
        v.name === sample.text.name ? 'via client' : v.name === sample.number.name ? 7 : v.value,
      ),
    );
    assert.deepEqual(await client.deactivateWorkflow(childId), { activated: false });
    assert.deepEqual(await client.activateWorkflow(childId), { activated: true });

    await forge.seedExecution(childId, new Date('2024-01-01T00:00:00.000Z'));
    await forge.seedExecution(childId, new Date('2024-01-02T00:00:00.000Z'));
    await forge.seedError(childId);
    const logs = await client.getWorkflowLogs(childId, { order: 'asc', limit: 1, page: 2 });
    assert.deepEqual(
      logs.map((l) => l.startedAt),
      ['2024-01-02T00:00:00.000Z'],
    );
    assert.equal((await client.getWorkflowErrors(childId)).length, 1);
    assert.equal((await client.getUser(userId)).workflows.length, 1);
    assert.deepEqual(await client.uninstallWorkflow(childId), { success: true });
  });

  test('reads its connections with their status and disconnects one; the host does the same for any user', async () => {
    const { userId, token } = await forge.newUser();
    const client = new ForgeClient({ baseUrl: forge.url, credential: token });
    const [first, second] = sample.parent.integrations;
    for (const integration of [first!, second!]) await forge.connect(userId, integration);
    const childId = await forge.install(userId, token);
    const listed = await client.listCredentials();
    assert.deepEqual(
      listed.map((c) => [c.integration, c.status]),
      [first!, second!].sort().map((name) => [name, 'connected']),
    );
    assert.deepEqual(await host.listUserCredentials(userId), listed);
    assert.deepEqual(await client.disconnect(first!), {
      integration: first,
      switchedOff: [childId],
      revocation: 'not-supported',
    });
    assert.equal((await failure(client.disconnect(first!))).status, 404);
    assert.deepEqual(await host.disconnectUser(userId, second!), {
      integration: second,
      switchedOff: [],
      revocation: 'not-supported',
    });
    assert.deepEqual(await client.listCredentials(), []);
  });

  test('starts OAuth when its fetch sends the page origin, as a browser does', async () => {
    const { token } = await forge.newUser();
    const client = new ForgeClient({
      baseUrl: forge.url,
      credential: token,
      fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, Origin: APP_ORIGIN } }),
    });
    const oauth = demoCatalog.integrations.find((i) => i.type === 'oauth2')!;
    const { url, expiresAt } = await client.startOAuth(oauth.name);
    assert.ok(url.startsWith(`${forge.url}/forge/2021-12/oauth/authorize?state=`));
    assert.ok(Date.parse(expiresAt) > Date.now());
    // A grant the popup never posted confirms nothing.
    const refused = await failure(client.confirmOAuth(oauth.name, 'made-up-grant'));
    assert.equal(refused.status, 400);
    assert.deepEqual(await client.listCredentials(), []);
  });
});

describe('ForgeApiError', () => {
  test('a 400 carries status, title, detail and the field errors', async () => {
    const error = await failure(host.createUser({ name: '', email: 'not-an-email' }));
    assert.equal(error.name, 'ForgeApiError');
    assert.equal(error.status, 400);
    assert.equal(error.title, 'Bad request');
    assert.match(error.detail, /body\.name/);
    assert.equal(error.message, error.detail);
    assert.deepEqual(
      error.errors.map((e) => e.path),
      ['body.name', 'body.email'],
    );
  });

  test('a 409 keeps the extension members of the problem (the existing child id)', async () => {
    const { token, childId } = await forge.userWithChild();
    const client = new ForgeClient({ baseUrl: forge.url, credential: token });
    const error = await failure(client.installWorkflow(sample.parent.workflowId));
    assert.equal(error.status, 409);
    assert.equal(error.problem.workflowId, childId);
    assert.deepEqual(error.errors, []);
  });

  test('404 and 403 arrive as they were sent', async () => {
    assert.equal((await failure(host.getWorkflow(unknownId()))).status, 404);
    const error = await failure(host.installWorkflow(otherParent.workflowId));
    assert.equal(error.status, 403);
    assert.match(error.detail, /user's token/);
  });

  test('an answer that is no problem document still becomes a ForgeApiError with its status', async () => {
    const proxy = createServer((_, res) =>
      res.writeHead(502, { 'Content-Type': 'text/html' }).end('<h1>Bad gateway</h1>'),
    );
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const error = await failure(new ForgeClient({ baseUrl, credential: 'x' }).listWorkflows());
      assert.equal(error.status, 502);
      assert.match(error.detail, /without a problem document/);
    } finally {
      proxy.close();
    }
  });

  test('an unreachable service is status 0 with a message that says where it looked', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const baseUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const error = await failure(new ForgeClient({ baseUrl, credential: forge.apiKey }).listWorkflows());
    assert.equal(error.status, 0);
    assert.equal(error.title, 'Network error');
    assert.ok(error.detail.includes(baseUrl));
  });

  test('an aborted call rejects with the abort, not a ForgeApiError', async () => {
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(host.listWorkflows({}, { signal: controller.signal }), (error: Error) => {
      assert.equal(error.name, 'AbortError');
      assert.ok(!(error instanceof ForgeApiError));
      return true;
    });
  });
});

describe('a credential function', () => {
  test('is asked again with {refresh: true} after a 401, and the call is retried once', async () => {
    const { userId } = await forge.createUser();
    const now = Math.floor(Date.now() / 1000);
    const expired = await forge.signedByService({ sub: userId, iat: now - 3600, exp: now - 60 });
    const fresh = await forge.token(userId);
    const asked: boolean[] = [];
    const client = new ForgeClient({
      baseUrl: forge.url,
      credential: ({ refresh }) => {
        asked.push(refresh);
        return refresh ? fresh : expired;
      },
    });
    assert.equal((await client.getUser(userId))._id, userId);
    assert.deepEqual(asked, [false, true]);
  });

  test('a second 401 is the error: no loop of refreshes', async () => {
    const { userId } = await forge.createUser();
    let asked = 0;
    const client = new ForgeClient({
      baseUrl: forge.url,
      credential: async () => {
        asked++;
        return 'not-a-token';
      },
    });
    assert.equal((await failure(client.getUser(userId))).status, 401);
    assert.equal(asked, 2);
  });

  test('other errors are not retried', async () => {
    const { token } = await forge.newUser();
    let asked = 0;
    const client = new ForgeClient({
      baseUrl: forge.url,
      credential: () => {
        asked++;
        return token;
      },
    });
    assert.equal((await failure(client.getWorkflow(unknownId()))).status, 404);
    assert.equal(asked, 1);
  });
});
