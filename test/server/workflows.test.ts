import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { ParentWorkflow } from '../../src/api/types.js';
import {
  API,
  assertKeys,
  assertProblem,
  assertTimestamp,
  type DemoWorkflow,
  demoCatalog,
  integrationNamed,
  listedParameters,
  otherParent,
  rawRequest,
  sample,
  TestService,
  UUID4,
  unknownId,
  withWorkflowSwitchedOff,
} from './support.js';

let forge: TestService;
before(async () => {
  forge = await TestService.start();
});
after(() => forge.close());

const { parent, variablesBlock, text, number } = sample;
const listed = demoCatalog.workflows.filter((w) => w.active !== false);

/** Checks one parent of GET /workflow field by field against the catalog entry it comes from. */
function assertParent(actual: ParentWorkflow, expected: DemoWorkflow): void {
  const where = `workflow ${expected.workflowId}`;
  assertKeys(
    actual,
    ['workflowId', 'name', 'integrations', 'blocks', ...(expected.description ? ['description'] : [])],
    where,
  );
  assert.equal(actual.workflowId, expected.workflowId);
  assert.equal(actual.name, expected.name);
  assert.deepEqual(
    actual.integrations.map((i: { name: string }) => i.name),
    expected.integrations,
  );
  for (const integration of actual.integrations) {
    const source = integrationNamed(integration.name);
    assertKeys(
      integration,
      ['name', 'displayName', 'icon', 'type', ...(source.requiredParameters ? ['requiredParameters'] : [])],
      `${where} integration ${integration.name}`,
    );
    assert.equal(integration.displayName, source.displayName);
    assert.equal(integration.type, source.type);
    assert.equal(integration.icon, `${forge.url}/forge/2021-12/icons/${source.icon}`);
    if (source.requiredParameters) {
      assert.deepEqual(integration.requiredParameters, source.requiredParameters);
      for (const parameter of integration.requiredParameters) {
        assertKeys(parameter, ['name', 'displayName', 'description'], `${integration.name} requiredParameters`);
      }
    }
  }
  assert.equal(actual.blocks.length, expected.blocks.length);
  for (const [i, block] of actual.blocks.entries()) {
    const source = expected.blocks[i]!;
    // The catalog's link from a block to its integration is internal: not part of the seed's Block.
    assertKeys(block, ['name', 'id', 'type', 'parameters'], `${where} blocks[${i}]`);
    assert.match(block.id, UUID4);
    assert.equal(block.id, source.id);
    assert.equal(block.name, source.name);
    assert.equal(block.type, source.type);
    assert.deepEqual(block.parameters, listedParameters(source.parameters));
  }
}

