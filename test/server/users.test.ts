import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { sql } from 'kysely';
import {
  APP_ORIGIN,
  assertKeys,
  assertProblem,
  demoCatalog,
  integrationNamed,
  otherParent,
  sample,
  TestService,
  unknownId,
} from './support.js';

let forge: TestService;
before(async () => {
  forge = await TestService.start();
});
after(() => forge.close());

describe('POST /user', () => {
  test('answers {userId}, a new id for each user', async () => {
    const first = await forge.asHost('POST', '/user', { name: 'Grace Hopper', email: 'grace@example.com' });
    const second = await forge.asHost('POST', '/user', { name: 'Alan Turing', email: 'alan@example.com' });
    for (const answer of [first, second]) {
      assert.equal(answer.status, 200);
      assert.match(answer.headers.get('content-type')!, /^application\/json/);
      assertKeys(answer.body, ['userId']);
      assert.equal(typeof answer.body.userId, 'string');
    }
    assert.notEqual(first.body.userId, second.body.userId);
  });

  test('a NUL character in the name or e-mail is a 400 naming the field, on every backend', async () => {
    const named = await forge.asHost('POST', '/user', { name: 'Ada\u0000Lovelace', email: 'nul-name@example.com' });
    assertProblem(named, 400);
    assert.deepEqual(
      named.body.errors.map((e: { path: string }) => e.path),
      ['body.name'],
    );
    const mailed = await forge.asHost('POST', '/user', { name: 'Ada', email: 'ada\u0000@example.com' });
    assertProblem(mailed, 400);
    assert.deepEqual(
      mailed.body.errors.map((e: { path: string }) => e.path),
      ['body.email'],
    );
  });

  test('an e-mail that belongs to a user already is a 409, whatever its case', async () => {
    const { email } = await forge.createUser();
    assertProblem(await forge.asHost('POST', '/user', { name: 'Someone Else', email }), 409, { detail: /e-mail/ });
    assertProblem(await forge.asHost('POST', '/user', { name: 'Someone Else', email: email.toUpperCase() }), 409);
  });

  test('a missing or invalid API key is a 401 (the seed says so for this operation)', async () => {
    const body = JSON.stringify({ name: 'No Key', email: 'nokey@example.com' });
    const headers = { 'Content-Type': 'application/json' };
    assertProblem(await forge.request('POST', '/user', { body, headers }), 401);
    assertProblem(await forge.request('POST', '/user', { body, headers, credential: 'forge_sk_not-the-key' }), 401);
    const list = await forge.asHost('GET', '/user');
    assert.ok(!list.body.data.some((u: { email: string }) => u.email === 'nokey@example.com'));
  });

  const invalid: Array<[string, unknown, string[]]> = [
    ['no name', { email: 'a@example.com' }, ['body.name']],
    ['no email', { name: 'Ada' }, ['body.email']],
    ['an empty object', {}, ['body.name', 'body.email']],
    ['a name that is a number', { name: 42, email: 'a@example.com' }, ['body.name']],
    ['a blank name', { name: '   ', email: 'a@example.com' }, ['body.name']],
    ['an e-mail without @', { name: 'Ada', email: 'ada.example.com' }, ['body.email']],
    ['an e-mail that is null', { name: 'Ada', email: null }, ['body.email']],
    ['a name of 201 characters', { name: 'x'.repeat(201), email: 'a@example.com' }, ['body.name']],
    ['the update field name fullName', { fullName: 'Ada', email: 'a@example.com' }, ['body.name', 'body.fullName']],
  ];
  for (const [what, body, paths] of invalid) {
    test(`${what} is a 400 naming ${paths.join(' and ')}`, async () => {
      assertProblem(await forge.asHost('POST', '/user', body), 400, { errors: paths });
    });
  }

  // The rule read "email: Must be …", and the detail "body.email: email: Must be …".
  test("a field that breaks its rule is told so in one sentence: the field's name, then the rule", async () => {
    const answer = await forge.asHost('POST', '/user', { name: ' ', email: 'ada.example.com' });
    assertProblem(answer, 400, { errors: ['body.name', 'body.email'] });
    assert.deepEqual(
      answer.body.errors.map((error: { message: string }) => error.message),
      ['name must not be empty or hold a NUL character.', 'email must be an e-mail address such as ada@example.com.'],
    );
    assert.equal(
      answer.body.detail,
      'body.name: name must not be empty or hold a NUL character. body.email: email must be an e-mail address such as ada@example.com.',
    );
  });

  for (const body of [null, [], 'Ada', 7]) {
    test(`a body of ${JSON.stringify(body)} is a 400 that shows a valid body`, async () => {
      assertProblem(await forge.asHost('POST', '/user', body), 400, { detail: /"email"/ });
    });
  }

  test('no body at all is a 400', async () => {
    assertProblem(await forge.request('POST', '/user', { credential: forge.apiKey }), 400, { detail: /JSON body/ });
  });
});

