/**
 * Connections the end user and the host can read and end (issue 24, item 5): GET /credentials
 * and GET /setup carry each connection's status and account label; DELETE /credentials/:integration
 * (user token) and DELETE /user/:userId/credentials/:integration (API key) delete it and switch off
 * the workflows that use it. One user's token never reads or ends another user's connection.
 * Revocation at a real authorization server is in oauth.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertProblem, assertTimestamp, demoCatalog, TestService } from './support.js';

let forge: TestService;
before(async () => {
  forge = await TestService.start();
});
after(() => forge.close());

const parentUsing = (...names: string[]) =>
  demoCatalog.workflows.find(
    (w) => names.every((n) => w.integrations.includes(n)) && w.integrations.length === names.length,
  )!;
const stripeAndSlack = parentUsing('stripe', 'slack');
const hubspotAndSlack = parentUsing('hubspot', 'slack');
const stripeAndSheets = parentUsing('stripe', 'google-sheets');

/** A user with three workflows: two use Slack (one of them switched off), one does not. */
async function userWithWorkflows() {
  const user = await forge.newUser();
  const slackOn = await forge.install(user.userId, user.token, stripeAndSlack);
  const slackOff = await forge.install(user.userId, user.token, hubspotAndSlack);
  // The spreadsheet id is required (issue 26): a sheet's id as Google gives it.
  const sheetsBlock = stripeAndSheets.blocks.find((b) => b.type === 'variables')!.id;
  const noSlack = await forge.install(user.userId, user.token, stripeAndSheets, {
    [sheetsBlock]: { spreadsheetId: '1AbCdEfGhIjKlMnOpQrStUvWxYz' },
  });
  assert.equal((await forge.asUser(user.token, 'PUT', `/workflow/${slackOff}/deactivate`)).status, 200);
  return { ...user, slackOn, slackOff, noSlack };
}

const activeOf = async (childId: string) => (await forge.store.children.get(childId))?.active;
const integrationsOf = (answer: { body: { data: Array<{ integration: string }> } }) =>
  answer.body.data.map((c) => c.integration);

describe('reading connections', () => {
  test('GET /credentials: when, the status, and the account label when the app gave one; never the secret', async () => {
    const { userId, token } = await forge.newUser();
    await forge.connect(userId, 'stripe');
    const sealed = forge.service.secrets.seal({ kind: 'oauth2', accessToken: 'xoxb-secret-token' });
    await forge.store.credentials.save(userId, 'slack', sealed, 'Acme Workspace');
    const listed = await forge.asUser(token, 'GET', '/credentials');
    assert.equal(listed.status, 200, listed.text);
    const [slack, stripe] = listed.body.data;
    assert.deepEqual(
      { ...slack, connectedAt: undefined },
      {
        integration: 'slack',
        connectedAt: undefined,
        status: 'connected',
        account: 'Acme Workspace',
      },
    );
    assertTimestamp(slack.connectedAt);
    assert.deepEqual(
      Object.keys(stripe).sort(),
      ['connectedAt', 'integration', 'status'],
      'no account when none was given',
    );
    assert.ok(!listed.text.includes('xoxb-secret-token'));
  });

  test('a broken connection reads as broken in GET /credentials and GET /setup; connecting again clears it at once', async () => {
    const { userId, token } = await forge.newUser();
    await forge.connect(userId, 'stripe');
    await forge.store.credentials.markBroken(userId, 'stripe');
    const statusIn = async () => ({
      credentials: (await forge.asUser(token, 'GET', '/credentials')).body.data[0].status,
      setup: (await forge.asUser(token, 'GET', '/setup?integration=stripe')).body.credentials[0].status,
    });
    assert.deepEqual(await statusIn(), { credentials: 'broken', setup: 'broken' });
    await forge.connect(userId, 'stripe');
    assert.deepEqual(await statusIn(), { credentials: 'connected', setup: 'connected' });
  });

  test('the host reads any user’s connections with the API key; a user token cannot use that route', async () => {
    const owner = await forge.newUser();
    const other = await forge.newUser();
    await forge.connect(owner.userId, 'stripe');
    const read = await forge.asHost('GET', `/user/${owner.userId}/credentials`);
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.body, (await forge.asUser(owner.token, 'GET', '/credentials')).body);
    for (const token of [owner.token, other.token]) {
      const refused = await forge.asUser(token, 'GET', `/user/${owner.userId}/credentials`);
      assert.ok([401, 403].includes(refused.status), refused.text);
      assert.ok(!refused.text.includes('stripe'));
    }
    assertProblem(await forge.asHost('GET', '/user/no-such-user/credentials'), 404);
  });
});