describe('GET /workflow', () => {
  test('answers {data: [Parent workflow]}: every active parent of the catalog, in its order and shape', async () => {
    const { userId } = await forge.createUser();
    for (const answer of [
      await forge.asHost('GET', '/workflow'),
      await forge.asUser(await forge.token(userId), 'GET', '/workflow'),
    ]) {
      assert.equal(answer.status, 200);
      assertKeys(answer.body, ['data']);
      assert.deepEqual(
        answer.body.data.map((w: { workflowId: string }) => w.workflowId),
        listed.map((w) => w.workflowId),
      );
      for (const [i, workflow] of answer.body.data.entries()) assertParent(workflow, listed[i]!);
    }
  });

  test('shows an OAuth integration and integrations with requiredParameters', async () => {
    const integrations = (await forge.asHost('GET', '/workflow')).body.data.flatMap(
      (w: { integrations: unknown[] }) => w.integrations,
    );
    assert.ok(integrations.some((i: { type: string }) => i.type === 'oauth2'));
    assert.ok(integrations.some((i: { requiredParameters?: unknown[] }) => i.requiredParameters?.length));
  });

  test('the integration filter keeps the workflows that use that integration', async () => {
    for (const { name } of demoCatalog.integrations) {
      const answer = await forge.asHost('GET', `/workflow?integration=${name}`);
      assert.equal(answer.status, 200);
      assert.deepEqual(
        answer.body.data.map((w: { workflowId: string }) => w.workflowId),
        listed.filter((w) => w.integrations.includes(name)).map((w) => w.workflowId),
        `filter ${name}`,
      );
    }
    assert.deepEqual((await forge.asHost('GET', '/workflow?integration=no-such-thing')).body, { data: [] });
  });

  // It read "integration must be a string." to someone who had given two strings.
  test('the integration filter given twice is a 400 that says to give it once', async () => {
    const answer = await forge.asHost('GET', '/workflow?integration=slack&integration=stripe');
    assertProblem(answer, 400, { errors: ['query.integration'] });
    assert.equal(answer.body.errors[0].message, 'integration must be given once; this request gave it 2 times.');
  });

  test('icon URLs carry the Host of each request, however the Hosts alternate (issue 29)', async () => {
    const iconOf = async (host: string) => {
      const answer = await rawRequest(forge.url, 'GET', `${API}/workflow`, {
        headers: { Host: host, Authorization: `Bearer ${forge.apiKey}` },
      });
      assert.equal(answer.status, 200, answer.text);
      return JSON.parse(answer.text).data[0].integrations[0].icon as string;
    };
    // A Host that is not a plain host[:port] never becomes part of a URL: the service's own address does.
    const ownOrigin = `http://localhost:${new URL(forge.url).port}`;
    for (const [host, origin] of [
      ['forge.example.test', 'http://forge.example.test'],
      ['localhost:4011', 'http://localhost:4011'],
      ['forge.example.test', 'http://forge.example.test'],
      ['evil.example.test/path', ownOrigin],
      ['[::1]:8080', 'http://[::1]:8080'],
      ['evil.example.test/path', ownOrigin],
      ['localhost:4011', 'http://localhost:4011'],
    ] as const) {
      assert.ok((await iconOf(host)).startsWith(`${origin}/forge/2021-12/icons/`), host);
    }
  });

  test('every integration icon is an image the service itself serves', async () => {
    for (const { icon } of demoCatalog.integrations) {
      const response = await fetch(`${forge.url}/forge/2021-12/icons/${icon}`);
      assert.equal(response.status, 200, icon);
      assert.equal(response.headers.get('content-type'), 'image/svg+xml');
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    }
    assertProblem(await forge.request('GET', '/icons/missing.svg'), 404);
    assertProblem(await forge.request('GET', '/icons/..%2Fdemo.json'), 404);
  });

  test('a parent switched off in the catalog is neither listed nor installable', async () => {
    await withWorkflowSwitchedOff(parent.workflowId, async (other) => {
      const ids = (await other.asHost('GET', '/workflow')).body.data.map((w: { workflowId: string }) => w.workflowId);
      assert.ok(!ids.includes(parent.workflowId));
      assert.equal(ids.length, listed.length - 1);
      const { userId, token } = await other.newUser();
      for (const integration of parent.integrations) await other.connect(userId, integration);
      assertProblem(await other.asUser(token, 'POST', `/workflow/${parent.workflowId}/install`, {}), 404);
    });
  });
});

