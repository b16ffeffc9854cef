/**
 * Two service processes on one database, as behind a load balancer: each scheduled minute runs
 * once, each error delivery is attempted by one instance at a time and survives a SIGKILL, keys,
 * tokens, rate limits and OAuth flows work whichever instance answers, and concurrent writes on
 * both lose nothing acknowledged. Time is the test's clock, not minutes of waiting.
 */
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import { Cluster, type Instance, MINUTELY, OAUTH, REFUSE, SETTINGS_BLOCK, until } from './instances-support.js';

const at = (iso: string) => new Date(iso);
const MINUTE = 60_000;

let emails = 0;
async function newUser(instance: Instance): Promise<{ userId: string; token: string }> {
  const created = await instance.api('POST', '/user', {
    name: 'Ada',
    email: `ada${++emails}-${Date.now()}@example.com`,
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const { token } = (await instance.api('GET', `/user/${created.body.userId}/token`)).body;
  return { userId: created.body.userId, token };
}

const executions = async (instance: Instance, childId: string) =>
  (await instance.api('GET', `/workflow/${childId}/logs?limit=30&order=asc`)).body.data as Array<{ results: unknown }>;

/** Until `instance` reads at least `count` runs of the child: a queued minute runs on whichever instance takes it. */
const runsOf = (instance: Instance, childId: string, count: number) =>
  until(async () => (await executions(instance, childId)).length >= count, `${count} runs of ${childId}`);

/** Two instances, A and B, on a new database with the clock at `start`, for the tests of one describe. */
function twoInstances(start: string, env?: Record<string, string>) {
  const pair = {} as { cluster: Cluster; a: Instance; b: Instance };
  before(async () => {
    pair.cluster = await Cluster.create(at(start), env);
    pair.a = await pair.cluster.start('A');
    pair.b = await pair.cluster.start('B');
  });
  after(() => pair.cluster.close());
  return pair;
}

describe('a scheduled minute across two instances', () => {
  const pair = twoInstances('2026-03-02T11:58:30Z');

  /**
   * Every instance given said it queued each minute from `first` to `last` (HH:MM of 2026-03-02,
   * with a child due) before anything is counted: the minutes of one jump are queued side by side.
   */
  const ticked = (first: string, last: string, ...instances: Instance[]) => {
    const minutes: string[] = [];
    for (let t = Date.parse(`2026-03-02T${first}:00Z`); t <= Date.parse(`2026-03-02T${last}:00Z`); t += MINUTE)
      minutes.push(new Date(t).toISOString());
    return Promise.all(
      instances.flatMap((i) =>
        minutes.map((minute) => i.line(new RegExp(`minute ${minute.replace('.', '\\.')}: queued`))),
      ),
    );
  };

  test('runs each active child once, and each minute the clock passed once, whichever instance claims it', async () => {
    const { cluster, a, b } = pair;
    const user = await newUser(a);
    const installed = await a.api('POST', `/workflow/${MINUTELY}/install`, {}, user.token);
    assert.equal(installed.status, 201, JSON.stringify(installed.body));
    const child = installed.body.workflowId;

    cluster.setClock(at('2026-03-02T11:59:00Z'));
    await ticked('11:59', '11:59', a, b);
    await runsOf(b, child, 1);
    assert.equal((await executions(b, child)).length, 1, 'minute 11:59 ran other than once');

    // Six minutes pass at once (a stalled host, a jump of the test clock): each runs once.
    cluster.setClock(at('2026-03-02T12:05:10Z'));
    await ticked('12:00', '12:05', a, b);
    await runsOf(a, child, 7);
    const runs = await executions(a, child);
    assert.equal(
      runs.length,
      7,
      `expected 11:59 and 12:00…12:05 once each, got ${runs.length} runs\n${[...a.lines, ...b.lines].join('\n')}`,
    );
    const ranBy = [...a.lines, ...b.lines].filter((l) => l.includes(`: ran ${child}`)).length;
    assert.equal(ranBy, 7, 'every run is reported by exactly one instance');
    const queuedBy = [...a.lines, ...b.lines].filter((l) => / queued 1 of 1 due/.test(l)).length;
    assert.equal(queuedBy, 7, 'each minute’s job was added by exactly one instance');
  });

  test('while one instance is down the other runs every minute; the one that comes back does not replay them', async () => {
    const { cluster, a } = pair;
    const user = await newUser(pair.b);
    const child = (await pair.b.api('POST', `/workflow/${MINUTELY}/install`, {}, user.token)).body.workflowId;
    await pair.b.kill();
    cluster.setClock(at('2026-03-02T12:06:00Z'));
    await ticked('12:06', '12:06', a);
    cluster.setClock(at('2026-03-02T12:07:00Z'));
    await ticked('12:07', '12:07', a);
    await runsOf(a, child, 2);
    assert.equal((await executions(a, child)).length, 2, a.lines.join('\n'));

    const again = await cluster.start('B again');
    cluster.setClock(at('2026-03-02T12:08:00Z'));
    await ticked('12:08', '12:08', a, again);
    await runsOf(again, child, 3);
    const runs = await executions(again, child);
    assert.equal(
      runs.length,
      3,
      `the minutes B missed ran once, on A; 12:08 once\n${[...a.lines, ...again.lines].join('\n')}`,
    );
  });
});

describe('a run whose instance is killed mid-run', () => {
  const SLOW = 'wf-slow';
  let cluster: Cluster;
  let app: Server;
  const calls: Array<{ answered: boolean }> = [];
  before(async () => {
    // The app the run calls: the first call never gets an answer (its instance dies while it
    // waits); every later one gets a 200.
    app = createServer((_request, response) => {
      if (calls.length === 0) {
        calls.push({ answered: false });
        return;
      }
      calls.push({ answered: true });
      response.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    const catalog = {
      integrations: [],
      workflows: [
        {
          workflowId: SLOW,
          name: 'Call the app',
          integrations: [],
          blocks: [
            { name: 'Called', id: 'f4444444-4444-4444-8444-444444444441', type: 'webhook', parameters: {} },
            {
              name: 'Call',
              id: 'f4444444-4444-4444-8444-444444444442',
              type: 'http',
              parameters: { method: 'POST', url: '{{env.SANDBOX_URL}}/orders', body: { ok: true } },
            },
          ],
        },
      ],
    };
    const { port } = app.address() as AddressInfo;
    cluster = await Cluster.create(
      at('2026-03-02T10:00:00Z'),
      // The held call must outlast B's start, so that A dies in it rather than time out.
      { FORGE_SANDBOX_URL: `http://127.0.0.1:${port}`, FORGE_HTTP_TIMEOUT_MS: '600000' },
      catalog,
    );
  });
  after(async () => {
    app.closeAllConnections();
    app.close();
    await cluster.close();
  });

  test('is taken up by another instance once its lease runs out, and stored once under the id the sender got', {
    timeout: 180_000,
  }, async () => {
    const a = await cluster.start('A');
    const user = await newUser(a);
    const child = (await a.api('POST', `/workflow/${SLOW}/install`, {}, user.token)).body.workflowId;
    const accepted = await fetch((await a.api('GET', `/workflow/${child}`)).body.webhookUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    assert.equal(accepted.status, 202);
    const { executionId } = await accepted.json();
    // A had room, so it took the job in the transaction that added it (on PostgreSQL too: the
    // claim pg-boss's fetch makes, issue 27 item 9): a lease like any taken job's, which B takes over.
    await until(() => calls.length === 1, 'A called the app');
    // B starts only now, so the run is A's; then A dies mid-call.
    const b = await cluster.start('B');
    await a.kill();
    // The lease runs out by the database's clock (30 s on SQLite; pg-boss's 20 s heartbeat and
    // 10 s monitor on PostgreSQL): not the test clock, so this waits in real time.
    await until(async () => (await executions(b, child)).length === 1, 'B ran and stored the run', 120_000);
    const [run] = (await b.api('GET', `/workflow/${child}/logs`)).body.data;
    assert.equal(run.executionId, executionId);
    assert.equal(run.finished, true);
    assert.equal(calls.length, 2, 'the app was called again by B: at least once per block');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.equal((await executions(b, child)).length, 1, 'stored once');
  });
});

describe('signing keys shared by the instances', () => {
  const pair = twoInstances('2026-03-02T10:00:00Z');

  const jwksKids = async (instance: Instance) =>
    ((await instance.api('GET', '/.well-known/jwks.json')).body.keys as Array<{ kid: string; d?: string }>).map((k) => {
      assert.equal(k.d, undefined, 'the JWKS publishes a private key');
      return k.kid;
    });

  test('a token one instance signs verifies on the other; both publish the same key', async () => {
    const { a, b } = pair;
    const { userId, token } = await newUser(a);
    const read = await b.api('GET', `/user/${userId}`, undefined, token);
    assert.equal(read.status, 200, JSON.stringify(read.body));
    const kid = decodeProtectedHeader(token).kid;
    assert.deepEqual(await jwksKids(a), [kid]);
    assert.deepEqual(await jwksKids(b), [kid]);
  });

  test('the token of a user deleted on one instance is refused at once on the other, its claims kept there (issue 29)', async () => {
    const { a, b } = pair;
    const { userId, token } = await newUser(a);
    // GET /setup reads the user with the version of its workflows and connections, the others the user alone.
    const reads = [`/setup?workflowId=${MINUTELY}`, '/workflow', `/user/${userId}`];
    for (const path of reads) assert.equal((await a.api('GET', path, undefined, token)).status, 200, path);
    assert.equal((await b.api('DELETE', `/user/${userId}`)).status, 200);
    for (const path of reads) {
      const refused = await a.api('GET', path, undefined, token);
      assert.equal(refused.status, 401, path);
      assert.match(refused.body.detail, /no longer exists/, path);
    }
  });

  test('rotate-keys: new tokens carry the new kid, old ones verify until they expire, then the old key is gone', async () => {
    const { cluster, a, b } = pair;
    const { userId, token: oldToken } = await newUser(a);
    const oldKid = decodeProtectedHeader(oldToken).kid!;

    cluster.advance(10 * MINUTE);
    const rotated = await cluster.run('rotate-keys');
    assert.equal(rotated.code, 0, rotated.output);
    const newKid = /New signing key (\w+)/.exec(rotated.output)?.[1];
    assert.ok(newKid && newKid !== oldKid, rotated.output);
    assert.match(rotated.output, new RegExp(`Retired ${oldKid}`));

    const newToken = (await b.api('GET', `/user/${userId}/token`)).body.token;
    assert.equal(decodeProtectedHeader(newToken).kid, newKid, 'B signs with the key rotate-keys added');
    for (const instance of [a, b]) {
      assert.equal(
        (await instance.api('GET', `/user/${userId}`, undefined, oldToken)).status,
        200,
        'old token refused',
      );
      assert.equal(
        (await instance.api('GET', `/user/${userId}`, undefined, newToken)).status,
        200,
        'new token refused',
      );
      assert.deepEqual((await jwksKids(instance)).sort(), [oldKid, newKid].sort());
    }

    // The old token's 30 minutes are over; a token the old key signed just before the rotation
    // is not, so the key stays for a token lifetime (and a minute of skew) after it was retired.
    cluster.advance(22 * MINUTE);
    const expired = await a.api('GET', `/user/${userId}`, undefined, oldToken);
    assert.equal(expired.status, 401);
    assert.match(expired.body.detail, /expired/);
    assert.deepEqual((await jwksKids(b)).sort(), [oldKid, newKid].sort());
    cluster.advance(10 * MINUTE);
    assert.deepEqual(await jwksKids(b), [newKid]);
    assert.deepEqual(await jwksKids(a), [newKid]);
    // Reading the JWKS never writes; the next rotation drops the expired key from the ring.
    const again = await cluster.run('rotate-keys');
    assert.match(again.output, new RegExp(`Dropped ${oldKid}`));
    assert.doesNotMatch(again.output, new RegExp(`Retired [^\\n]*${oldKid}`), 'the dropped key was retired again');
  });
});

describe('error deliveries across instances', () => {
  let cluster: Cluster;
  let receiver: Server;
  const arrived: Array<{ id: string; answered: boolean }> = [];
  let hangFirst = true;
  before(async () => {
    cluster = await Cluster.create(at('2026-03-02T09:00:00Z'));
    // The host's error receiver: the first request never gets an answer (its instance dies
    // while it waits); every later one gets a 204.
    receiver = createServer(async (req, res) => {
      let text = '';
      for await (const chunk of req) text += chunk;
      const entry = JSON.parse(text);
      if (hangFirst) {
        hangFirst = false;
        arrived.push({ id: entry._id, answered: false });
        return;
      }
      arrived.push({ id: entry._id, answered: true });
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    receiver.closeAllConnections();
    receiver.close();
    await cluster.close();
  });

  test('an instance killed mid-delivery leaves it to the other once its lease runs out, which delivers it once', async () => {
    const a = await cluster.start('A');
    const b = await cluster.start('B');
    const { port } = receiver.address() as AddressInfo;
    const saved = await b.api('PUT', '/settings', { errorWebhookUrl: `http://127.0.0.1:${port}/errors` });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    const user = await newUser(a);
    const child = (await a.api('POST', `/workflow/${REFUSE}/install`, {}, user.token)).body.workflowId;
    const hook = await fetch((await a.api('GET', `/workflow/${child}`)).body.webhookUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    assert.ok(hook.status < 300, `webhook answered ${hook.status}`);
    await until(() => arrived.length === 1, 'the first attempt');
    await a.kill();

    // The lease of the dead instance still holds: the other leaves the delivery alone.
    cluster.advance(5_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(arrived.length, 1, 'another instance attempted a leased delivery');

    cluster.advance(60_000);
    await until(() => arrived.length === 2, 'the delivery by the instance still up');
    assert.equal(arrived[1]!.id, arrived[0]!.id);
    await until(async () => (await b.api('GET', '/settings')).body.deliveries.webhook.pending === 0, 'an empty outbox');
    cluster.advance(10 * MINUTE);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(
      arrived.map((r) => r.answered),
      [false, true],
      'a delivered entry was sent again',
    );
  });
});

describe('one database, any instance answers', () => {
  const pair = twoInstances('2026-03-02T08:00:00Z', { FORGE_RATE_LIMITS: 'token=3/60' });

  test('rate limits count the hits on every instance', async () => {
    const { cluster, a, b } = pair;
    const { userId } = await newUser(a); // its first token
    assert.equal((await b.api('GET', `/user/${userId}/token`)).status, 200);
    assert.equal((await a.api('GET', `/user/${userId}/token`)).status, 200);
    const refused = await b.api('GET', `/user/${userId}/token`);
    assert.equal(refused.status, 429, 'B did not count the tokens A minted');
    // A new window, on the shared clock.
    cluster.advance(MINUTE);
    assert.equal((await b.api('GET', `/user/${userId}/token`)).status, 200);
  });

  test('concurrent installs of one parent for one user on two instances: one 201, one 409', async () => {
    const { a, b } = pair;
    for (let round = 0; round < 5; round++) {
      const user = await newUser(a);
      const answers = await Promise.all(
        [a, b].map((instance) => instance.api('POST', `/workflow/${MINUTELY}/install`, {}, user.token)),
      );
      assert.deepEqual(
        answers.map((r) => r.status).sort(),
        [201, 409],
        answers.map((r) => JSON.stringify(r.body)).join('\n'),
      );
      const winner = answers.find((r) => r.status === 201)!.body.workflowId;
      assert.equal(answers.find((r) => r.status === 409)!.body.workflowId ?? winner, winner);
    }
  });

  test('concurrent variable saves on two instances never lose an acknowledged write', async () => {
    const { a, b } = pair;
    const user = await newUser(a);
    const child = (await a.api('POST', `/workflow/${MINUTELY}/install`, {}, user.token)).body.workflowId;
    const acknowledged = new Map<string, number>();
    await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        for (let n = 1; n <= 3; n++) {
          const instance = (i + n) % 2 ? a : b;
          const saved = await instance.api(
            'PATCH',
            `/workflow/${child}/variables/${SETTINGS_BLOCK}`,
            { [`v${i}`]: n },
            user.token,
          );
          assert.equal(saved.status, 200, JSON.stringify(saved.body));
          acknowledged.set(`v${i}`, n);
        }
      }),
    );
    const read = await b.api('GET', `/workflow/${child}`, undefined, user.token);
    const block = read.body.blocks.find((bl: { id: string }) => bl.id === SETTINGS_BLOCK);
    const values = Object.fromEntries(
      block.parameters.variables.map((v: { name: string; value: number }) => [v.name, v.value]),
    );
    assert.deepEqual(values, Object.fromEntries(acknowledged));
  });

  test('a webhook URL works on every instance', async () => {
    const { a, b } = pair;
    const user = await newUser(a);
    const child = (await a.api('POST', `/workflow/${REFUSE}/install`, {}, user.token)).body.workflowId;
    const onA = new URL((await a.api('GET', `/workflow/${child}`)).body.webhookUrl);
    const onB = new URL(onA.pathname, b.url);
    const sent = await fetch(onB, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Prefer: 'wait=30' },
      body: '{}',
    });
    assert.ok(sent.status < 300, `B answered ${sent.status}`);
    assert.equal((await executions(a, child)).length, 1, 'the run B started is not in the logs A reads');
  });

  test('a logs page A has kept shows the run B stored since (issue 29)', async () => {
    const { a, b } = pair;
    const user = await newUser(a);
    const child = (await a.api('POST', `/workflow/${REFUSE}/install`, {}, user.token)).body.workflowId;
    const hook = new URL((await a.api('GET', `/workflow/${child}`)).body.webhookUrl).pathname;
    const post = (instance: Instance) =>
      fetch(new URL(hook, instance.url), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Prefer: 'wait=30' },
        body: '{}',
      });
    assert.ok((await post(a)).status < 300);
    // Read twice on A, so that A sends its page as kept.
    assert.equal((await executions(a, child)).length, 1);
    assert.equal((await executions(a, child)).length, 1);
    assert.ok((await post(b)).status < 300);
    assert.equal((await executions(a, child)).length, 2, 'A sent the page it kept before B stored a run');
  });

  test('a /setup answer A has kept shows what B wrote since: installs, variables, switches, removals (issue 29)', async () => {
    const { a, b } = pair;
    const user = await newUser(a);
    const setupOn = async (instance: Instance) => {
      const read = await instance.api('GET', `/setup?workflowId=${MINUTELY}`, undefined, user.token);
      assert.equal(read.status, 200, JSON.stringify(read.body));
      return read.body.installed as Array<{
        _id: string;
        active: boolean;
        blocks: Array<{ id: string; parameters: { variables?: Array<{ name: string; value: unknown }> } }>;
      }>;
    };
    /** What A answers, read twice so that the second is the kept one, each time as B answers now. */
    const sameOnA = async (step: string) => {
      const onB = await setupOn(b);
      for (const read of ['first', 'second']) assert.deepEqual(await setupOn(a), onB, `${step}: A's ${read} read`);
      return onB;
    };
    assert.deepEqual(await sameOnA('nothing installed'), []);
    const installed = await b.api('POST', `/workflow/${MINUTELY}/install`, {}, user.token);
    assert.equal(installed.status, 201, JSON.stringify(installed.body));
    const child = installed.body.workflowId;
    assert.deepEqual(
      (await sameOnA('installed on B')).map((c) => c._id),
      [child],
    );
    const saved = await b.api('PATCH', `/workflow/${child}/variables/${SETTINGS_BLOCK}`, { v0: 7 }, user.token);
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    const [withValue] = await sameOnA('variables saved on B');
    const settings = withValue!.blocks.find((block) => block.id === SETTINGS_BLOCK)!;
    assert.equal(settings.parameters.variables!.find((v) => v.name === 'v0')!.value, 7);
    assert.equal((await b.api('PUT', `/workflow/${child}/deactivate`, undefined, user.token)).status, 200);
    assert.equal((await sameOnA('switched off on B'))[0]!.active, false);
    assert.ok((await b.api('DELETE', `/workflow/${child}`, undefined, user.token)).status < 300);
    assert.deepEqual(await sameOnA('removed on B'), []);
  });
});

describe('an OAuth flow behind a load balancer', () => {
  // Instances behind a load balancer share one public URL (--public-url): the redirect URI the
  // local provider registered, and where the service exchanges the code, are on it. The
  // balancer sends each request to the next instance in turn, so every page of the popup, and
  // the service's own token request, lands on the other instance than the one before.
  const env: Record<string, string> = {};
  let balancer: Server;
  let turn = 0;
  before(async () => {
    balancer = createServer((incoming, outgoing) => {
      const target = new URL(pair.cluster.instances[turn++ % 2]!.url);
      const forwarded = request(
        {
          host: target.hostname,
          port: target.port,
          path: incoming.url,
          method: incoming.method,
          headers: incoming.headers,
        },
        (answer) => {
          outgoing.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(outgoing);
        },
      );
      forwarded.on('error', () => outgoing.writeHead(502).end());
      incoming.pipe(forwarded);
    });
    await new Promise<void>((resolve) => balancer.listen(0, '127.0.0.1', resolve));
    env.FORGE_PUBLIC_URL = `http://127.0.0.1:${(balancer.address() as AddressInfo).port}`;
  });
  const pair = twoInstances('2026-03-02T12:00:00Z', env);
  after(() => new Promise<void>((resolve) => balancer.close(() => resolve())));

  test('completes page by page, each page on another instance', async () => {
    const { a, b } = pair;
    const { token } = await newUser(a);
    const started = await a.api('POST', `/credentials/${OAUTH}/oauth`, undefined, token);
    assert.equal(started.status, 200, JSON.stringify(started.body));
    // The popup opens the link on the balancer's origin, as a browser would reach the service there.
    const link = new URL(started.body.url);
    const authorize = await fetch(new URL(link.pathname + link.search, env.FORGE_PUBLIC_URL), { redirect: 'manual' });
    assert.equal(authorize.status, 302);
    const page = await (await fetch(authorize.headers.get('location')!)).text();
    const action = /<form method="post" action="([^"]+)"/.exec(page)?.[1]?.replaceAll('&#38;', '&');
    assert.ok(action, `the consent page has no form: ${page}`);
    const consent = await fetch(new URL(action, env.FORGE_PUBLIC_URL), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'decision=allow',
    });
    assert.equal(consent.status, 303);
    const callback = await (await fetch(new URL(consent.headers.get('location')!, env.FORGE_PUBLIC_URL))).text();
    const message = JSON.parse(/window\.opener\.postMessage\((\{.*?\}), /.exec(callback)![1]!);
    assert.equal(message.status, 'authorized', callback);
    const confirmed = await b.api('POST', `/credentials/${OAUTH}/oauth/confirm`, { grant: message.grant }, token);
    assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
    const connected = (await a.api('GET', '/credentials', undefined, token)).body.data;
    assert.deepEqual(
      connected.map((c: { integration: string }) => c.integration),
      [OAUTH],
    );
    assert.equal(
      turn,
      5,
      'the balancer took the authorize link, the consent page and its answer, the callback and the code exchange',
    );
  });
});
