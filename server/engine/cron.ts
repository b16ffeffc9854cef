import { Cron } from 'croner';

/**
 * The five-field cron syntax of a schedule block — `minute hour day-of-month month day-of-week` —
 * evaluated in UTC. Croner reads and matches it: each field is `*`, a number, a range `a-b`, a
 * step `*\/n`, `a/n` or `a-b/n`, or a comma-separated list of those; months and weekdays also
 * take names (`jan`, `mon`); weekday 0 and 7 are both Sunday. As in classic cron, when both day
 * fields are restricted a day matches if either does. Croner's extensions (`L`, `W`, `#`, `?`,
 * `@daily`) are accepted too.
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
  /** The start of the first minute after `date` the schedule is due in. */
  next(date: Date): Date | undefined;
}

const schedule = (pattern: string) =>
  // paused: the service's scheduler decides when to look (server/engine/engine.ts); croner only
  // answers whether a minute is due. `sloppyRanges` keeps `15/20` meaning "from 15, every 20",
  // as the schedules written for this service already do.
  new Cron(pattern, { timezone: 'UTC', mode: '5-part', paused: true, sloppyRanges: true, domAndDow: false });

export function parseCron(source: string): CronSchedule {
  const parts = source.trim().split(/\s+/);
  if (parts.length !== 5 && !source.trim().startsWith('@')) {
    throw new CronSyntaxError(
      `"${source}" has ${parts.length} field${parts.length === 1 ? '' : 's'}; a cron expression has 5: minute hour day-of-month month day-of-week (e.g. "0 9 * * 1").`,
    );
  }
  let cron: Cron;
  try {
    cron = schedule(source.trim());
  } catch (error) {
    throw new CronSyntaxError(explain(source, parts, error as Error));
  }
  // Croner matches to the second (at :00 in five-field mode); a schedule is due for its whole minute.
  return {
    source,
    matches: (date) => cron.match(new Date(date.getTime() - (date.getTime() % 60_000))),
    next: (date) => cron.nextRun(date) ?? undefined,
  };
}

/**
 * Croner's reasons name its own internals ("Invalid value for day: -1"); a host gets one that
 * names the field as they wrote it and says what it may hold. The field is the first that croner
 * refuses on its own; the reason is worked out from its text.
 */
function explain(source: string, parts: string[], error: Error): string {
  const fallback = `"${source}": ${error.message.replace(/^CronPattern:\s*/, '')}`;
  const index = parts.findIndex((part, i) => {
    const alone = ['*', '*', '*', '*', '*'];
    alone[i] = part;
    try {
      schedule(alone.join(' '));
      return false;
    } catch {
      return true;
    }
  });
  const field = FIELDS[index];
  if (!field) return fallback;
  const text = parts[index]!;
  const reason = reasonOf(text, field);
  return reason ? `"${source}": the ${field.name} field "${text}" ${reason}` : fallback;
}

function reasonOf(text: string, field: Field): string | undefined {
  for (const item of text.split(',')) {
    const [range, step, extra] = item.split('/');
    if (extra !== undefined || !range) return 'is not a value, range or step.';
    if (step !== undefined && !/^[1-9]\d*$/.test(step)) return `has the step "${step}"; a step is a whole number ≥ 1.`;
    if (range === '*') continue;
    const bounds = range.split('-');
    if (bounds.length > 2) return `has the range "${range}"; a range is two values, a-b.`;
    const values: number[] = [];
    for (const bound of bounds) {
      const named = field.names?.indexOf(bound.toLowerCase()) ?? -1;
      if (named >= 0) {
        values.push(named + field.min);
        continue;
      }
      if (!/^\d+$/.test(bound)) return `has "${bound}", which is not a number${field.names ? ' or a name' : ''}.`;
      const n = Number(bound);
      if (n < field.min || n > field.max) return `has ${n}; ${field.name} runs from ${field.min} to ${field.max}.`;
      values.push(n);
    }
    if (values.length === 2 && values[0]! > values[1]!) return `has the range "${range}", which runs backwards.`;
  }
  return undefined;
}
