/**
 * The one number rule: when a text stands for a number. The configuration modal (a numeric
 * setting), the service (a text sent for a variable whose default is a number) and the condition
 * block (comparing a run's values) all decide by it, so the modal never sends as a number what
 * the service would keep as text, and a condition never compares as text what a setting stores
 * as a number.
 *
 * A number is plain decimal, the way people write amounts:
 * - digits, with an optional fraction (`5`, `5.25`, `.5`, `5.`) and an optional leading `-`;
 *   leading zeros are allowed (`007` is 7);
 * - white space around it is ignored (` 5 ` is 5): pasted values often carry it;
 * - `-0` is 0;
 * - digits past what a double holds are rounded as JSON rounds them (`9007199254740993` is
 *   9007199254740992).
 *
 * Everything else stays text:
 * - `""` and white space alone: nothing was typed;
 * - `+5`: a leading plus marks phone numbers and offsets (`+4930…`, `+02:00`), not amounts;
 * - `1e3`: exponents are a programmer's notation, and codes such as `2E5` are not amounts;
 * - `0x10`, `0b1`, `0o7`: other bases, likewise;
 * - `1_000`, `1,000`, `1 000`: digit grouping differs between languages (`1,000` is one in German);
 * - `Infinity`, `NaN`, and a decimal too large for a double (`1` and 400 zeros): JSON has no
 *   such numbers;
 * - digits other than ASCII ones (`٥`).
 *
 * This file is compiled into both packages, so it imports nothing and uses neither the DOM nor
 * Node. The service cannot import the elements' package when it runs (`forge-embed` is an optional
 * peer of `forge-embed-service`, used for types only), and the service's build reaches only files
 * under server/ (its rootDir); the elements' build reaches the whole repository, so it compiles
 * this file to dist/server/shared/, which package.json's "files" lists.
 */

/** Optional `-`, then digits with an optional fraction, or a fraction alone; nothing around it. */
const DECIMAL = /^-?(\d+\.?\d*|\.\d+)$/;

/** The number `text` stands for, or undefined when it stands for none (see above). */
export function numberFrom(text: string): number | undefined {
  const trimmed = text.trim();
  if (!DECIMAL.test(trimmed)) return undefined;
  const value = Number(trimmed);
  // `+ 0` makes -0 plain 0.
  return Number.isFinite(value) ? value + 0 : undefined;
}

/** Any value read as a number: a finite number is one, a text by the rule above, nothing else. */
export function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value + 0 : undefined;
  return typeof value === 'string' ? numberFrom(value) : undefined;
}