describe('GET /user', () => {
  test('answers {data: [{_id, email, fullName}]} with every user', async () => {
    const created = await forge.createUser('Katherine Johnson');
    const answer = await forge.asHost('GET', '/user');
    assert.equal(answer.status, 200);
    assertKeys(answer.body, ['data']);
    assert.ok(answer.body.data.length >= 1);
    for (const [i, user] of answer.body.data.entries()) {
      assertKeys(user, ['_id', 'email', 'fullName'], `data[${i}]`);
      for (const key of ['_id', 'email', 'fullName']) assert.equal(typeof user[key], 'string');
    }
    const mine = answer.body.data.find((u: { _id: string }) => u._id === created.userId);
    assert.deepEqual(mine, { _id: created.userId, email: created.email, fullName: 'Katherine Johnson' });
  });
});

describe('GET /user/:userId', () => {
  test('answers {_id, fullName, email, workflows} with each child workflow summarised', async () => {
    const { userId, token, email } = await forge.newUser('Mary Jackson');
    const empty = await forge.asHost('GET', `/user/${userId}`);
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.body, { _id: userId, fullName: 'Mary Jackson', email, workflows: [] });

    const first = await forge.install(userId, token, sample.parent);
    const second = await forge.install(userId, token, otherParent);
    const answer = await forge.asHost('GET', `/user/${userId}`);
    assertKeys(answer.body, ['_id', 'fullName', 'email', 'workflows']);
    assert.deepEqual(
      answer.body.workflows.map((w: { _id: string }) => w._id),
      [first, second],
    );
    for (const [i, parent] of [sample.parent, otherParent].entries()) {
      const summary = answer.body.workflows[i];
      assertKeys(summary, ['_id', 'parentId', 'name', 'active', 'blocks'], `workflows[${i}]`);
      assert.equal(summary.parentId, parent.workflowId);
      assert.equal(summary.name, parent.name);
      assert.equal(summary.active, true);
      assert.equal(summary.blocks.length, parent.blocks.length);
      for (const [j, block] of parent.blocks.entries()) {
        const item = summary.blocks[j];
        assertKeys(item, ['icon', 'displayName', 'name'], `workflows[${i}].blocks[${j}]`);
        assert.equal(item.displayName, block.name);
        assert.equal(item.name, block.type);
        assert.ok(item.icon.startsWith(`${forge.url}/`), `icon ${item.icon} is not served by the service`);
        if (block.integration) assert.match(item.icon, new RegExp(integrationNamed(block.integration).icon));
      }
    }
  });

  test('every icon of a summary is an image the service serves', async () => {
    const { userId } = await forge.userWithChild();
    const answer = await forge.asHost('GET', `/user/${userId}`);
    const icons = new Set<string>(answer.body.workflows[0].blocks.map((b: { icon: string }) => b.icon));
    for (const icon of icons) {
      const response = await fetch(icon);
      assert.equal(response.status, 200, icon);
      assert.equal(response.headers.get('content-type'), 'image/svg+xml');
      assert.match(await response.text(), /<svg/);
    }
  });

  test("answers the user's own token exactly as it answers the API key", async () => {
    const { userId, token } = await forge.userWithChild();
    const withKey = await forge.asHost('GET', `/user/${userId}`);
    const withToken = await forge.asUser(token, 'GET', `/user/${userId}`);
    assert.equal(withToken.status, 200);
    assert.deepEqual(withToken.body, withKey.body);
  });

  test("with the user's token, every change shows in the next answer, after one was kept", async () => {
    const { userId, token } = await forge.newUser('Dorothy Vaughan');
    /** The token's answer, read twice (the second may be kept), byte for byte the API key's. */
    const assertCurrent = async (step: string) => {
      const withKey = await forge.asHost('GET', `/user/${userId}`);
      for (const read of ['first', 'second']) {
        const withToken = await forge.asUser(token, 'GET', `/user/${userId}`);
        assert.equal(withToken.status, 200, withToken.text);
        assert.equal(withToken.text, withKey.text, `${step}, ${read} read`);
      }
      return withKey.body;
    };
    assert.deepEqual((await assertCurrent('a new user')).workflows, []);
    const childId = await forge.install(userId, token, sample.parent);
    assert.deepEqual(
      (await assertCurrent('installed')).workflows.map((w: { _id: string }) => w._id),
      [childId],
    );
    for (const action of ['deactivate', 'activate']) {
      const switched = await forge.asUser(token, 'PUT', `/workflow/${childId}/${action}`);
      assert.equal(switched.status, 200, switched.text);
      assert.equal((await assertCurrent(action)).workflows[0].active, action === 'activate');
    }
    const disabled = await forge.asHost('PATCH', `/user/${userId}/disableWorkflows`);
    assert.equal(disabled.status, 200, disabled.text);
    assert.equal((await assertCurrent('disableWorkflows')).workflows[0].active, false);
    const renamed = await forge.asHost('PATCH', `/user/${userId}`, { fullName: 'D. Vaughan', email: 'dv@example.com' });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal((await assertCurrent('renamed')).fullName, 'D. Vaughan');
    const removed = await forge.asUser(token, 'DELETE', `/workflow/${childId}`);
    assert.ok(removed.status < 300, removed.text);
    assert.deepEqual((await assertCurrent('removed')).workflows, []);
  });

  test('an unknown id is a 404 that says where ids come from', async () => {
    assertProblem(await forge.asHost('GET', `/user/${unknownId()}`), 404, { detail: /POST \/user/ });
  });
});