describe('disconnecting', () => {
  test('DELETE /credentials/:integration deletes the connection and switches off exactly the workflows that use it', async () => {
    const user = await userWithWorkflows();
    const answer = await forge.asUser(user.token, 'DELETE', '/credentials/slack');
    assert.equal(answer.status, 200, answer.text);
    // Slack has no revocation endpoint in the demo catalog; the workflow already off is not listed.
    assert.deepEqual(answer.body, { integration: 'slack', switchedOff: [user.slackOn], revocation: 'not-supported' });
    assert.equal(await activeOf(user.slackOn), false);
    assert.equal(await activeOf(user.slackOff), false);
    assert.equal(await activeOf(user.noSlack), true);
    assert.deepEqual(integrationsOf(await forge.asUser(user.token, 'GET', '/credentials')), [
      'google-sheets',
      'hubspot',
      'stripe',
    ]);
    assert.equal(await forge.store.credentials.getSecret(user.userId, 'slack'), undefined);
    // Nothing left to disconnect: a 404 that says so.
    const again = await forge.asUser(user.token, 'DELETE', '/credentials/slack');
    assertProblem(again, 404);
    assert.match(again.body.detail, /Slack is not connected/);
    assertProblem(await forge.asUser(user.token, 'DELETE', '/credentials/no-such-app'), 404);
  });

  test('another user’s token can never end this user’s connection', async () => {
    const owner = await userWithWorkflows();
    const other = await forge.newUser();
    const attempt = await forge.asUser(other.token, 'DELETE', '/credentials/slack');
    assertProblem(attempt, 404);
    const byRoute = await forge.asUser(other.token, 'DELETE', `/user/${owner.userId}/credentials/slack`);
    assert.ok([401, 403].includes(byRoute.status), byRoute.text);
    const own = await forge.asUser(owner.token, 'DELETE', `/user/${owner.userId}/credentials/slack`);
    assert.ok([401, 403].includes(own.status), 'the API-key route is the host’s only');
    assert.ok(integrationsOf(await forge.asUser(owner.token, 'GET', '/credentials')).includes('slack'));
    assert.equal(await activeOf(owner.slackOn), true);
  });

  test('the host disconnects any user with the API key, as the user would', async () => {
    const user = await userWithWorkflows();
    const answer = await forge.asHost('DELETE', `/user/${user.userId}/credentials/slack`);
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.body, { integration: 'slack', switchedOff: [user.slackOn], revocation: 'not-supported' });
    assert.equal(await activeOf(user.slackOn), false);
    assert.ok(!integrationsOf(await forge.asUser(user.token, 'GET', '/credentials')).includes('slack'));
    assertProblem(await forge.asHost('DELETE', `/user/${user.userId}/credentials/slack`), 404);
    assertProblem(await forge.asHost('DELETE', '/user/no-such-user/credentials/slack'), 404);
  });

  test('two disconnects at once: one answers what it did, the other a 404', async () => {
    const user = await userWithWorkflows();
    const answers = await Promise.all([
      forge.asUser(user.token, 'DELETE', '/credentials/slack'),
      forge.asHost('DELETE', `/user/${user.userId}/credentials/slack`),
    ]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 404]);
    assert.deepEqual(answers.find((a) => a.status === 200)!.body.switchedOff, [user.slackOn]);
  });
});