describe('POST /workflow/:workflowId/install', () => {
  test('answers 201 {workflowId, active: true}; the child starts with the parent defaults', async () => {
    const { userId, token } = await forge.newUser();
    for (const integration of parent.integrations) await forge.connect(userId, integration);
    const answer = await forge.asUser(token, 'POST', `/workflow/${parent.workflowId}/install`, {});
    assert.equal(answer.status, 201);
    assertKeys(answer.body, ['workflowId', 'active']);
    assert.equal(answer.body.active, true);
    assert.notEqual(answer.body.workflowId, parent.workflowId, 'the child id is its own');

    const child = (await forge.asUser(token, 'GET', `/workflow/${answer.body.workflowId}`)).body;
    const block = child.blocks.find((b: { id: string }) => b.id === variablesBlock.id);
    assert.deepEqual(block.parameters.variables, listedParameters(variablesBlock.parameters).variables);
  });

  test('an install without a body is an install with the defaults', async () => {
    const { userId, token } = await forge.newUser();
    for (const integration of parent.integrations) await forge.connect(userId, integration);
    const answer = await forge.request('POST', `/workflow/${parent.workflowId}/install`, { credential: token });
    assert.equal(answer.status, 201, answer.text);
  });

  test('stores the variables given, numbers as numbers', async () => {
    const { userId, token } = await forge.newUser();
    const childId = await forge.install(userId, token, parent, {
      [variablesBlock.id]: { [text.name]: '#custom', [number.name]: 75 },
    });
    const child = (await forge.asUser(token, 'GET', `/workflow/${childId}`)).body;
    const values = Object.fromEntries(
      child.blocks
        .find((b: { id: string }) => b.id === variablesBlock.id)
        .parameters.variables.map((v: { name: string; value: unknown }) => [v.name, v.value]),
    );
    assert.equal(values[text.name], '#custom');
    assert.equal(values[number.name], 75);
  });

  test('every integration must be connected first: a 400 naming the ones that are not', async () => {
    const { userId, token } = await forge.newUser();
    const [first, second] = parent.integrations.map(integrationNamed);
    const path = `/workflow/${parent.workflowId}/install`;
    assertProblem(await forge.asUser(token, 'POST', path, {}), 400, {
      detail: new RegExp(`${first!.displayName}.*${second!.displayName}`),
      errors: [`integrations.${first!.name}`, `integrations.${second!.name}`],
    });
    await forge.connect(userId, first!.name);
    const answer = await forge.asUser(token, 'POST', path, {});
    assertProblem(answer, 400, { detail: new RegExp(second!.displayName), errors: [`integrations.${second!.name}`] });
    assert.doesNotMatch(answer.body.detail, new RegExp(first!.displayName));
    assert.deepEqual((await forge.asHost('GET', `/user/${userId}`)).body.workflows, [], 'a child was created');
  });

  test('a second install is a 409 carrying the existing child id', async () => {
    const { userId, token, childId } = await forge.userWithChild();
    const answer = await forge.asUser(token, 'POST', `/workflow/${parent.workflowId}/install`, {});
    assertProblem(answer, 409);
    assert.equal(answer.body.workflowId, childId);
    assert.equal((await forge.asHost('GET', `/user/${userId}`)).body.workflows.length, 1);
  });

  test('installs sent at once (a double click) make one child; the others are 409s naming it', async () => {
    const { userId, token } = await forge.newUser();
    for (const integration of parent.integrations) await forge.connect(userId, integration);
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => forge.asUser(token, 'POST', `/workflow/${parent.workflowId}/install`, {})),
    );
    const created = answers.filter((a) => a.status === 201);
    assert.equal(created.length, 1);
    for (const answer of answers.filter((a) => a.status !== 201)) {
      assertProblem(answer, 409);
      assert.equal(answer.body.workflowId, created[0]!.body.workflowId);
    }
  });

  const invalid: Array<[string, unknown, string[], RegExp?]> = [
    [
      'unknown variable names, named in the message',
      { variables: { [variablesBlock.id]: { nope: 'x', alsoNope: 1 } } },
      [`body.variables.${variablesBlock.id}`],
      /nope, alsoNope/,
    ],
    [
      'true where a number variable is',
      { variables: { [variablesBlock.id]: { [number.name]: true } } },
      [`body.variables.${variablesBlock.id}.${number.name}`],
      new RegExp(`${number.name} must be a string or a number`),
    ],
    [
      'a block that is not a variable block',
      { variables: { [sample.otherBlock.id]: { x: 1 } } },
      [`body.variables.${sample.otherBlock.id}`],
    ],
    ['variables that are not an object', { variables: ['x'] }, ['body.variables']],
    ['a field the operation does not know', { variable: {} }, ['body.variable']],
  ];
  for (const [what, body, paths, detail] of invalid) {
    test(`${what} is a 400 and installs nothing`, async () => {
      const { userId, token } = await forge.newUser();
      for (const integration of parent.integrations) await forge.connect(userId, integration);
      assertProblem(await forge.asUser(token, 'POST', `/workflow/${parent.workflowId}/install`, body), 400, {
        errors: paths,
        ...(detail ? { detail } : {}),
      });
      assert.deepEqual((await forge.asHost('GET', `/user/${userId}`)).body.workflows, []);
    });
  }

  test('a child id, or an unknown id, is not a parent: 404', async () => {
    const { token, childId } = await forge.userWithChild();
    assertProblem(await forge.asUser(token, 'POST', `/workflow/${childId}/install`, {}), 404, {
      detail: /GET \/workflow/,
    });
    assertProblem(await forge.asUser(token, 'POST', `/workflow/${unknownId()}/install`, {}), 404);
  });
});

