/**
 * GET /workflow/:workflowId/options (issue 26): a select variable's choices read from the
 * user's own app with the user's credential — paging, mapping, local search, the page kept
 * briefly per user, an app that refuses the credential, and ids the user may not use.
 * Against the sandbox's Slack conversations.list, with the demo catalog; and against an app of
 * the test's own that redirects, answers HTML or too much, or is not there.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type RunningSandbox, SLACK_CHANNELS, startSandbox } from '../../server/sandbox.js';
import { assertKeys, assertProblem, demoCatalog, TestService } from './support.js';

let sandbox: RunningSandbox;
let forge: TestService;
before(async () => {
  sandbox = await startSandbox({ port: 0 });
  forge = await TestService.start({ sandboxUrl: sandbox.url });
});
after(async () => {
  await forge.close();
  await sandbox.close();
});

/** The demo workflow whose Slack channel is chosen from the app, its variable block. */
const parent = demoCatalog.workflows.find((w) =>
  w.blocks.some((b) => b.parameters.variables?.some((v) => v.name === 'channel' && v.source)),
)!;
const block = parent.blocks.find((b) => b.parameters.variables?.some((v) => v.name === 'channel'))!;

/** A user whose Slack connection holds `accessToken` (the sandbox refuses one that starts with `revoked`). */
async function userWithSlack(accessToken = 'test-slack') {
  const user = await forge.newUser();
  await forge.store.credentials.save(user.userId, 'slack', forge.service.secrets.seal({ kind: 'oauth2', accessToken }));
  return user;
}

const options = (token: string, workflowId: string, query: Record<string, string> = {}) =>
  forge.asUser(
    token,
    'GET',
    `/workflow/${workflowId}/options?${new URLSearchParams({ blockId: block.id, variable: 'channel', ...query })}`,
  );

const slackReads = () => sandbox.requests.filter((r) => r.path.startsWith('/slack/conversations.list'));

