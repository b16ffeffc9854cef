/**
 * The one number rule (server/shared/number.ts): each case it decides, and a property that the
 * modal and the service agree on generated texts: what the modal sends as a number for a numeric
 * setting is the number the service stores for the same text, and a text the modal refuses is
 * one the service keeps as text. The condition block reads values by the same rule
 * (engine.test.ts runs it).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { asNumber, numberFrom } from '../../server/shared/number.js';
import type { ParentWorkflow } from '../../src/api/types.js';
import { fieldValue, settingFields } from '../../src/config-modal/settings.js';
import { sample, TestService } from './support.js';

describe('the number rule', () => {
  const cases: Array<[text: string, number: number | undefined, why: string]> = [
    ['5', 5, 'digits'],
    ['-5', -5, 'a leading minus'],
    ['5.25', 5.25, 'a fraction'],
    ['-0.5', -0.5, 'a negative fraction'],
    ['.5', 0.5, 'a fraction without a whole part'],
    ['5.', 5, 'a point without a fraction'],
    ['007', 7, 'leading zeros'],
    [' 5 ', 5, 'white space around it'],
    ['\t-12.5\n', -12.5, 'tabs and line breaks around it'],
    ['\u00a05\u00a0', 5, 'no-break spaces around it'],
    ['-0', 0, 'minus zero is zero'],
    ['9007199254740993', 9007199254740992, 'rounded to a double, as JSON reads it'],
    ['', undefined, 'nothing typed'],
    ['   ', undefined, 'white space alone'],
    ['+5', undefined, 'a leading plus: phone numbers and offsets'],
    ['1e3', undefined, 'an exponent'],
    ['1E3', undefined, 'an exponent in capitals'],
    ['0x10', undefined, 'hexadecimal'],
    ['0b1', undefined, 'binary'],
    ['0o7', undefined, 'octal'],
    ['1_000', undefined, 'digit separators'],
    ['1,000', undefined, 'grouping with commas'],
    ['1 000', undefined, 'grouping with spaces'],
    ['1,5', undefined, 'a decimal comma'],
    ['Infinity', undefined, 'infinity'],
    ['-Infinity', undefined, 'minus infinity'],
    ['NaN', undefined, 'not a number'],
    [`1${'0'.repeat(400)}`, undefined, 'too large for a double'],
    ['.', undefined, 'a point alone'],
    ['-', undefined, 'a minus alone'],
    ['--5', undefined, 'two minus signs'],
    ['5-', undefined, 'a trailing minus'],
    ['1.2.3', undefined, 'two points'],
    ['٥', undefined, 'digits other than ASCII ones'],
    ['5 apples', undefined, 'text after the number'],
  ];
  for (const [text, number, why] of cases) {
    test(`${JSON.stringify(text)}: ${why}`, () => {
      const read = numberFrom(text);
      assert.equal(read, number);
      if (read === 0) assert.ok(Object.is(read, 0), 'never -0');
      assert.equal(asNumber(text), number, 'the condition block reads it the same');
    });
  }

  test('a value that is already a number is one when finite; other values are none', () => {
    assert.equal(asNumber(12.5), 12.5);
    assert.ok(Object.is(asNumber(-0), 0));
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, null, undefined, true, [5], { value: 5 }]) {
      assert.equal(asNumber(value), undefined, String(value));
    }
  });

  test('every finite number, written as JavaScript writes it without an exponent, reads back as itself', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
        const text = String(value);
        fc.pre(!/e/.test(text));
        assert.equal(numberFrom(text), value + 0);
      }),
    );
  });
});

describe('the modal and the service agree on generated texts', () => {
  let forge: TestService;
  before(async () => {
    forge = await TestService.start();
  });
  after(() => forge.close());

  /** Texts near the rule's edges: signs, points, exponents, prefixes, separators and white space. */
  const numberish = fc
    .tuple(
      fc.constantFrom('', ' ', '\t', '\u00a0'),
      fc.constantFrom('', '-', '+', '--'),
      fc.constantFrom('', '0x', '0b', '0o', '0'),
      fc.stringMatching(/^[0-9]{0,4}$/),
      fc.constantFrom('', '.', ',', '_', ' '),
      fc.stringMatching(/^[0-9]{0,3}$/),
      fc.constantFrom('', 'e3', 'E-2', 'e', 'Infinity', 'NaN', 'x'),
      fc.constantFrom('', ' ', '\n'),
    )
    .map((parts) => parts.join(''));
  const texts = fc.oneof(
    numberish,
    fc.double({ noNaN: true }).map(String),
    fc.integer().map(String),
    fc.string({ maxLength: 12 }),
  );

  test('a numeric setting: a number the modal sends is the number the service stores; a text it refuses stays text', async () => {
    const { parent, variablesBlock, number } = sample;
    const field = settingFields(parent as unknown as ParentWorkflow).find(
      (f) => f.block === variablesBlock.id && f.name === number.name,
    )!;
    assert.equal(field.numeric, true, 'the sample variable is numeric');
    const { token, childId } = await forge.userWithChild(parent);
    const path = `/workflow/${childId}/variables/${variablesBlock.id}`;
    const stored = async (value: string | number | boolean) => {
      const answer = await forge.asUser(token, 'PATCH', path, { [number.name]: value });
      assert.equal(answer.status, 200, answer.text);
      return answer.body.variables.find((v: { name: string }) => v.name === number.name).value;
    };
    await fc.assert(
      fc.asyncProperty(texts, async (text) => {
        const checked = fieldValue(field, text);
        const sent = 'value' in checked ? checked.value : undefined;
        if (sent === undefined || typeof sent === 'string') {
          // The modal asks for a number (or sends nothing typed as it is); the service, sent the
          // same text, keeps it as text (a catalog variable without `type`).
          assert.equal(await stored(text), text);
        } else {
          assert.equal(typeof sent, 'number');
          assert.equal(await stored(sent), sent, 'the number the modal sends is stored');
          assert.equal(await stored(text), sent, 'the service reads the text as the modal does');
          assert.equal(asNumber(text), sent, 'and a condition compares it as that number');
        }
      }),
      { numRuns: 150 },
    );
  });
});