describe('PATCH /user/:userId', () => {
  test('answers {_id, fullName, email} with the new values, and keeps them', async () => {
    const { userId } = await forge.createUser('Old Name');
    const answer = await forge.asHost('PATCH', `/user/${userId}`, {
      email: 'renamed@example.com',
      fullName: 'New Name',
    });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, { _id: userId, fullName: 'New Name', email: 'renamed@example.com' });
    const read = await forge.asHost('GET', `/user/${userId}`);
    assert.equal(read.body.fullName, 'New Name');
    assert.equal(read.body.email, 'renamed@example.com');
  });

  test("another user's e-mail is a 409 and changes nothing", async () => {
    const taken = await forge.createUser();
    const { userId, email } = await forge.createUser('Keeps Email');
    assertProblem(await forge.asHost('PATCH', `/user/${userId}`, { email: taken.email, fullName: 'X' }), 409);
    const read = await forge.asHost('GET', `/user/${userId}`);
    assert.equal(read.body.email, email);
    assert.equal(read.body.fullName, 'Keeps Email');
  });

  test('keeping its own e-mail is not a conflict', async () => {
    const { userId, email } = await forge.createUser();
    const answer = await forge.asHost('PATCH', `/user/${userId}`, { email, fullName: 'Same Mail' });
    assert.equal(answer.status, 200);
  });

  test('both fields are required, by their seed names', async () => {
    const { userId } = await forge.createUser();
    assertProblem(await forge.asHost('PATCH', `/user/${userId}`, { email: 'x@example.com' }), 400, {
      errors: ['body.fullName'],
    });
    assertProblem(await forge.asHost('PATCH', `/user/${userId}`, { name: 'N', email: 'x@example.com' }), 400, {
      errors: ['body.fullName', 'body.name'],
    });
  });

  test('an unknown id is a 404', async () => {
    assertProblem(await forge.asHost('PATCH', `/user/${unknownId()}`, { email: 'x@example.com', fullName: 'X' }), 404);
  });
});

