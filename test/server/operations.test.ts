/**
 * The service as an operator runs it (issue 28): `forge-service` as a process, configured by
 * environment variables, writing one JSON object per line and no secret, its last lines out
 * before a kill -9; `--help` naming every option and variable; `forge-service check` for a
 * deploy pipeline.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { buildService } from '../../server/app.js';
import { generateApiKey } from '../../server/auth.js';
import { PACKAGE_ROOT } from '../../server/paths.js';
import { testDatabase } from './backend.js';
import { PAYMENTS, REFUSE, Receiver, writeTestCatalog } from './engine-support.js';
import { call, jsonLines, launch, MAIN } from './process-support.js';

const run = promisify(execFile);

describe('the log of a whole run', () => {
  test('is one JSON object per line, with level, request id and execution id, and no secret; lines logged before a kill -9 are out', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'forge-ops-'));
    const apiKey = generateApiKey();
    const receiver = await new Receiver().up();
    const { db } = await testDatabase(join(dir, 'ops.db'));
    const service = await launch(
      {
        FORGE_API_KEY: apiKey,
        FORGE_PORT: '0',
        DATABASE_URL: db,
        FORGE_CATALOG: writeTestCatalog(),
        FORGE_ALLOW_PRIVATE_WEBHOOKS: '1',
        FORGE_SANDBOX_URL: 'http://127.0.0.1:9',
        FORGE_ALLOWED_ORIGINS: '',
      },
      [],
    );
    try {
      const { url } = service;
      const settings = await call(url, 'PUT', '/settings', apiKey, { errorWebhookUrl: receiver.url });
      assert.equal(settings.status, 200);
      const webhookSecret = settings.body.errorWebhookSecret;
      const { userId } = (await call(url, 'POST', '/user', apiKey, { name: 'Ada', email: 'ada@example.com' })).body;
      const { token } = (await call(url, 'GET', `/user/${userId}/token`, apiKey)).body;
      const credentialValue = 'crm-secret-value-9f8e7d6c5b4a';
      assert.equal((await call(url, 'POST', '/credentials/crm', token, { apiKey: credentialValue })).status, 200);
      const installed = await call(url, 'POST', `/workflow/${PAYMENTS}/install`, token, {});
      assert.equal(installed.status, 201, JSON.stringify(installed.body));
      const refusing = await call(url, 'POST', `/workflow/${REFUSE}/install`, token, {});
      const hookUrls: string[] = [];
      for (const child of [installed.body.workflowId, refusing.body.workflowId]) {
        hookUrls.push((await call(url, 'GET', `/workflow/${child}`, apiKey)).body.webhookUrl);
      }
      // A run that reaches the app (unreachable here) with the credential, then one that fails.
      await fetch(hookUrls[0]!, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Prefer: 'wait=30' },
        body: JSON.stringify({ amount: 20, customer: { name: 'A' } }),
      });
      await receiver.waitFor(1);
      const failed = await fetch(hookUrls[1]!, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Prefer: 'wait=30' },
        body: JSON.stringify({ orderId: 'last words' }),
      });
      const { executionId } = (await failed.json()) as { executionId: string };
      // No wait for the log: what was logged before the answer must already be out.
      service.child.kill('SIGKILL');
      await service.exited;

      const lines = service.stdout().split('\n').filter(Boolean);
      const entries = jsonLines(service.stdout());
      assert.equal(service.stderr(), '', 'nothing on stderr');
      // A key a child logger binds, written again by a line, is in the line twice; a reader keeps one.
      for (const line of lines) {
        for (const key of ['component', 'executionId', 'workflowId', 'reqId']) {
          assert.ok(line.split(`"${key}":`).length <= 2, `"${key}" once in ${line}`);
        }
      }
      for (const entry of entries) {
        assert.match(String(entry.level), /^(trace|debug|info|warn|error|fatal)$/, JSON.stringify(entry));
        assert.equal(typeof entry.msg, 'string');
        assert.equal(typeof entry.time, 'string');
      }
      const requests = entries.filter((e) => e.msg === 'request');
      assert.ok(requests.length >= 8, `${requests.length} request lines`);
      for (const r of requests) assert.match(String(r.reqId), /\S/, 'a request line has its id');
      const lastRun = entries.filter((e) => e.executionId === executionId);
      assert.ok(
        lastRun.some((e) => e.level === 'warn' && /execution failed: Refused order last words/.test(String(e.msg))),
        `the failed run's line, logged before the kill: ${JSON.stringify(entries.slice(-3))}`,
      );
      // Everything a run logs carries its execution id (the scheduler's "ran" line names only the child).
      const runLines = entries.filter((e) => e.workflowId && e.msg !== 'request' && e.component !== 'scheduler');
      assert.ok(runLines.length >= 2, `${runLines.length} lines from runs`);
      for (const line of runLines) assert.match(String(line.executionId), /^[0-9a-f]{24}$/, JSON.stringify(line));
      assert.ok(!entries.some((e) => /Metrics \(no API key\)/.test(String(e.msg))), 'no metrics listener by default');
      const log = lines.join('\n');
      for (const [what, secret] of [
        ['the API key', apiKey],
        ['a user token', token],
        ['a credential value', credentialValue],
        ['the error webhook secret', webhookSecret],
        ...hookUrls.map((u) => ['a webhook token', u.split('/').pop()!]),
      ] as const) {
        assert.ok(!log.includes(secret), `${what} is in the log`);
      }
    } finally {
      service.child.kill('SIGKILL');
      await receiver.down();
    }
  });
});

describe('configuration', () => {
  test('--help lists every option with its environment variable', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', MAIN, '--help'], { cwd: PACKAGE_ROOT });
    for (const [flag, variable] of [
      ['--port', 'FORGE_PORT'],
      ['--host', 'FORGE_HOST'],
      ['--db', 'DATABASE_URL'],
      ['--catalog', 'FORGE_CATALOG'],
      ['--sandbox-port', 'FORGE_SANDBOX_PORT'],
      ['--allow-private-webhooks', 'FORGE_ALLOW_PRIVATE_WEBHOOKS'],
      ['--rate-limits', 'FORGE_RATE_LIMITS'],
      ['--db-pool-size', 'FORGE_DB_POOL_SIZE'],
      ['--db-statement-timeout-ms', 'FORGE_DB_STATEMENT_TIMEOUT_MS'],
      ['--http-timeout-ms', 'FORGE_HTTP_TIMEOUT_MS'],
      ['--http-attempts', 'FORGE_HTTP_ATTEMPTS'],
      ['--delivery-timeout-ms', 'FORGE_DELIVERY_TIMEOUT_MS'],
      ['--delivery-attempts', 'FORGE_DELIVERY_ATTEMPTS'],
      ['--drain-delay-ms', 'FORGE_DRAIN_DELAY_MS'],
      ['--stop-grace-ms', 'FORGE_STOP_GRACE_MS'],
      ['--webhook-secret-grace-hours', 'FORGE_WEBHOOK_SECRET_GRACE_HOURS'],
      ['--log-level', 'FORGE_LOG_LEVEL'],
      ['--metrics', 'FORGE_METRICS'],
      ['--metrics-port', 'FORGE_METRICS_PORT'],
      ['--metrics-host', 'FORGE_METRICS_HOST'],
      ['--max-event-loop-delay-ms', 'FORGE_MAX_EVENT_LOOP_DELAY_MS'],
      ['--max-heap-used-bytes', 'FORGE_MAX_HEAP_USED_BYTES'],
      ['--public-url', 'FORGE_PUBLIC_URL'],
    ]) {
      assert.match(stdout, new RegExp(`^  ${flag}\\b.*${variable}`, 'm'), `${flag} / ${variable}`);
    }
    for (const variable of [
      'FORGE_API_KEY',
      'FORGE_ALLOWED_ORIGINS',
      'FORGE_SECRET_KEY',
      'FORGE_SANDBOX_URL',
      'FORGE_LOG',
      'OTEL_EXPORTER_OTLP_ENDPOINT',
    ]) {
      assert.match(stdout, new RegExp(`^  ${variable}\\b`, 'm'));
    }
  });

  test('forge-service check passes a good configuration and catalog, and names what is wrong otherwise', async () => {
    const check = (env: Record<string, string>, ...args: string[]) =>
      run(process.execPath, ['--import', 'tsx', MAIN, 'check', ...args], {
        cwd: PACKAGE_ROOT,
        env: { ...process.env, FORGE_SECRET_KEY: '', ...env },
      }).then(
        ({ stdout }) => ({ code: 0, output: stdout }),
        (error: { code: number; stdout: string; stderr: string }) => ({
          code: error.code,
          output: error.stdout + error.stderr,
        }),
      );
    const good = await check({ FORGE_CATALOG: writeTestCatalog() });
    assert.deepEqual([good.code, /valid/.test(good.output)], [0, true], good.output);

    const badPort = await check({ FORGE_PORT: 'eighty' });
    assert.equal(badPort.code, 2);
    assert.match(badPort.output, /--port \(FORGE_PORT\) must be a whole number from 0 to 65535; got "eighty"/);

    const badPool = await check({}, '--db-pool-size', '0');
    assert.match(badPool.output, /--db-pool-size \(FORGE_DB_POOL_SIZE\) must be a whole number from 1/);

    const postgresWithoutKey = await check({ DATABASE_URL: 'postgres://forge@127.0.0.1:1/forge' });
    assert.equal(postgresWithoutKey.code, 2);
    assert.match(postgresWithoutKey.output, /set FORGE_SECRET_KEY/);

    const dir = mkdtempSync(join(tmpdir(), 'forge-check-'));
    const catalog = join(dir, 'catalog.json');
    writeFileSync(
      catalog,
      JSON.stringify({
        integrations: [],
        workflows: [
          {
            workflowId: 'wf-bad-cron',
            name: 'Bad cron',
            integrations: [],
            blocks: [
              {
                name: 'Every',
                id: 'a1111111-1111-4111-8111-111111111111',
                type: 'schedule',
                parameters: { cron: 'every minute' },
              },
            ],
          },
        ],
      }),
    );
    const badCatalog = await check({ FORGE_CATALOG: catalog });
    assert.equal(badCatalog.code, 1);
    assert.match(badCatalog.output, /the catalog: .*cron/is);
  });
});

describe('with FORGE_LOG=off and a metrics listener', () => {
  test('the log stays JSON without request lines, and --metrics-port serves /metrics without the key, on loopback', async () => {
    const apiKey = generateApiKey();
    const { db } = await testDatabase(join(mkdtempSync(join(tmpdir(), 'forge-ops-')), 'quiet.db'));
    const service = await launch({
      FORGE_API_KEY: apiKey,
      FORGE_PORT: '0',
      DATABASE_URL: db,
      FORGE_CATALOG: writeTestCatalog(),
      FORGE_LOG: 'off',
      FORGE_METRICS_PORT: '0',
    });
    try {
      assert.equal((await call(service.url, 'GET', '/user', apiKey)).status, 200);
      // The service's own port still wants the key.
      assert.equal((await fetch(`${service.url}/metrics`)).status, 401);
      const metricsUrl = /Metrics \(no API key\) on (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(service.stdout())?.[1];
      assert.ok(metricsUrl, service.stdout());
      const scraped = await fetch(metricsUrl);
      assert.equal(scraped.status, 200);
      assert.match(
        await scraped.text(),
        /^forge_http_request_duration_seconds_count\{method="GET",route="\/forge\/2021-12\/user",status="200"\} 1$/m,
      );
      assert.equal((await fetch(metricsUrl.replace('/metrics', '/forge/2021-12/user'))).status, 404);
      service.child.kill('SIGTERM');
      assert.equal(await service.exited, 0);
      const entries = jsonLines(service.stdout());
      assert.ok(entries.length >= 5);
      assert.ok(!entries.some((e) => e.msg === 'request'), 'no line per request');
      assert.equal(service.stderr(), '');
    } finally {
      service.child.kill('SIGKILL');
    }
  });

  test('without a log stream, an unexpected error still is one JSON line (on stderr), never plain text', async (t) => {
    const { db, drop } = await testDatabase();
    const service = await buildService({ db, catalog: writeTestCatalog() });
    service.app.get('/fails', async () => {
      throw new Error('the disk is full');
    });
    const written: string[] = [];
    const write = t.mock.method(process.stderr, 'write', (chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      const answer = await service.app.inject('/fails');
      write.mock.restore();
      assert.equal(answer.statusCode, 500);
      assert.doesNotMatch(answer.body, /disk/);
      assert.equal(written.length, 1, written.join(''));
      const line = JSON.parse(written[0]!);
      assert.equal(line.level, 'error');
      assert.equal(line.msg, 'request failed');
      assert.match(line.err.message, /the disk is full/);
      assert.match(String(line.reqId), /\S/);
    } finally {
      write.mock.restore();
      await service.app.close();
      await drop?.();
    }
  });
});