describe('GET /workflow/:workflowId/options', () => {
  test('answers the app’s first page, mapped to {value, label}, with the cursor of the next', async () => {
    const { token } = await userWithSlack();
    const answer = await options(token, parent.workflowId);
    assert.equal(answer.status, 200, answer.text);
    assertKeys(answer.body, ['options', 'next']);
    assert.deepEqual(
      answer.body.options,
      SLACK_CHANNELS.slice(0, 5).map(([value, label]) => ({ value, label })),
    );
    assert.equal(typeof answer.body.next, 'string');
  });

  test('pages through every channel with the cursor; the last page has no next', async () => {
    const { token } = await userWithSlack();
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const answer = await options(token, parent.workflowId, cursor ? { cursor } : {});
      assert.equal(answer.status, 200, answer.text);
      seen.push(...answer.body.options.map((o: { label: string }) => o.label));
      cursor = answer.body.next;
      if (!cursor) break;
    }
    assert.deepEqual(
      seen,
      SLACK_CHANNELS.map(([, name]) => name),
    );
  });

  test('search keeps the choices whose label has the words (the source searches locally)', async () => {
    const { token } = await userWithSlack();
    const answer = await options(token, parent.workflowId, { search: 'SAL' });
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.body.options, [{ value: SLACK_CHANNELS[2]![0], label: 'sales' }]);
  });

  test('a local search reads past the app’s pages without a match, and ends where none is left', async () => {
    const { token } = await userWithSlack();
    // Five channels a page: `marketing` is on the app's second.
    const found = await options(token, parent.workflowId, { search: 'mark' });
    assert.equal(found.status, 200, found.text);
    assert.deepEqual(found.body.options, [{ value: SLACK_CHANNELS[5]![0], label: 'marketing' }]);
    assert.equal(typeof found.body.next, 'string', 'the app has a third page');
    const before = slackReads().length;
    const none = await options(token, parent.workflowId, { search: 'no such channel' });
    assert.equal(none.status, 200, none.text);
    assert.deepEqual(none.body, { options: [] });
    assert.equal(slackReads().length, before + 3, 'every page of the app was read, once');
  });

  test('sends the user’s own credential to the app, and keeps a page briefly per user', async () => {
    const first = await userWithSlack('test-first');
    const second = await userWithSlack('test-second');
    const before = slackReads().length;
    assert.equal((await options(first.token, parent.workflowId, { search: 'pay' })).status, 200);
    assert.equal((await options(first.token, parent.workflowId, { search: 'pay' })).status, 200);
    assert.equal(slackReads().length, before + 1, 'the second read of the same page is kept');
    assert.equal((await options(second.token, parent.workflowId, { search: 'pay' })).status, 200);
    assert.equal(slackReads().length, before + 2, 'another user’s read goes to the app with their credential');
  });

  test('reads for the user’s own copy when editing', async () => {
    const user = await userWithSlack();
    for (const integration of parent.integrations) {
      if (integration !== 'slack') await forge.connect(user.userId, integration);
    }
    const childId = await forge.install(user.userId, user.token, parent);
    // install() stores a stand-in credential for each integration; Slack gets a token again.
    await forge.store.credentials.save(
      user.userId,
      'slack',
      forge.service.secrets.seal({ kind: 'oauth2', accessToken: 'test-slack' }),
    );
    const answer = await options(user.token, childId);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.options.length, 5);
  });

  test('an app that refuses the credential (and a refresh that cannot renew it) is a 409 connection-refused', async () => {
    const { token } = await userWithSlack('revoked-slack');
    const answer = await options(token, parent.workflowId);
    assertProblem(answer, 409, {
      errors: ['integrations.slack'],
      detail: /connect Slack again/,
    });
    assert.match(answer.body.type, /connection-refused$/);
  });

  test('a user who has not connected the app is a 400 integration-not-connected', async () => {
    const { token } = await forge.newUser();
    const answer = await options(token, parent.workflowId);
    assertProblem(answer, 400, { errors: ['integrations.slack'] });
    assert.match(answer.body.type, /integration-not-connected$/);
  });

  test('another app failure is a 502 app-failed that says to try again', async () => {
    const { token } = await userWithSlack();
    // The sandbox fails on purpose when the query asks: the search parameter is not the app's
    // (the source searches locally), so a cursor it cannot read is what fails here.
    const answer = await options(token, parent.workflowId, { cursor: 'not a cursor' });
    assertProblem(answer, 502, { errors: ['integrations.slack'], detail: /Try again\.$/ });
  });

  test('another user’s copy is a 404, like an unknown id', async () => {
    const owner = await userWithSlack();
    for (const integration of parent.integrations) {
      if (integration !== 'slack') await forge.connect(owner.userId, integration);
    }
    const childId = await forge.install(owner.userId, owner.token, parent);
    const stranger = await userWithSlack();
    assertProblem(await options(stranger.token, childId), 404);
    assertProblem(await options(stranger.token, '0123456789abcdef01234567'), 404);
  });

  test('a variable without a source, or an unknown block, is a 400 naming the query parameter', async () => {
    const { token } = await userWithSlack();
    const other = block.parameters.variables!.find((v) => !v.source)!.name;
    assertProblem(await options(token, parent.workflowId, { variable: other }), 400, { errors: ['query.variable'] });
    assertProblem(await options(token, parent.workflowId, { blockId: '00000000-0000-4000-8000-000000000000' }), 400, {
      errors: ['query.blockId'],
    });
  });

  test('only a user token reads it', async () => {
    const answer = await forge.asHost(
      'GET',
      `/workflow/${parent.workflowId}/options?blockId=${block.id}&variable=channel`,
    );
    assertProblem(answer, 403);
  });
});

