/**
 * GET /setup: what the configuration modal opens with, in one request. Its parts must be exactly
 * what the separate embed operations answer (GET /workflow, GET /workflow/:id, GET /credentials),
 * so each is compared with the real answer of that operation, not with a copy of its shape.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ForgeApiError, ForgeEmbedClient } from '../../src/api/index.js';
import type { ChildWorkflow, ParentWorkflow } from '../../src/api/types.js';
import {
  type Answer,
  APP_ORIGIN,
  assertKeys,
  assertProblem,
  demoCatalog,
  FOREIGN_ORIGIN,
  sample,
  sampleIntegration,
  TestService,
  unknownId,
  withWorkflowSwitchedOff,
} from './support.js';

let forge: TestService;
before(async () => {
  forge = await TestService.start();
});
after(() => forge.close());

const { parent, variablesBlock, text } = sample;
const integration = sampleIntegration;
/** A parent that does not use it. */
const unrelated = demoCatalog.workflows.find((w) => !w.integrations.includes(integration))!;

const setup = (token: string, search: string) => forge.asUser(token, 'GET', `/setup?${search}`);

/** The parents GET /workflow lists for that query, as the user's token reads them. */
async function listed(token: string, search = ''): Promise<ParentWorkflow[]> {
  return (await forge.asUser(token, 'GET', `/workflow${search}`)).body.data;
}

async function child(token: string, childId: string): Promise<ChildWorkflow> {
  return (await forge.asUser(token, 'GET', `/workflow/${childId}`)).body;
}

function assertSetup(answer: Answer): void {
  assert.equal(answer.status, 200, answer.text);
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
  assertKeys(answer.body, ['workflows', 'installed', 'credentials'], 'setup');
}

describe('GET /setup?workflowId=', () => {
  test('for a parent the user has not installed: that parent as GET /workflow lists it, nothing installed', async () => {
    const { token } = await forge.newUser();
    const answer = await setup(token, `workflowId=${parent.workflowId}`);
    assertSetup(answer);
    const [fromListing] = (await listed(token)).filter((w) => w.workflowId === parent.workflowId);
    assert.deepEqual(answer.body.workflows, [fromListing]);
    assert.deepEqual(answer.body.installed, []);
    assert.deepEqual(answer.body.credentials, []);
  });

  test("for an installed parent: the user's copy in full, with its current values, as GET /workflow/:id answers it", async () => {
    const { userId, token } = await forge.newUser();
    const childId = await forge.install(userId, token);
    await forge.install(userId, token, unrelated);
    const patched = await forge.asUser(token, 'PATCH', `/workflow/${childId}/variables/${variablesBlock.id}`, {
      [text.name]: 'set by this user',
    });
    assert.equal(patched.status, 200, patched.text);

    const answer = await setup(token, `workflowId=${parent.workflowId}`);
    assertSetup(answer);
    assert.equal(answer.body.installed.length, 1, 'only the copy of the parent asked for');
    const [installed] = answer.body.installed as ChildWorkflow[];
    assert.deepEqual(installed, await child(token, childId));
    assert.equal(installed!._id, childId);
    assert.equal(installed!.parentId, parent.workflowId);
    assert.equal(installed!.userId, userId);
    const values = installed!.blocks.find((b) => b.id === variablesBlock.id)!.parameters.variables!;
    assert.equal(values.find((v) => v.name === text.name)!.value, 'set by this user');
  });

  test('credentials are exactly what GET /credentials answers: names and dates, never secrets', async () => {
    const { userId, token } = await forge.newUser();
    await forge.install(userId, token);
    const answer = await setup(token, `workflowId=${parent.workflowId}`);
    assertSetup(answer);
    const credentials = (await forge.asUser(token, 'GET', '/credentials')).body.data;
    assert.deepEqual(answer.body.credentials, credentials);
    assert.deepEqual(
      answer.body.credentials.map((c: { integration: string }) => c.integration).sort(),
      [...parent.integrations].sort(),
    );
    for (const credential of answer.body.credentials) assertKeys(credential, ['integration', 'connectedAt', 'status']);
  });

  test('an unknown id, or a child id, is a 404 that says where parent ids come from', async () => {
    const { userId, token } = await forge.newUser();
    const childId = await forge.install(userId, token);
    for (const id of [unknownId(), childId]) {
      assertProblem(await setup(token, `workflowId=${id}`), 404, { detail: /parent workflow.*GET \/workflow/ });
    }
  });
});

