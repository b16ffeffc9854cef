/**
 * GET /workflow-summary: the catalog as <forge-workflow-list> shows it. Each part is compared
 * with GET /workflow's real answer for the same query, so the summary can only ever be that
 * listing cut down, never a second description of the catalog.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ForgeEmbedClient } from '../../src/api/index.js';
import type { ParentWorkflow, WorkflowSummaries } from '../../src/api/types.js';
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
  withWorkflowSwitchedOff,
} from './support.js';

let forge: TestService;
before(async () => {
  forge = await TestService.start();
});
after(() => forge.close());

const { parent } = sample;
const integration = sampleIntegration;

const summary = (token: string, search = '') => forge.asUser(token, 'GET', `/workflow-summary${search}`);

async function listed(token: string, search = ''): Promise<ParentWorkflow[]> {
  return (await forge.asUser(token, 'GET', `/workflow${search}`)).body.data;
}

/**
 * What GET /workflow's answer for the same query must cut down to: each integration as it lists
 * it, with the catalog's optional `description` and `category` (which GET /workflow, the seed's
 * shape, does not carry).
 */
function cutDown(parents: ParentWorkflow[]): WorkflowSummaries {
  const integrations = new Map<string, WorkflowSummaries['integrations'][number]>();
  for (const integration of parents.flatMap((p) => p.integrations)) {
    const { description, category } = demoCatalog.integrations.find((i) => i.name === integration.name)!;
    const about = { ...(description ? { description } : {}), ...(category ? { category } : {}) };
    if (!integrations.has(integration.name)) integrations.set(integration.name, { ...integration, ...about });
  }
  return {
    workflows: parents.map((p) => ({
      workflowId: p.workflowId,
      name: p.name,
      ...(p.description !== undefined ? { description: p.description } : {}),
      integrations: p.integrations.map((i) => i.name),
      blocks: p.blocks.map(({ id, name }) => ({ id, name })),
    })),
    integrations: [...integrations.values()],
  };
}

function assertSummary(answer: Answer): WorkflowSummaries {
  assert.equal(answer.status, 200, answer.text);
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
  assertKeys(answer.body, ['workflows', 'integrations'], 'summary');
  return answer.body;
}

describe('GET /workflow-summary', () => {
  test('is GET /workflow cut to what a row shows: names, description, integrations by name, blocks by id and name', async () => {
    const { token } = await forge.newUser();
    const body = assertSummary(await summary(token));
    const parents = await listed(token);
    assert.ok(parents.length > 1);
    assert.deepEqual(body, cutDown(parents));
    for (const [i, workflow] of body.workflows.entries()) {
      const keys = ['workflowId', 'name', 'integrations', 'blocks'];
      assertKeys(workflow, workflow.description === undefined ? keys : [...keys, 'description'], `workflows[${i}]`);
      for (const block of workflow.blocks) assertKeys(block, ['id', 'name'], 'block');
      for (const name of workflow.integrations)
        assert.ok(
          body.integrations.some((it) => it.name === name),
          name,
        );
    }
    // Each integration once, with an absolute icon URL as GET /workflow gives it.
    const names = body.integrations.map((it) => it.name);
    assert.equal(new Set(names).size, names.length);
    for (const it of body.integrations) {
      const keys = ['name', 'displayName', 'icon', 'type', 'description', 'category'];
      assertKeys(it, it.requiredParameters ? [...keys, 'requiredParameters'] : keys, it.name);
      assert.match(it.icon, /^(https?:|data:)/);
    }
    // The point of it: a fraction of the full listing's bytes.
    const full = await forge.asUser(token, 'GET', '/workflow');
    assert.ok((await summary(token)).text.length < full.text.length / 2);
  });

  test('filters by integration as GET /workflow does; an unknown one has no workflows and no integrations', async () => {
    const { token } = await forge.newUser();
    const filtered = assertSummary(await summary(token, `?integration=${integration}`));
    assert.deepEqual(filtered, cutDown(await listed(token, `?integration=${integration}`)));
    assert.ok(filtered.workflows.length > 0);
    assert.ok(filtered.workflows.length < demoCatalog.workflows.length);
    assert.ok(filtered.workflows.every((w) => w.integrations.includes(integration)));
    assert.deepEqual(assertSummary(await summary(token, '?integration=no-such-integration')), {
      workflows: [],
      integrations: [],
    });
  });

  test('a parent switched off in the catalog is not listed', async () => {
    await withWorkflowSwitchedOff(parent.workflowId, async (other) => {
      const { token } = await other.newUser();
      const ids = assertSummary(await other.asUser(token, 'GET', '/workflow-summary')).workflows.map(
        (w) => w.workflowId,
      );
      assert.ok(ids.length > 0 && !ids.includes(parent.workflowId));
    });
  });

  test("is the host's catalog, the same for every user and unchanged by what a user installed", async () => {
    const a = await forge.newUser();
    const b = await forge.userWithChild();
    assert.deepEqual(assertSummary(await summary(a.token)), assertSummary(await summary(b.token)));
  });
});

describe('GET /workflow-summary, refused', () => {
  test("the API key is a 403 that asks for the user's token; no credential or a stranger's token is a 401", async () => {
    assertProblem(await forge.asHost('GET', '/workflow-summary'), 403, { detail: /user's token/ });
    assertProblem(await forge.request('GET', '/workflow-summary'), 401);
    const { userId } = await forge.newUser();
    assertProblem(await summary(await forge.signedByStranger(userId)), 401);
  });

  test('answers the allowed origins, preflight included, and no other', async () => {
    const { token } = await forge.newUser();
    const preflight = await forge.request('OPTIONS', '/workflow-summary', {
      headers: {
        Origin: APP_ORIGIN,
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'authorization',
      },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), APP_ORIGIN);
    const allowed = await forge.request('GET', '/workflow-summary', {
      credential: token,
      headers: { Origin: APP_ORIGIN },
    });
    assertSummary(allowed);
    assert.equal(allowed.headers.get('access-control-allow-origin'), APP_ORIGIN);
    const foreign = await forge.request('GET', '/workflow-summary', {
      credential: token,
      headers: { Origin: FOREIGN_ORIGIN },
    });
    assert.equal(foreign.headers.get('access-control-allow-origin'), null);
  });
});

describe('ForgeEmbedClient.listWorkflowSummaries', () => {
  test('answers the body, with the integration filter sent encoded', async () => {
    const { token } = await forge.newUser();
    const client = new ForgeEmbedClient({ baseUrl: forge.url, credential: token });
    assert.deepEqual(await client.listWorkflowSummaries(), (await summary(token)).body);
    assert.deepEqual(
      await client.listWorkflowSummaries({ integration }),
      (await summary(token, `?integration=${integration}`)).body,
    );
    // A name with reserved characters is sent encoded, so it is just an unknown integration.
    assert.deepEqual((await client.listWorkflowSummaries({ integration: 'a&b=c' })).workflows, []);
  });
});
