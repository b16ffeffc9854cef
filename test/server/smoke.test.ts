import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type RunningService, startService } from '../../server/app.js';

let service: RunningService;
before(async () => {
  service = await startService({ port: 0, db: ':memory:' });
});
after(() => service.close());

test('lists the demo catalog', async () => {
  const res = await fetch(`${service.url}/forge/2021-12/workflow`, {
    headers: { Authorization: `Bearer ${service.apiKey}` },
  });
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.ok(body.data.length >= 6);
});
