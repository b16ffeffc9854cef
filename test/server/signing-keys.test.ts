import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Store } from '../../server/store/store.js';
import { BACKEND, testDatabase } from './backend.js';

// Two instances (two stores, two connections) rotating the key ring at the same moment. On
// SQLite, BEGIN IMMEDIATE makes writers take turns across processes; two stores in one process
// would only block each other's event loop, so this runs where rotations really overlap.
const overlapping = BACKEND === 'sqlite' ? 'SQLite writers take turns (BEGIN IMMEDIATE)' : false;

test('two rotations at once leave exactly one current signing key', { skip: overlapping }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'forge-keys-'));
  const { db, drop } = await testDatabase(join(dir, 'forge.db'));
  const [a, b] = [await Store.open(db), await Store.open(db)];
  try {
    await a.signingKeys.add('k0', 'sealed-0', 1);
    for (let round = 1; round <= 10; round++) {
      await Promise.all([
        a.signingKeys.add(`a${round}`, 'sealed-a', 1 + round),
        b.signingKeys.add(`b${round}`, 'sealed-b', 1 + round),
      ]);
      const current = (await a.signingKeys.list()).filter((k) => k.retiredAt === null).map((k) => k.kid);
      assert.equal(current.length, 1, `round ${round}: current keys ${current.join(', ')}`);
    }
  } finally {
    await a.close();
    await b.close();
    await drop?.();
    rmSync(dir, { recursive: true, force: true });
  }
});