describe('GET /setup?integration=', () => {
  test("the integration's parents as GET /workflow filters them, and the user's copies of exactly those", async () => {
    const { userId, token } = await forge.newUser();
    const childId = await forge.install(userId, token);
    await forge.install(userId, token, unrelated);

    const answer = await setup(token, `integration=${integration}`);
    assertSetup(answer);
    const offered = await listed(token, `?integration=${integration}`);
    assert.ok(offered.length > 1, `the demo catalog has several ${integration} workflows`);
    assert.deepEqual(answer.body.workflows, offered);
    assert.deepEqual(answer.body.installed, [await child(token, childId)]);
  });

  test('an unknown integration has no workflows (as the GET /workflow filter), not an error', async () => {
    const { userId, token } = await forge.newUser();
    await forge.install(userId, token);
    const answer = await setup(token, 'integration=no-such-integration');
    assertSetup(answer);
    assert.deepEqual(answer.body.workflows, []);
    assert.deepEqual(answer.body.installed, []);
    assert.equal(answer.body.credentials.length, parent.integrations.length);
  });

  test('a parent switched off in the catalog is not offered, and its old copies are not shown', async () => {
    await withWorkflowSwitchedOff(parent.workflowId, async (other) => {
      const { userId, token } = await other.newUser();
      // A copy made while the parent was still on offer.
      await other.store.children.create(userId, parent.workflowId, {});
      assertProblem(await other.asUser(token, 'GET', `/setup?workflowId=${parent.workflowId}`), 404);
      const answer = await other.asUser(token, 'GET', `/setup?integration=${integration}`);
      assertSetup(answer);
      const ids = answer.body.workflows.map((w: ParentWorkflow) => w.workflowId);
      assert.ok(ids.length > 0 && !ids.includes(parent.workflowId));
      assert.deepEqual(answer.body.installed, []);
    });
  });
});

describe('GET /setup, kept per user at the version of their workflows and connections (issue 29)', () => {
  /**
   * Each answer, read twice (the second is sent as kept), is what the separate reads answer now:
   * the user's copy of the sample parent as GET /workflow/:id answers it, and GET /credentials.
   * A write that did not move the version would leave the first read of the next step stale.
   */
  async function assertCurrent(token: string, childId: string | undefined, step: string): Promise<void> {
    const installed = childId ? [await child(token, childId)] : [];
    const credentials = (await forge.asUser(token, 'GET', '/credentials')).body.data;
    for (const search of [`workflowId=${parent.workflowId}`, `integration=${integration}`]) {
      for (const read of ['first', 'second']) {
        const answer = await setup(token, search);
        assertSetup(answer);
        assert.deepEqual(answer.body.installed, installed, `${step}: ${search}, ${read} read`);
        assert.deepEqual(answer.body.credentials, credentials, `${step}: ${search}, ${read} read`);
      }
    }
  }

  test('every write to the workflows and connections shows in the next answer, after one was kept', async () => {
    const { userId, token } = await forge.newUser();
    await assertCurrent(token, undefined, 'a new user');
    await forge.connect(userId, integration);
    await assertCurrent(token, undefined, 'connected');
    const childId = await forge.install(userId, token);
    await assertCurrent(token, childId, 'installed');
    const patched = await forge.asUser(token, 'PATCH', `/workflow/${childId}/variables/${variablesBlock.id}`, {
      [text.name]: 'changed since',
    });
    assert.equal(patched.status, 200, patched.text);
    await assertCurrent(token, childId, 'variables');
    for (const action of ['deactivate', 'activate']) {
      const switched = await forge.asUser(token, 'PUT', `/workflow/${childId}/${action}`);
      assert.equal(switched.status, 200, switched.text);
      await assertCurrent(token, childId, action);
    }
    await forge.store.credentials.markBroken(userId, integration);
    await assertCurrent(token, childId, 'broken');
    await forge.connect(userId, integration);
    await assertCurrent(token, childId, 'connected again');
    // Ending the connection also switches off the copies that use it.
    const ended = await forge.asUser(token, 'DELETE', `/credentials/${integration}`);
    assert.equal(ended.status, 200, ended.text);
    assert.equal((await child(token, childId)).active, false);
    await assertCurrent(token, childId, 'connection ended');
    const removed = await forge.asUser(token, 'DELETE', `/workflow/${childId}`);
    assert.ok(removed.status < 300, removed.text);
    await assertCurrent(token, undefined, 'removed');
  });

  test('two users at the same version, origin and filter each get their own answer', async () => {
    const a = await forge.userWithChild();
    const b = await forge.userWithChild();
    const search = `workflowId=${parent.workflowId}`;
    for (let round = 0; round < 2; round++) {
      for (const user of [a, b]) {
        const answer = await setup(user.token, search);
        assertSetup(answer);
        assert.deepEqual(
          answer.body.installed.map((c: ChildWorkflow) => [c._id, c.userId]),
          [[user.childId, user.userId]],
        );
      }
    }
  });
});