describe('GET /workflow/:workflowId/options, against an app that misbehaves', () => {
  /** What the app saw: each request's path and credential. */
  const seen: Array<{ path: string; authorization: string | undefined; accept: string | undefined }> = [];
  const elsewhere: string[] = [];
  let app: Server;
  let other: Server;
  let broken: TestService;
  let appUrl: string;
  let otherUrl: string;
  before(async () => {
    other = createServer((request, response) => {
      elsewhere.push(request.headers.authorization ?? '(none)');
      response.end('{}');
    });
    otherUrl = await listen(other);
    app = createServer((request, response) => {
      const url = new URL(request.url!, 'http://app');
      seen.push({ path: url.pathname, authorization: request.headers.authorization, accept: request.headers.accept });
      const cursor = url.searchParams.get('cursor');
      if (cursor === 'redirect') {
        response.writeHead(302, { Location: `${otherUrl}/slack/conversations.list` }).end();
      } else if (cursor === 'html') {
        response.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><p>Sign in</p>');
      } else if (cursor === 'huge') {
        const channel = JSON.stringify({ id: 'C0000000000', name: 'x'.repeat(1000) });
        response.writeHead(200, { 'Content-Type': 'application/json' });
        response.end(`{"channels":[${Array.from({ length: 3000 }, () => channel).join(',')}]}`);
      } else {
        response.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });
        response.end(`\uFEFF${JSON.stringify({ ok: true, channels: [{ id: 'C1', name: 'général' }] })}`);
      }
    });
    appUrl = await listen(app);
    broken = await TestService.start({ sandboxUrl: appUrl });
  });
  after(async () => {
    await broken.close();
    app.close();
    other.close();
  });

  const read = async (cursor: string | undefined) => {
    const user = await broken.newUser();
    await broken.store.credentials.save(
      user.userId,
      'slack',
      broken.service.secrets.seal({ kind: 'oauth2', accessToken: 'misbehaving-slack' }),
    );
    const query = new URLSearchParams({ blockId: block.id, variable: 'channel', ...(cursor ? { cursor } : {}) });
    return broken.asUser(user.token, 'GET', `/workflow/${parent.workflowId}/options?${query}`);
  };

  test('sends the credential and asks for JSON; the answer is read as UTF-8', async () => {
    const answer = await read(undefined);
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.body.options, [{ value: 'C1', label: 'général' }]);
    assert.deepEqual(seen.at(-1), {
      path: '/slack/conversations.list',
      authorization: 'Bearer misbehaving-slack',
      accept: 'application/json',
    });
  });

  test('a redirect is not followed (the credential goes nowhere else) and is a 502', async () => {
    const answer = await read('redirect');
    assertProblem(answer, 502, { errors: ['integrations.slack'], detail: /answered 302 Found\. Try again\.$/ });
    assert.deepEqual(elsewhere, []);
  });

  test('an answer that is not JSON, or too large to read, is a 502 naming the app', async () => {
    assertProblem(await read('html'), 502, {
      detail: /Slack \(http:\/\/127\.0\.0\.1:\d+\/slack\/conversations\.list\) did not answer with JSON/,
    });
    assertProblem(await read('huge'), 502, { detail: /Slack \(.*\) answered more than 2 MB/ });
  });

  test('an app that cannot be reached is a 502 with the reason', async () => {
    const closed = createServer();
    const closedUrl = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
    const unreachable = await TestService.start({ sandboxUrl: closedUrl });
    try {
      const user = await unreachable.newUser();
      await unreachable.store.credentials.save(
        user.userId,
        'slack',
        unreachable.service.secrets.seal({ kind: 'oauth2', accessToken: 'unreachable-slack' }),
      );
      const query = new URLSearchParams({ blockId: block.id, variable: 'channel' });
      const answer = await unreachable.asUser(user.token, 'GET', `/workflow/${parent.workflowId}/options?${query}`);
      assertProblem(answer, 502, { detail: /could not be reached \(ECONNREFUSED\)\. Try again\.$/ });
      assert.doesNotMatch(answer.text, /unreachable-slack/);
    } finally {
      await unreachable.close();
    }
  });
});

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
