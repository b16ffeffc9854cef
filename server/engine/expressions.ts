import type { ErrorKind, VariableValue } from 'forge-embed/client';
import { isPlainObject } from '../validate.js';

/**
 * The one expression syntax of block parameters (docs/executions.md):
 *
 *   {{<blockId>.path.to.value}}  the output of a block that ran earlier in this execution
 *   {{vars.<name>}}              the user's value of a variable (any variable block)
 *   {{env.<NAME>}}               a setting of the service (SANDBOX_URL)
 *   {{connection.<name>}}        in an HTTP block's URL: a non-secret value of the user's connection
 *                                to the block's integration (docs/integrations.md)
 *
 * Path segments are separated by dots; a numeric segment indexes an array. A text that is
 * exactly one expression keeps the referenced value's type (a number stays a number, a list a
 * list); an expression inside longer text is replaced by the value as text (lists and objects
 * as JSON). A reference that names nothing fails the run with a message that names it.
 */

const BLOCK_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class ExpressionError extends Error {
  /** A variable the workflow does not define is the user's settings' problem; any other reference is the workflow's. */
  readonly kind: ErrorKind;

  constructor(message: string, kind: ErrorKind = 'internal') {
    super(message);
    this.kind = kind;
  }
}

export interface Scope {
  /** Output (`json`) of each block that has run so far, by block id. */
  outputs: ReadonlyMap<string, Record<string, unknown>>;
  /** Names of all blocks of the workflow, by id, for messages about blocks that have not run. */
  blockNames: ReadonlyMap<string, string>;
  vars: Readonly<Record<string, VariableValue>>;
  env: Readonly<Record<string, string>>;
  /** The non-secret connection values of the block's integration, where they may be used (an HTTP block's URL). */
  connection?: Readonly<Record<string, string>>;
}

export interface TextOptions {
  /**
   * Applied to each value inserted into longer text, e.g. `encodeURIComponent` in a URL so a
   * value cannot change its path or query. `env` values are the service's own and go in as is.
   */
  encode?: (text: string) => string;
}

/** Every string inside `value` (objects and arrays walked) with its expressions evaluated. */
export function evaluate(value: unknown, scope: Scope): unknown {
  if (typeof value === 'string') return evaluateText(value, scope);
  if (Array.isArray(value)) return value.map((item) => evaluate(item, scope));
  if (isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, evaluate(item, scope)]));
  }
  return value;
}

export function evaluateText(text: string, scope: Scope, { encode }: TextOptions = {}): unknown {
  const found = expressionsIn(text);
  const [first] = found;
  if (found.length === 1 && first!.start === 0 && first!.end === text.length) return resolve(first!.reference, scope);
  let result = '';
  let done = 0;
  for (const { start, end, reference } of found) {
    const inserted = asText(resolve(reference, scope));
    result += text.slice(done, start) + (encode && !reference.startsWith('env.') ? encode(inserted) : inserted);
    done = end;
  }
  return found.length === 0 ? text : result + text.slice(done);
}

/**
 * Each `{{ reference }}` of a text, left to right: two opening braces, text without braces,
 * two closing braces; the reference is what is between, trimmed. A scan rather than a regular
 * expression: the pattern \{\{\s*([^{}]*?)\s*\}\} backtracks cubically on a long run of spaces
 * after "{{" with no "}}" (4,000 characters held the process for a minute); this looks at each
 * character a bounded number of times, however the text is made.
 */
export function expressionsIn(text: string): Array<{ start: number; end: number; reference: string }> {
  const found: Array<{ start: number; end: number; reference: string }> = [];
  let from = 0;
  for (;;) {
    const start = text.indexOf('{{', from);
    if (start < 0) return found;
    let brace = start + 2;
    while (brace < text.length && text[brace] !== '{' && text[brace] !== '}') brace++;
    if (text.startsWith('}}', brace)) {
      found.push({ start, end: brace + 2, reference: text.slice(start + 2, brace).trim() });
      from = brace + 2;
    } else {
      // No expression starts here; the next may start at the next brace ("{{{x}}" holds "{{x}}").
      from = start + 1;
    }
  }
}

function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** The value a reference (the text between the braces) names. */
export function resolve(reference: string, scope: Scope): unknown {
  const shown = `{{${reference}}}`;
  const [head = '', ...path] = reference.split('.');
  if (head === 'vars') {
    const name = path.join('.');
    if (!Object.hasOwn(scope.vars, name)) {
      const known = Object.keys(scope.vars);
      throw new ExpressionError(
        `${shown} names no variable of this workflow${known.length ? `; its variables are ${known.join(', ')}` : ''}.`,
        'settings',
      );
    }
    return scope.vars[name];
  }
  if (head === 'env') {
    const name = path.join('.');
    if (!Object.hasOwn(scope.env, name)) {
      throw new ExpressionError(
        `${shown} is not a service setting; the settings are ${Object.keys(scope.env).join(', ')}.`,
      );
    }
    return scope.env[name];
  }
  if (head === 'connection' && scope.connection) {
    const name = path.join('.');
    if (!Object.hasOwn(scope.connection, name)) {
      throw new ExpressionError(
        `${shown} names no value of this user's connection; connecting the integration again asks for it.`,
        'connection',
      );
    }
    return scope.connection[name];
  }
  if (!BLOCK_ID.test(head)) {
    throw new ExpressionError(
      `${shown} is not an expression: write {{<block id>.path.to.value}}, {{vars.<variable name>}} or {{env.<setting>}}.`,
    );
  }
  const output = scope.outputs.get(head);
  if (!output) {
    const name = scope.blockNames.get(head);
    throw new ExpressionError(
      name === undefined
        ? `${shown} names no block of this workflow.`
        : `${shown} refers to the block "${name}", which has not run before this one.`,
    );
  }
  let current: unknown = output;
  for (const [i, segment] of path.entries()) {
    const container = current;
    const found =
      (Array.isArray(container) && /^\d+$/.test(segment) && Number(segment) < container.length) ||
      (isPlainObject(container) && Object.hasOwn(container, segment));
    if (!found) {
      const at = i > 0 ? ` at ${path.slice(0, i).join('.')}` : '';
      const has = isPlainObject(container)
        ? Object.keys(container).length
          ? `it has ${Object.keys(container).join(', ')}`
          : 'it is empty'
        : Array.isArray(container)
          ? `it is a list of ${container.length}`
          : `it is ${JSON.stringify(container)}`;
      throw new ExpressionError(
        `${shown}: the output of the block "${scope.blockNames.get(head)}"${at} has no "${segment}" (${has}).`,
      );
    }
    current = (container as Record<string, unknown>)[segment];
  }
  return current;
}