describe('GET /setup, refused', () => {
  test('neither or both of workflowId and integration is a 400 naming both', async () => {
    const { token } = await forge.newUser();
    for (const search of [
      '',
      'workflowId=&integration=',
      `workflowId=${parent.workflowId}&integration=${integration}`,
    ]) {
      assertProblem(await setup(token, search), 400, {
        detail: /exactly one of workflowId .* or integration/,
        errors: ['query.workflowId', 'query.integration'],
      });
    }
  });

  test("user A never sees user B's copies", async () => {
    const a = await forge.newUser();
    const b = await forge.userWithChild();
    const otherOfB = await forge.install(b.userId, b.token, unrelated);
    const aChild = await forge.install(a.userId, a.token);

    for (const search of [
      `workflowId=${parent.workflowId}`,
      `integration=${integration}`,
      'workflowId=' + unrelated.workflowId,
    ]) {
      const answer = await setup(a.token, search);
      assertSetup(answer);
      for (const copy of answer.body.installed as ChildWorkflow[]) {
        assert.equal(copy.userId, a.userId, search);
        assert.ok(![b.childId, otherOfB].includes(copy._id), search);
      }
    }
    assert.deepEqual(
      (await setup(a.token, `workflowId=${parent.workflowId}`)).body.installed.map((c: ChildWorkflow) => c._id),
      [aChild],
    );
    assert.deepEqual((await setup(a.token, `workflowId=${unrelated.workflowId}`)).body.installed, []);
    // Nor B's connections: A's are exactly A's GET /credentials, without the integrations only B connected.
    const onlyB = unrelated.integrations.filter((name) => !parent.integrations.includes(name));
    assert.ok(onlyB.length > 0, 'the unrelated parent shares every integration with the sample');
    const credentials = (await setup(a.token, `workflowId=${parent.workflowId}`)).body.credentials as Array<{
      integration: string;
    }>;
    assert.deepEqual(credentials, (await forge.asUser(a.token, 'GET', '/credentials')).body.data);
    assert.deepEqual(
      credentials.filter((c) => onlyB.includes(c.integration)),
      [],
    );
  });

  test("the API key is a 403 that asks for the user's token; no credential is a 401", async () => {
    const search = `/setup?workflowId=${parent.workflowId}`;
    assertProblem(await forge.asHost('GET', search), 403, { detail: /user's token/ });
    assertProblem(await forge.request('GET', search), 401);
  });
});

describe('GET /setup across origins', () => {
  test('answers the allowed origins, preflight included, and no other', async () => {
    const { token } = await forge.newUser();
    const path = `/setup?workflowId=${parent.workflowId}`;
    const preflight = await forge.request('OPTIONS', path, {
      headers: {
        Origin: APP_ORIGIN,
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'authorization',
      },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), APP_ORIGIN);
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Authorization/);

    const allowed = await forge.request('GET', path, { credential: token, headers: { Origin: APP_ORIGIN } });
    assertSetup(allowed);
    assert.equal(allowed.headers.get('access-control-allow-origin'), APP_ORIGIN);
    assert.match(allowed.headers.get('vary') ?? '', /Origin/);

    const foreign = await forge.request('GET', path, { credential: token, headers: { Origin: FOREIGN_ORIGIN } });
    assert.equal(foreign.headers.get('access-control-allow-origin'), null);
  });
});

describe('ForgeEmbedClient.getSetup', () => {
  test('asks for one workflow or an integration and answers the body; a 404 rejects with the problem', async () => {
    const { userId, token } = await forge.newUser();
    const childId = await forge.install(userId, token);
    const client = new ForgeEmbedClient({ baseUrl: forge.url, credential: token });
    assert.deepEqual(
      await client.getSetup({ workflowId: parent.workflowId }),
      (await setup(token, `workflowId=${parent.workflowId}`)).body,
    );
    const byIntegration = await client.getSetup({ integration });
    assert.deepEqual(
      byIntegration.installed.map((c) => c._id),
      [childId],
    );
    // A name is sent encoded, so one with reserved characters is just an unknown integration.
    assert.deepEqual((await client.getSetup({ integration: 'a&workflowId=b' })).workflows, []);
    const error = await client.getSetup({ workflowId: unknownId() }).then(
      () => assert.fail('an unknown parent was answered'),
      (reason: unknown) => reason,
    );
    assert.ok(error instanceof ForgeApiError);
    assert.equal(error.status, 404);
  });
});
