import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { generateApiKey } from '../../server/auth.js';
import { PACKAGE_ROOT } from '../../server/paths.js';
import { BACKEND, testDatabase } from './backend.js';
import { API, demoCatalog, sample, TestService } from './support.js';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'forge-persistence-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('a restart on the same database file', () => {
  test('keeps users, workflows, values, credentials, logs, the API key and the signing key', async () => {
    const db = join(dir, 'restart.db');
    const first = await TestService.start({ db });
    assert.equal(first.service.apiKeyGenerated, true);
    const { userId, token, childId } = await first.userWithChild();
    await first.asUser(token, 'PATCH', `/workflow/${childId}/variables/${sample.variablesBlock.id}`, {
      [sample.number.name]: 99,
      [sample.text.name]: 'kept',
    });
    await first.asUser(token, 'PUT', `/workflow/${childId}/deactivate`);
    const parameters = demoCatalog.integrations.find((i) => i.requiredParameters?.length)!;
    const values = Object.fromEntries(parameters.requiredParameters!.map((p) => [p.name, `value-of-${p.name}`]));
    assert.equal((await first.asUser(token, 'POST', `/credentials/${parameters.name}`, values)).status, 200);
    await first.seedExecution(childId, new Date());
    await first.seedError(childId);
    const reads = [
      '/user',
      `/user/${userId}`,
      `/workflow/${childId}`,
      `/workflow/${childId}/logs`,
      `/workflow/${childId}/errors`,
    ];
    // URLs the service hands out name the port it runs on, which a restart changes.
    const readAll = (forge: TestService) =>
      Promise.all(reads.map(async (path) => (await forge.asHost('GET', path)).text.replaceAll(forge.url, '<service>')));
    const seen = await readAll(first);
    const connected = (await first.asUser(token, 'GET', '/credentials')).body;
    const apiKey = first.apiKey;
    await first.close();

    const second = await TestService.start({ db }, apiKey);
    try {
      assert.equal(second.service.apiKeyGenerated, false);
      // The database keeps only the key's hash; the key of the first start still works.
      assert.equal(second.service.apiKey, undefined, 'a new API key was made');
      assert.deepEqual(await readAll(second), seen);
      // A token minted before the restart still verifies: the signing key was kept.
      const withOldToken = await second.asUser(token, 'GET', '/credentials');
      assert.equal(withOldToken.status, 200);
      assert.deepEqual(withOldToken.body, connected);
      // The sealed values open with the key kept beside the database, readable by its owner only.
      const sealed = (await second.store.credentials.getSecret(userId, parameters.name))!;
      assert.deepEqual(second.service.secrets.open(sealed), { kind: 'parameters', values });
      if (BACKEND === 'sqlite') assert.equal(statSync(`${db}.key`).mode & 0o777, 0o600);
    } finally {
      await second.close();
    }
  });
});

describe('forge-service, the command', () => {
  const launched = new Set<ChildProcess>();
  // A failed test must not leave a service running, or the test process never exits.
  after(() => {
    for (const child of launched) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  /** Starts the CLI on a free port; answers the process and its base URL once it has said both. */
  async function launch(
    db: string,
    apiKey: string,
  ): Promise<{ child: ChildProcess; url: string; output: () => string }> {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'main.ts', '--port', '0', '--db', (await testDatabase(db)).db],
      {
        cwd: PACKAGE_ROOT,
        env: { ...process.env, FORGE_API_KEY: apiKey, FORGE_ALLOWED_ORIGINS: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    launched.add(child);
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout!.on('data', () => {
        const found = /listening on (http:\/\/\S+?)\/forge\/2021-12/.exec(output);
        if (found && /API key.*\n/.test(output)) resolve(found[1]!);
      });
      child.once('exit', (code) => reject(new Error(`forge-service exited with ${code} before listening:\n${output}`)));
    });
    return { child, url, output: () => output };
  }

  const exited = (child: ChildProcess) =>
    new Promise<{ code: number | null; signal: string | null }>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null)
        resolve({ code: child.exitCode, signal: child.signalCode });
      else child.once('exit', (code, signal) => resolve({ code, signal }));
    });

  test('prints its URL, never a configured API key, stops cleanly on SIGTERM, and logs every request', {
    timeout: 30_000,
  }, async () => {
    const apiKey = generateApiKey();
    const { child, url, output } = await launch(join(dir, 'cli.db'), apiKey);
    assert.match(output(), /API key: the value of the FORGE_API_KEY environment variable/);
    assert.ok(!output().includes(apiKey), 'the configured API key is in the log');
    for (let i = 0; i < 5; i++) {
      const answer = await fetch(`${url}${API}/workflow`, { headers: { Authorization: `Bearer ${apiKey}` } });
      assert.equal(answer.status, 200);
    }
    child.kill('SIGTERM');
    assert.deepEqual(await exited(child), { code: 0, signal: null });
    assert.match(output(), /SIGTERM: stopping/);
    // The request log goes out in batches: the lines of the last requests are written at the stop.
    const logged = output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.req?.url === `${API}/workflow`);
    assert.equal(logged.length, 5, output());
  });

  test('a kill -9 in the middle of writes loses nothing that was answered as saved', { timeout: 30_000 }, async () => {
    const db = join(dir, 'crash.db');
    const apiKey = generateApiKey();
    const { child, url } = await launch(db, apiKey);
    const saved = new Map<string, string>();
    let killed = false;
    let sent = 0;
    let inFlight = 0;

    // Writers keep creating users until the process dies under them.
    const writer = async (lane: number) => {
      while (!killed) {
        const email = `crash-${lane}-${sent++}@example.com`;
        inFlight++;
        try {
          const response = await fetch(`${url}${API}/user`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
            body: JSON.stringify({ name: `Writer ${lane}`, email }),
          });
          if (response.status === 200) saved.set((await response.json()).userId, email);
        } catch {
          // The connection died with the process: this write was never answered.
        } finally {
          inFlight--;
        }
      }
    };
    const writers = Array.from({ length: 12 }, (_, lane) => writer(lane));
    while (saved.size < 300 && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(child.exitCode, null, 'the service died before the kill');
    const unansweredAtKill = inFlight;
    child.kill('SIGKILL');
    killed = true;
    assert.equal((await exited(child)).signal, 'SIGKILL');
    await Promise.all(writers);
    assert.ok(unansweredAtKill > 0, 'no write was in flight at the kill');

    const restarted = await TestService.start({ db, apiKey });
    try {
      if (BACKEND === 'sqlite') {
        const { rows } = await sql<{ integrity_check: string }>`PRAGMA integrity_check`.execute(restarted.store.db);
        assert.deepEqual(rows, [{ integrity_check: 'ok' }]);
      }
      const users = (await restarted.asHost('GET', '/user')).body.data as Array<{ _id: string; email: string }>;
      const found = new Map(users.map((u) => [u._id, u.email]));
      const lost = [...saved].filter(([id, email]) => found.get(id) !== email);
      assert.equal(lost.length, 0, `${lost.length} of ${saved.size} answered users are gone, e.g. ${lost.slice(0, 3)}`);
    } finally {
      await restarted.close();
    }
  });
});