describe('GET /workflow/:workflowId', () => {
  test('answers the child with its blocks, current values and timestamps', async () => {
    const { userId, token, childId } = await forge.userWithChild();
    const answer = await forge.asUser(token, 'GET', `/workflow/${childId}`);
    assert.equal(answer.status, 200);
    const child = answer.body;
    const hasWebhook = parent.blocks.some((b) => b.type === 'webhook');
    assertKeys(child, [
      '_id',
      'parentId',
      'userId',
      'name',
      'active',
      'integrations',
      'blocks',
      'createdAt',
      'updatedAt',
      ...(parent.description ? ['description'] : []),
    ]);
    assert.equal(child._id, childId);
    assert.equal(child.parentId, parent.workflowId);
    assert.equal(child.userId, userId);
    assert.equal(child.name, parent.name);
    assert.equal(child.active, true);
    assertTimestamp(child.createdAt, 'createdAt');
    assertTimestamp(child.updatedAt, 'updatedAt');
    // What it shares with its parent has the parent's shape and values.
    const { _id, parentId, userId: _owner, active, createdAt, updatedAt, webhookUrl, ...shared } = child;
    assertParent({ workflowId: parentId, ...shared }, parent);
    // The webhook URL is the sender's credential: only the API key reads it.
    assert.equal(webhookUrl, undefined);
    const asHost = (await forge.asHost('GET', `/workflow/${childId}`)).body;
    if (hasWebhook) assert.ok(asHost.webhookUrl.startsWith(`${forge.url}/`));
  });

  test('the API key reads any child; a parent id is a 400, an unknown id a 404', async () => {
    const { childId } = await forge.userWithChild();
    assert.equal((await forge.asHost('GET', `/workflow/${childId}`)).status, 200);
    assertProblem(await forge.asHost('GET', `/workflow/${parent.workflowId}`), 400, { errors: ['params.workflowId'] });
    assertProblem(await forge.asHost('GET', `/workflow/${unknownId()}`), 404);
  });
});

describe('PUT /workflow/:workflowId/activate and /deactivate', () => {
  test('answer {activated} and switch the child off and on', async () => {
    const { userId, token, childId } = await forge.userWithChild();
    const activeOf = async () => (await forge.asHost('GET', `/user/${userId}`)).body.workflows[0].active;

    const off = await forge.asUser(token, 'PUT', `/workflow/${childId}/deactivate`);
    assert.equal(off.status, 200);
    assert.deepEqual(off.body, { activated: false });
    assert.equal(await activeOf(), false);
    assert.deepEqual((await forge.asUser(token, 'PUT', `/workflow/${childId}/deactivate`)).body, { activated: false });
    assert.equal(await activeOf(), false);

    const on = await forge.asHost('PUT', `/workflow/${childId}/activate`);
    assert.equal(on.status, 200);
    assert.deepEqual(on.body, { activated: true });
    assert.equal(await activeOf(), true);
  });

  test('a parent id is a 400 that asks for a child id; an unknown id is a 404', async () => {
    for (const action of ['activate', 'deactivate']) {
      assertProblem(await forge.asHost('PUT', `/workflow/${parent.workflowId}/${action}`), 400, {
        detail: /child workflow id/,
        errors: ['params.workflowId'],
      });
      assertProblem(await forge.asHost('PUT', `/workflow/${unknownId()}/${action}`), 404);
    }
  });
});

