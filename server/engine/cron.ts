/**
 * The five-field cron syntax of a schedule block — `minute hour day-of-month month day-of-week` —
 * evaluated in UTC. Each field is `*`, a number, a range `a-b`, a step `*\/n` or `a-b/n`, or a
 * comma-separated list of those; months and weekdays also take names (`jan`, `mon`); weekday 0
 * and 7 are both Sunday. As in classic cron, when both day fields are restricted a day matches
 * if either does.
 */

interface Field {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
}

const FIELDS: readonly Field[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  {
    name: 'month',
    min: 1,
    max: 12,
    names: ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'],
  },
  { name: 'day of week', min: 0, max: 7, names: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] },
];

export class CronSyntaxError extends Error {}

export interface CronSchedule {
  /** The expression as written. */
  readonly source: string;
  /** Whether the schedule is due in the UTC minute that holds `date`. */
  matches(date: Date): boolean;
  /** The start of the first minute after `date` the schedule is due in, within five years. */
  next(date: Date): Date | undefined;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export function parseCron(source: string): CronSchedule {
  const parts = source.trim().split(/\s+/);
  if (parts.length !== 5) {
    throw new CronSyntaxError(
      `"${source}" has ${parts.length} field${parts.length === 1 ? '' : 's'}; a cron expression has 5: minute hour day-of-month month day-of-week (e.g. "0 9 * * 1").`,
    );
  }
  const [minutes, hours, days, months, weekdays] = parts.map((part, i) => parseField(part, FIELDS[i]!, source));
  // Sunday is both 0 and 7.
  if (weekdays!.has(7)) weekdays!.add(0);
  const dayRestricted = parts[2] !== '*';
  const weekdayRestricted = parts[4] !== '*';
  const dayMatches = (date: Date) => {
    if (!months!.has(date.getUTCMonth() + 1)) return false;
    const dayOk = days!.has(date.getUTCDate());
    const weekdayOk = weekdays!.has(date.getUTCDay());
    if (dayRestricted && weekdayRestricted) return dayOk || weekdayOk;
    return dayOk && weekdayOk;
  };
  return {
    source,
    matches: (date) => minutes!.has(date.getUTCMinutes()) && hours!.has(date.getUTCHours()) && dayMatches(date),
    next(date) {
      // Days and hours that cannot match are skipped whole (they are fixed lengths in UTC), so
      // even a yearly schedule is found in a few thousand steps.
      let at = Math.floor(date.getTime() / MINUTE) * MINUTE + MINUTE;
      for (const end = at + 5 * 366 * DAY; at < end; ) {
        const d = new Date(at);
        if (!dayMatches(d)) at += DAY - (at % DAY);
        else if (!hours!.has(d.getUTCHours())) at += HOUR - (at % HOUR);
        else if (!minutes!.has(d.getUTCMinutes())) at += MINUTE;
        else return d;
      }
      return undefined;
    },
  };
}

function parseField(text: string, field: Field, source: string): Set<number> {
  const values = new Set<number>();
  const bad = (why: string) => new CronSyntaxError(`"${source}": the ${field.name} field "${text}" ${why}`);
  for (const item of text.split(',')) {
    const [range, stepText, extra] = item.split('/');
    if (extra !== undefined || range === undefined || range === '') throw bad('is not a value, range or step.');
    let step = 1;
    if (stepText !== undefined) {
      step = Number(stepText);
      if (!/^\d+$/.test(stepText) || step < 1) throw bad(`has the step "${stepText}"; a step is a whole number ≥ 1.`);
    }
    let from = field.min;
    let to = field.max === 7 ? 6 : field.max;
    if (range !== '*') {
      const [a, b, more] = range.split('-');
      if (more !== undefined) throw bad(`has the range "${range}"; a range is two values, a-b.`);
      from = value(a!, field, bad);
      to = b === undefined ? (stepText === undefined ? from : field.max) : value(b, field, bad);
      if (from > to) throw bad(`has the range "${range}", which runs backwards.`);
    }
    for (let v = from; v <= to; v += step) values.add(v);
  }
  return values;
}

function value(text: string, field: Field, bad: (why: string) => CronSyntaxError): number {
  const named = field.names?.indexOf(text.toLowerCase()) ?? -1;
  if (named >= 0) return named + field.min;
  if (!/^\d+$/.test(text)) throw bad(`has "${text}", which is not a number${field.names ? ' or a name' : ''}.`);
  const n = Number(text);
  if (n < field.min || n > field.max) throw bad(`has ${n}; ${field.name} runs from ${field.min} to ${field.max}.`);
  return n;
}
