import { html } from 'lit';

/** The largest unit that fits, so "3 hours ago" rather than "190 minutes ago". */
const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['year', 365 * 864e5],
  ['month', 30 * 864e5],
  ['week', 7 * 864e5],
  ['day', 864e5],
  ['hour', 36e5],
  ['minute', 6e4],
  ['second', 1e3],
];

/** `5 minutes ago`, `in 2 hours`, `yesterday`: a time relative to now, in the locale's words. */
export function relativeTime(iso: string, locale: string, now = Date.now()): string {
  const diff = Date.parse(iso) - now;
  const [unit, size] = UNITS.find(([, size]) => Math.abs(diff) >= size) ?? UNITS[6]!;
  return new Intl.RelativeTimeFormat(locale, { numeric: 'auto' }).format(Math.round(diff / size), unit);
}

/**
 * A sentence around a relative time (`sentence("5 minutes ago")`), with the exact time shown on
 * hover (`title`) and on keyboard focus (the styles show the `title` of a focused `time`).
 */
export const timeTag = (iso: string, locale: string, sentence: (when: string) => string) =>
  html`<time
    datetime=${iso}
    title=${new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'medium' }).format(new Date(iso))}
    tabindex="0"
    >${sentence(relativeTime(iso, locale))}</time
  >`;