describe('PATCH /workflow/:workflowId/variables/:blockId', () => {
  const path = (childId: string, blockId = variablesBlock.id) => `/workflow/${childId}/variables/${blockId}`;

  test('answers the updated block {blockId, variables: [{uuid, name, value}]}, numbers as numbers', async () => {
    const { token, childId } = await forge.userWithChild();
    const answer = await forge.asUser(token, 'PATCH', path(childId), { [number.name]: 120 });
    assert.equal(answer.status, 200);
    assertKeys(answer.body, ['blockId', 'variables']);
    assert.equal(answer.body.blockId, variablesBlock.id);
    const expected = variablesBlock.parameters.variables!.map((v) => ({
      uuid: v.uuid,
      name: v.name,
      value: v.name === number.name ? 120 : v.value,
    }));
    assert.deepEqual(answer.body.variables, expected);
    for (const variable of answer.body.variables) assertKeys(variable, ['uuid', 'name', 'value']);
  });

  test('saves of different variables sent at once all stay: no acknowledged write is lost', async () => {
    const { token, childId } = await forge.userWithChild();
    for (let round = 1; round <= 15; round++) {
      const saves = await Promise.all([
        forge.asUser(token, 'PATCH', path(childId), { [number.name]: round }),
        forge.asUser(token, 'PATCH', path(childId), { [text.name]: `#round-${round}` }),
      ]);
      for (const save of saves) assert.equal(save.status, 200, save.text);
      const stored = (await forge.asUser(token, 'GET', `/workflow/${childId}`)).body.blocks.find(
        (b: { id: string }) => b.id === variablesBlock.id,
      ).parameters.variables;
      const values = Object.fromEntries(stored.map((v: { name: string; value: unknown }) => [v.name, v.value]));
      assert.equal(values[number.name], round, `round ${round}: the number save was lost`);
      assert.equal(values[text.name], `#round-${round}`, `round ${round}: the text save was lost`);
    }
  });

  test('values persist, and a later save of one variable keeps the others', async () => {
    const { token, childId } = await forge.userWithChild();
    await forge.asUser(token, 'PATCH', path(childId), { [text.name]: '#ops', [number.name]: 5 });
    const second = await forge.asUser(token, 'PATCH', path(childId), { [number.name]: 6 });
    const values = Object.fromEntries(
      second.body.variables.map((v: { name: string; value: unknown }) => [v.name, v.value]),
    );
    assert.equal(values[text.name], '#ops');
    assert.equal(values[number.name], 6);
    const child = (await forge.asHost('GET', `/workflow/${childId}`)).body;
    const stored = child.blocks.find((b: { id: string }) => b.id === variablesBlock.id).parameters.variables;
    assert.deepEqual(
      stored.map((v: { value: unknown }) => v.value),
      second.body.variables.map((v: { value: unknown }) => v.value),
    );
  });

  test('a text variable accepts a number and keeps it a number', async () => {
    const { token, childId } = await forge.userWithChild();
    const answer = await forge.asUser(token, 'PATCH', path(childId), { [text.name]: 42 });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.variables.find((v: { name: string }) => v.name === text.name).value, 42);
  });

  const invalid: Array<[string, unknown, RegExp, string[]?]> = [
    ['unknown variable names', { nope: 'x', [text.name]: 'y', other: 2 }, /nope, other/, ['body']],
    ['a number variable given null', { [number.name]: null }, /string or a number/, [`body.${number.name}`]],
    ['a text variable given an object', { [text.name]: { a: 1 } }, /string or a number/, [`body.${text.name}`]],
    ['a text variable given true', { [text.name]: true }, /string or a number/, [`body.${text.name}`]],
    ['an empty object', {}, new RegExp(`${text.name}`)],
    ['an array', [1, 2], /JSON object/],
    ['a text of 10 001 characters', { [text.name]: 'x'.repeat(10_001) }, /10000/, [`body.${text.name}`]],
  ];
  for (const [what, body, detail, errors] of invalid) {
    test(`${what} is a 400 that changes nothing`, async () => {
      const { token, childId } = await forge.userWithChild();
      assertProblem(await forge.asUser(token, 'PATCH', path(childId), body), 400, {
        detail,
        ...(errors ? { errors } : {}),
      });
      const child = (await forge.asHost('GET', `/workflow/${childId}`)).body;
      const stored = child.blocks.find((b: { id: string }) => b.id === variablesBlock.id).parameters.variables;
      assert.deepEqual(stored, listedParameters(variablesBlock.parameters).variables);
    });
  }

  test('a block that is not a variable block, or no block, is a 404', async () => {
    const { token, childId } = await forge.userWithChild();
    assertProblem(await forge.asUser(token, 'PATCH', path(childId, sample.otherBlock.id), { x: 1 }), 404);
    assertProblem(
      await forge.asUser(token, 'PATCH', path(childId, '00000000-0000-4000-8000-000000000000'), { x: 1 }),
      404,
    );
  });

  test('a parent id is a 400, an unknown child a 404', async () => {
    assertProblem(await forge.asHost('PATCH', path(parent.workflowId), { [text.name]: 'x' }), 400, {
      errors: ['params.workflowId'],
    });
    assertProblem(await forge.asHost('PATCH', path(unknownId()), { [text.name]: 'x' }), 404);
  });
});