describe('GET /user/:userId/token', () => {
  test('answers {token}: an ES256 JWT for this user, verifiable with the published JWKS, living 30 minutes', async () => {
    const { userId } = await forge.createUser();
    const answer = await forge.asHost('GET', `/user/${userId}/token`);
    assert.equal(answer.status, 200);
    assertKeys(answer.body, ['token']);
    const { token } = answer.body;
    const claims = decodeJwt(token);
    assert.equal(claims.sub, userId);
    assert.equal(typeof claims.iat, 'number');
    assert.equal(claims.exp! - claims.iat!, 1800);
    assert.ok(Math.abs(claims.iat! - Date.now() / 1000) < 60, 'iat is now');
    assert.equal(decodeProtectedHeader(token).alg, 'ES256');

    const jwks = await (await fetch(`${forge.url}/forge/2021-12/.well-known/jwks.json`)).json();
    for (const key of jwks.keys) assert.equal(key.d, undefined, 'the JWKS publishes a private key');
    const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), { algorithms: ['ES256'] });
    assert.equal(payload.sub, userId);
  });

  test('each call mints a new token', async () => {
    const { userId } = await forge.createUser();
    assert.notEqual(await forge.token(userId), await forge.token(userId));
  });

  test('expiresIn asks for a shorter life, never a longer one than 30 minutes', async () => {
    const { userId } = await forge.createUser();
    const short = decodeJwt(await forge.token(userId, 60));
    assert.equal(short.exp! - short.iat!, 60);
    for (const expiresIn of ['1801', '0', '-5', 'abc', '1.5']) {
      assertProblem(await forge.asHost('GET', `/user/${userId}/token?expiresIn=${expiresIn}`), 400, {
        detail: /1800/,
        errors: ['query.expiresIn'],
      });
    }
  });

  test('an unknown user gets no token', async () => {
    assertProblem(await forge.asHost('GET', `/user/${unknownId()}/token`), 404);
  });
});

describe('PATCH /user/:userId/disableWorkflows', () => {
  test('switches off every active workflow of the user and answers {message}', async () => {
    const { userId, token } = await forge.newUser();
    const first = await forge.install(userId, token, sample.parent);
    const second = await forge.install(userId, token, otherParent);
    const bystander = await forge.userWithChild();

    const answer = await forge.asHost('PATCH', `/user/${userId}/disableWorkflows`);
    assert.equal(answer.status, 200);
    assertKeys(answer.body, ['message']);
    assert.equal(typeof answer.body.message, 'string');
    assert.ok(answer.body.message.length > 0);

    const read = await forge.asHost('GET', `/user/${userId}`);
    assert.deepEqual(
      read.body.workflows.map((w: { _id: string; active: boolean }) => [w._id, w.active]),
      [
        [first, false],
        [second, false],
      ],
    );
    const other = await forge.asHost('GET', `/user/${bystander.userId}`);
    assert.equal(other.body.workflows[0].active, true, "another user's workflow was switched off");
  });

  test('a user with nothing on still answers a message', async () => {
    const { userId } = await forge.createUser();
    const answer = await forge.asHost('PATCH', `/user/${userId}/disableWorkflows`);
    assert.equal(answer.status, 200);
    assert.equal(typeof answer.body.message, 'string');
  });

  test('an unknown user is a 404', async () => {
    assertProblem(await forge.asHost('PATCH', `/user/${unknownId()}/disableWorkflows`), 404);
  });
});

