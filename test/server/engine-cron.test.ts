import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CronSyntaxError, parseCron } from '../../server/engine/cron.js';

const due = (cron: string, iso: string) => parseCron(cron).matches(new Date(iso));

test('matches minutes, hours, lists, ranges and steps in UTC', () => {
  assert.equal(due('0 * * * *', '2026-03-02T07:00:00Z'), true);
  assert.equal(due('0 * * * *', '2026-03-02T07:01:00Z'), false);
  assert.equal(due('0 9 * * *', '2026-03-02T09:00:59Z'), true, 'any second of the minute');
  assert.equal(due('0 9 * * *', '2026-03-02T10:00:00+01:00'), true, 'UTC, whatever the offset written');
  assert.equal(due('*/15 * * * *', '2026-03-02T07:45:00Z'), true);
  assert.equal(due('*/15 * * * *', '2026-03-02T07:50:00Z'), false);
  assert.equal(due('5,10-12 * * * *', '2026-03-02T07:11:00Z'), true);
  assert.equal(due('5,10-12 * * * *', '2026-03-02T07:13:00Z'), false);
  assert.equal(due('10-30/10 * * * *', '2026-03-02T07:30:00Z'), true);
  assert.equal(due('10-30/10 * * * *', '2026-03-02T07:25:00Z'), false);
  assert.equal(due('15/20 * * * *', '2026-03-02T07:55:00Z'), true, 'a start with a step runs to the end');
});

test('days: months and weekdays by number or name, Sunday as 0 or 7', () => {
  // 2026-03-01 is a Sunday.
  assert.equal(due('0 0 * * 0', '2026-03-01T00:00:00Z'), true);
  assert.equal(due('0 0 * * 7', '2026-03-01T00:00:00Z'), true);
  assert.equal(due('0 0 * * SUN', '2026-03-01T00:00:00Z'), true);
  assert.equal(due('0 0 * * mon-fri', '2026-03-01T00:00:00Z'), false);
  assert.equal(due('0 0 * * mon-fri', '2026-03-02T00:00:00Z'), true);
  assert.equal(due('0 0 1 jan *', '2026-01-01T00:00:00Z'), true);
  assert.equal(due('0 0 1 jan *', '2026-02-01T00:00:00Z'), false);
});

test('a restricted day of month and day of week match when either does, as in classic cron', () => {
  // 2026-03-13 is a Friday; 2026-03-15 is a Sunday.
  assert.equal(due('0 0 13 * 5', '2026-03-13T00:00:00Z'), true);
  assert.equal(due('0 0 13 * 5', '2026-03-20T00:00:00Z'), true, 'a Friday');
  assert.equal(due('0 0 13 * 5', '2026-03-15T00:00:00Z'), false);
  assert.equal(due('0 0 13 * *', '2026-03-20T00:00:00Z'), false);
});

test('a bad expression is refused with a message that says what is wrong', () => {
  const refused = (cron: string, message: RegExp) =>
    assert.throws(
      () => parseCron(cron),
      (error: Error) => {
        assert.ok(error instanceof CronSyntaxError, `${error.name}: ${error.message}`);
        assert.match(error.message, message);
        return true;
      },
    );
  refused('* * * *', /has 4 fields; a cron expression has 5/);
  refused('60 * * * *', /minute field "60" has 60; minute runs from 0 to 59/);
  refused('* 24 * * *', /hour runs from 0 to 23/);
  refused('* * 0 * *', /day of month runs from 1 to 31/);
  refused('*/0 * * * *', /step is a whole number ≥ 1/);
  refused('30-10 * * * *', /runs backwards/);
  refused('* * * smarch *', /"smarch", which is not a number or a name/);
  refused('1-2-3 * * * *', /a range is two values/);
  refused('1,,2 * * * *', /not a value, range or step/);
});