describe('GET /workflow/:workflowId/logs', () => {
  const RUNS = 25;
  let childId: string;
  let token: string;
  /** The seeded executions, oldest first. */
  let runs: string[];

  before(async () => {
    ({ childId, token } = await forge.userWithChild());
    const start = Date.parse('2024-03-01T08:00:00.000Z');
    runs = [];
    // Inserted out of order: the service must sort by startedAt, not by insertion.
    for (const i of [...Array(RUNS).keys()].sort((a, b) => ((a * 7) % RUNS) - ((b * 7) % RUNS))) {
      runs[i] = (await forge.seedExecution(childId, new Date(start + i * 60_000), i % 5 !== 0)).executionId;
    }
    // Another workflow's runs never show up in this one's logs.
    await forge.seedExecution((await forge.userWithChild()).childId, new Date(start + 30 * 60_000));
  });

  const ids = async (query = '') => {
    const answer = await forge.asUser(token, 'GET', `/workflow/${childId}/logs${query}`);
    assert.equal(answer.status, 200, answer.text);
    assertKeys(answer.body, ['data']);
    return answer.body.data.map((e: { executionId: string }) => e.executionId);
  };
  const newestFirst = () => [...runs].reverse();

  test('answers {data: [Execution log entry]} in the seed shape', async () => {
    const answer = await forge.asUser(token, 'GET', `/workflow/${childId}/logs?limit=1`);
    const [entry] = answer.body.data;
    assertKeys(entry, ['executionId', 'startedAt', 'stoppedAt', 'finished', 'results']);
    assert.equal(typeof entry.executionId, 'string');
    assertTimestamp(entry.startedAt, 'startedAt');
    assertTimestamp(entry.stoppedAt, 'stoppedAt');
    assert.equal(typeof entry.finished, 'boolean');
    const [result] = entry.results;
    assertKeys(result, ['blockId', 'startedAt', 'stoppedAt', 'data']);
    assertTimestamp(result.startedAt);
    assertTimestamp(result.stoppedAt);
    assert.ok(Array.isArray(result.data) && Array.isArray(result.data[0]));
    assertKeys(result.data[0][0], ['json', 'id']);
    assert.equal(typeof result.data[0][0].json, 'object');
  });

  test('by default: page 1, 10 entries, newest first', async () => {
    assert.deepEqual(await ids(), newestFirst().slice(0, 10));
  });

  test('pages are 1-based and end with an empty page', async () => {
    assert.deepEqual(await ids('?page=1'), newestFirst().slice(0, 10));
    assert.deepEqual(await ids('?page=2'), newestFirst().slice(10, 20));
    assert.deepEqual(await ids('?page=3'), newestFirst().slice(20));
    assert.deepEqual(await ids('?page=4'), []);
    assert.deepEqual(await ids('?page=100000000000000000000'), []);
  });

  test('limit takes up to 30, order asc gives oldest first', async () => {
    assert.deepEqual(await ids('?limit=30'), newestFirst());
    assert.deepEqual(await ids('?limit=1'), newestFirst().slice(0, 1));
    assert.deepEqual(await ids('?order=asc&limit=4&page=2'), runs.slice(4, 8));
    assert.deepEqual(await ids('?order=desc&limit=30'), newestFirst());
  });

  for (const [query, bound] of [
    ['limit=0', /1 to 30/],
    ['limit=31', /1 to 30/],
    ['limit=abc', /1 to 30/],
    ['limit=2.5', /1 to 30/],
    ['page=0', /at least 1/],
    ['page=-1', /at least 1/],
    ['page=first', /at least 1/],
  ] as const) {
    test(`${query} is a 400 that names the bound`, async () => {
      const name = query.split('=')[0]!;
      assertProblem(await forge.asUser(token, 'GET', `/workflow/${childId}/logs?${query}`), 400, {
        detail: new RegExp(`${name}.*${bound.source}`),
        errors: [`query.${name}`],
      });
    });
  }

  test('an order other than asc or desc is a 400 naming both', async () => {
    assertProblem(await forge.asUser(token, 'GET', `/workflow/${childId}/logs?order=newest`), 400, {
      detail: /"asc" or "desc"/,
      errors: ['query.order'],
    });
  });

  test('a parent id is a 400, an unknown id a 404', async () => {
    assertProblem(await forge.asHost('GET', `/workflow/${parent.workflowId}/logs`), 400, {
      errors: ['params.workflowId'],
    });
    assertProblem(await forge.asHost('GET', `/workflow/${unknownId()}/logs`), 404);
  });
});