describe('DELETE /user/:userId', () => {
  const countRows = async (table: string, column: string, value: string) => {
    const { rows } = await sql<{
      n: number;
    }>`SELECT COUNT(*) AS n FROM ${sql.table(table)} WHERE ${sql.ref(column)} = ${value}`.execute(forge.store.db);
    return Number(rows[0]!.n);
  };

  test("answers {success: true} and removes the user's workflows, credentials, logs and errors", async () => {
    const doomed = await forge.newUser();
    const doomedChildren = [
      await forge.install(doomed.userId, doomed.token, sample.parent),
      await forge.install(doomed.userId, doomed.token, otherParent),
    ];
    const kept = await forge.userWithChild();
    for (const childId of [...doomedChildren, kept.childId]) {
      await forge.seedExecution(childId, new Date());
      await forge.seedError(childId);
    }
    const oauth = await forge.request('POST', `/credentials/${oauthIntegration()}/oauth`, {
      credential: doomed.token,
      headers: { Origin: APP_ORIGIN },
    });
    assert.equal(oauth.status, 200, oauth.text);

    const answer = await forge.asHost('DELETE', `/user/${doomed.userId}`);
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, { success: true });

    assertProblem(await forge.asHost('GET', `/user/${doomed.userId}`), 404);
    assert.ok(!(await forge.asHost('GET', '/user')).body.data.some((u: { _id: string }) => u._id === doomed.userId));
    for (const childId of doomedChildren) {
      assertProblem(await forge.asHost('GET', `/workflow/${childId}`), 404);
      assertProblem(await forge.asHost('GET', `/workflow/${childId}/logs`), 404);
      assertProblem(await forge.asHost('GET', `/workflow/${childId}/errors`), 404);
      assert.equal(await countRows('executions', 'workflow_id', childId), 0, 'execution logs left behind');
      assert.equal(await countRows('error_logs', 'workflow_id', childId), 0, 'error logs left behind');
    }
    assert.equal(await countRows('workflows', 'user_id', doomed.userId), 0, 'workflows left behind');
    assert.equal(await countRows('credentials', 'user_id', doomed.userId), 0, 'credentials left behind');
    assert.equal(await countRows('oauth_states', 'user_id', doomed.userId), 0, 'OAuth states left behind');

    // The other user's data is all there.
    assert.equal((await forge.asHost('GET', `/workflow/${kept.childId}/logs`)).body.data.length, 1);
    assert.equal((await forge.asHost('GET', `/workflow/${kept.childId}/errors`)).body.errors.length, 1);
    assert.equal(await countRows('credentials', 'user_id', kept.userId), sample.parent.integrations.length);
  });

  test("the deleted user's token stops working and its e-mail is free again", async () => {
    const { userId, token, email } = await forge.newUser();
    await forge.asHost('DELETE', `/user/${userId}`);
    assertProblem(await forge.asUser(token, 'GET', `/user/${userId}`), 401, { detail: /no longer exists/ });
    assert.equal((await forge.asHost('POST', '/user', { name: 'Again', email })).status, 200);
  });

  test('deleting twice, or an unknown id, is a 404', async () => {
    const { userId } = await forge.createUser();
    assert.equal((await forge.asHost('DELETE', `/user/${userId}`)).status, 200);
    assertProblem(await forge.asHost('DELETE', `/user/${userId}`), 404);
    assertProblem(await forge.asHost('DELETE', `/user/${unknownId()}`), 404);
  });
});

function oauthIntegration(): string {
  const found = demoCatalog.integrations.find((i) => i.type === 'oauth2');
  assert.ok(found, 'the demo catalog has no OAuth integration');
  return found.name;
}
