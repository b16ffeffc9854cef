/**
 * The use order the service's bounded caches drop by (server/use-order.ts: the catalog's answers,
 * the kept pages and setups, the verified tokens): against a plain list of keys, most recent
 * last, for any sequence of reads, writes and deletes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { UseOrderedMap } from '../../server/use-order.js';

type Step = { op: 'get' | 'set' | 'delete'; key: string };

describe('UseOrderedMap', () => {
  test('keeps its entries least recently used first, whatever was read, written and deleted', () => {
    const step = fc.record({ op: fc.constantFrom('get', 'set', 'delete'), key: fc.constantFrom('a', 'b', 'c', 'd') });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps: Step[]) => {
        const map = new UseOrderedMap<string, number>();
        let model: Array<[string, number]> = [];
        steps.forEach(({ op, key }, i) => {
          const at = model.findIndex(([k]) => k === key);
          if (op === 'get') {
            assert.equal(map.get(key), at < 0 ? undefined : model[at]![1]);
            if (at >= 0) model = [...model.filter(([k]) => k !== key), model[at]!];
          } else if (op === 'set') {
            map.set(key, i);
            model = [...model.filter(([k]) => k !== key), [key, i]];
          } else {
            map.delete(key);
            model = model.filter(([k]) => k !== key);
          }
          assert.deepEqual([...map.leastRecentFirst()], model);
          assert.equal(map.size, model.length);
        });
      }),
    );
  });

  test('a read of the most recent entry, or of one not kept, leaves the order as it was', () => {
    const map = new UseOrderedMap<string, string>();
    map.set('a', 'A');
    map.set('b', 'B');
    assert.equal(map.get('b'), 'B');
    assert.equal(map.get('z'), undefined);
    assert.deepEqual(
      [...map.leastRecentFirst()],
      [
        ['a', 'A'],
        ['b', 'B'],
      ],
    );
    assert.equal(map.get('a'), 'A');
    assert.deepEqual(
      [...map.leastRecentFirst()].map(([key]) => key),
      ['b', 'a'],
    );
  });

  test('setWithin keeps at most its bound, dropping the least recently used first', () => {
    const map = new UseOrderedMap<string, number>();
    map.setWithin('a', 1, 2);
    map.setWithin('b', 2, 2);
    map.get('a');
    map.setWithin('c', 3, 2);
    assert.deepEqual(
      [...map.leastRecentFirst()],
      [
        ['a', 1],
        ['c', 3],
      ],
    );
    map.setWithin('a', 4, 2);
    assert.deepEqual(
      [...map.leastRecentFirst()].map(([key]) => key),
      ['c', 'a'],
    );
  });
});