describe('GET /workflow/:workflowId/logs, pages kept between runs (issue 29)', () => {
  const page = async (token: string, childId: string, query = '?limit=30') => {
    const answer = await forge.asUser(token, 'GET', `/workflow/${childId}/logs${query}`);
    assert.equal(answer.status, 200, answer.text);
    return answer;
  };
  const executionIds = (answer: { body: { data: Array<{ executionId: string }> } }) =>
    answer.body.data.map((e) => e.executionId);

  test('a page read again after a run is stored shows the run, at its place, in both orders', async () => {
    const { childId, token } = await forge.userWithChild();
    const older = await forge.seedExecution(childId, new Date('2024-05-01T10:00:00.000Z'));
    const newer = await forge.seedExecution(childId, new Date('2024-05-01T10:05:00.000Z'));
    // Each read twice: the second is the page as kept.
    for (let i = 0; i < 2; i++) {
      assert.deepEqual(executionIds(await page(token, childId)), [newer.executionId, older.executionId]);
      assert.deepEqual(executionIds(await page(token, childId, '?order=asc&limit=1&page=2')), [newer.executionId]);
    }
    // A run that started between the two, stored after both pages were kept.
    const between = await forge.seedExecution(childId, new Date('2024-05-01T10:02:00.000Z'));
    assert.deepEqual(executionIds(await page(token, childId)), [
      newer.executionId,
      between.executionId,
      older.executionId,
    ]);
    assert.deepEqual(executionIds(await page(token, childId, '?order=asc&limit=1&page=2')), [between.executionId]);
  });

  test('a kept page is the same bytes as the page read afresh', async () => {
    const { childId, token } = await forge.userWithChild();
    for (let i = 0; i < 3; i++) await forge.seedExecution(childId, new Date(Date.UTC(2024, 4, 2, 9, i)));
    const fresh = await page(token, childId);
    const kept = await page(token, childId);
    assert.equal(kept.text, fresh.text);
    assert.equal(kept.headers.get('content-type'), fresh.headers.get('content-type'));
    assert.equal(kept.headers.get('content-length'), fresh.headers.get('content-length'));
  });

  test("another user's token never gets a page kept for its owner; an uninstalled child's kept page is a 404", async () => {
    const { childId, token } = await forge.userWithChild();
    await forge.seedExecution(childId, new Date('2024-05-03T08:00:00.000Z'));
    await page(token, childId);
    await page(token, childId);
    const other = await forge.userWithChild();
    assertProblem(await forge.asUser(other.token, 'GET', `/workflow/${childId}/logs?limit=30`), 404);
    assert.equal((await forge.asUser(token, 'DELETE', `/workflow/${childId}`)).status, 200);
    assertProblem(await forge.asUser(token, 'GET', `/workflow/${childId}/logs?limit=30`), 404);
    assertProblem(await forge.asHost('GET', `/workflow/${childId}/logs?limit=30`), 404);
  });

  test('requests sent together, by two users for both children and an unknown one, each get only what their own would', async () => {
    // On PostgreSQL the requests of one turn read their children in one statement (issue 29).
    const first = await forge.userWithChild();
    const second = await forge.userWithChild();
    const firstRun = await forge.seedExecution(first.childId, new Date('2024-05-04T08:00:00.000Z'));
    const secondRun = await forge.seedExecution(second.childId, new Date('2024-05-04T09:00:00.000Z'));
    const missing = unknownId();
    for (let round = 0; round < 3; round++) {
      // `owner` undefined: the API key, which may read every child.
      const asked = [first, second, undefined].flatMap((owner) =>
        [first.childId, second.childId, missing].map(async (childId) => {
          const path = `/workflow/${childId}/logs?limit=30`;
          const answer = owner ? await forge.asUser(owner.token, 'GET', path) : await forge.asHost('GET', path);
          return { owner, childId, answer };
        }),
      );
      for (const { owner, childId, answer } of await Promise.all(asked)) {
        if (childId === missing || (owner && owner.childId !== childId)) {
          assertProblem(answer, 404);
          continue;
        }
        assert.equal(answer.status, 200, answer.text);
        const expected = childId === first.childId ? firstRun : secondRun;
        assert.deepEqual(executionIds(answer), [expected.executionId]);
      }
    }
  });
});

describe('GET /workflow/:workflowId/logs, deep pages', () => {
  test('every page, both orders, is exactly its slice of all runs, however the runs fall in hours', async () => {
    const { childId, token } = await forge.userWithChild();
    // Past the first thousand entries pages are found through per-hour counts: bursts in one
    // hour, single runs days apart, runs on an hour's edges, equal start times.
    const start = Date.parse('2024-05-01T00:00:00.000Z');
    const offsets = [
      ...Array.from({ length: 700 }, (_, i) => i * 1_000),
      ...Array.from({ length: 25 }, (_, i) => 3_600_000 * (i * 9 + 1)),
      ...[3_599_999, 3_600_000, 7_200_000, 7_200_000, 7_199_999],
      ...Array.from({ length: 600 }, (_, i) => 86_400_000 * 3 + i * 90_000),
    ];
    const entries = offsets.map((offset) => {
      const at = new Date(start + offset).toISOString();
      return { executionId: randomUUID(), startedAt: at, stoppedAt: at, finished: true, results: [] };
    });
    // Stored in shuffled batches, as runs finishing out of order are.
    const shuffled = [...entries].sort((a, b) => (a.executionId < b.executionId ? -1 : 1));
    for (let from = 0; from < shuffled.length; from += 200) {
      await forge.store.logs.insertExecutions(childId, shuffled.slice(from, from + 200));
    }
    const ascending = entries
      .sort((a, b) =>
        a.startedAt === b.startedAt ? (a.executionId < b.executionId ? -1 : 1) : a.startedAt < b.startedAt ? -1 : 1,
      )
      .map((e) => e.executionId);
    const limit = 30;
    for (const order of ['asc', 'desc'] as const) {
      const all = order === 'asc' ? ascending : [...ascending].reverse();
      for (let page = 1; page <= Math.ceil(all.length / limit) + 1; page++) {
        const answer = await forge.asUser(
          token,
          'GET',
          `/workflow/${childId}/logs?page=${page}&limit=${limit}&order=${order}`,
        );
        assert.deepEqual(
          answer.body.data.map((e: { executionId: string }) => e.executionId),
          all.slice((page - 1) * limit, page * limit),
          `${order} page ${page}`,
        );
      }
    }
  });
});

describe('GET /workflow/:workflowId/errors', () => {
  test("answers {errors: [Error log entry]}, newest first, only this workflow's", async () => {
    const { token, childId } = await forge.userWithChild();
    const seeded = [await forge.seedError(childId, 'first'), await forge.seedError(childId, 'second')];
    await forge.seedError((await forge.userWithChild()).childId, 'elsewhere');
    const answer = await forge.asUser(token, 'GET', `/workflow/${childId}/errors`);
    assert.equal(answer.status, 200);
    assertKeys(answer.body, ['errors']);
    assert.deepEqual(answer.body.errors.map((e: { _id: string }) => e._id).sort(), seeded.map((e) => e._id).sort());
    for (const [i, entry] of answer.body.errors.entries()) {
      assertKeys(
        entry,
        // `kind` is the extension that says what kind of problem it was (docs/executions.md).
        ['_id', 'workflowId', 'executionId', 'blockId', 'blockType', 'error', 'kind', 'createdAt', 'updatedAt', '__v'],
        `errors[${i}]`,
      );
      assert.equal(entry.kind, 'app');
      assert.equal(entry.workflowId, childId);
      assert.equal(entry.blockId, sample.otherBlock.id);
      assert.equal(entry.blockType, sample.otherBlock.type);
      for (const key of ['_id', 'executionId', 'error']) assert.equal(typeof entry[key], 'string');
      assert.equal(typeof entry.__v, 'number');
      assertTimestamp(entry.createdAt, 'createdAt');
      assertTimestamp(entry.updatedAt, 'updatedAt');
    }
    const times = answer.body.errors.map((e: { createdAt: string }) => e.createdAt);
    assert.deepEqual(times, [...times].sort().reverse());
  });

  test('a workflow without errors answers an empty list', async () => {
    const { token, childId } = await forge.userWithChild();
    assert.deepEqual((await forge.asUser(token, 'GET', `/workflow/${childId}/errors`)).body, { errors: [] });
  });

  test('a parent workflow id fails (the seed rule) with a 400 asking for a child id', async () => {
    const { token } = await forge.userWithChild();
    for (const answer of [
      await forge.asUser(token, 'GET', `/workflow/${parent.workflowId}/errors`),
      await forge.asHost('GET', `/workflow/${otherParent.workflowId}/errors`),
    ]) {
      assertProblem(answer, 400, { detail: /parent workflow id/, errors: ['params.workflowId'] });
      assert.equal(answer.body.errors[0].message, 'workflowId must be a child workflow id, not a parent workflow id.');
    }
  });

  test('an unknown id is a 404', async () => {
    assertProblem(await forge.asHost('GET', `/workflow/${unknownId()}/errors`), 404);
  });
});

describe('DELETE /workflow/:workflowId', () => {
  test('uninstalls the child with its logs; the parent can be installed again', async () => {
    const { userId, token, childId } = await forge.userWithChild();
    await forge.seedExecution(childId, new Date());
    const answer = await forge.asUser(token, 'DELETE', `/workflow/${childId}`);
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, { success: true });
    assertProblem(await forge.asUser(token, 'GET', `/workflow/${childId}`), 404);
    assert.deepEqual((await forge.asHost('GET', `/user/${userId}`)).body.workflows, []);
    const rows = await forge.store.db
      .selectFrom('executions')
      .select('id')
      .where('workflow_id', '=', childId)
      .execute();
    assert.deepEqual(rows, []);
    const again = await forge.asUser(token, 'POST', `/workflow/${parent.workflowId}/install`, {});
    assert.equal(again.status, 201);
    assert.notEqual(again.body.workflowId, childId);
  });

  test('the API key may uninstall too; twice is a 404', async () => {
    const { childId } = await forge.userWithChild();
    assert.equal((await forge.asHost('DELETE', `/workflow/${childId}`)).status, 200);
    assertProblem(await forge.asHost('DELETE', `/workflow/${childId}`), 404);
  });
});
