/**
 * The rules a workflow variable's value must keep (issue 26): its `type`, `required`, `pattern`,
 * `min`/`max` and fixed `options`, as the catalog declares them. The service checks install and
 * set-variable values with `checkValue`, and the configuration modal checks what the user typed
 * with the same function before it saves, so the modal never accepts what the service refuses.
 * A refusal is a `ValueProblem` (which rule, with its bound), not a sentence: the service says it
 * in English (`describeProblem`), the modal in the element's locale.
 *
 * Like number.ts, this file is compiled into both packages: it imports nothing but the number
 * rule, and uses neither the DOM nor Node.
 */
import { asNumber } from './number.js';

/** The kinds of value a variable holds, each with its control in the modal. */
export const VARIABLE_TYPES = ['string', 'number', 'boolean', 'select', 'text', 'email', 'url'] as const;
export type VariableType = (typeof VARIABLE_TYPES)[number];

/** The longest text a variable holds. */
export const MAX_TEXT_LENGTH = 10_000;

/** One fixed choice of a `select` variable. */
export interface VariableOption {
  value: string | number;
  label: string;
}

/** What of a variable's definition its rules read (the catalog's variable has these and more). */
export interface VariableRules {
  name: string;
  /** The default; with no `type`, a numeric default makes a numeric variable. */
  value: string | number | boolean;
  type?: VariableType;
  required?: boolean;
  pattern?: string;
  patternMessage?: string;
  min?: number;
  max?: number;
  options?: readonly VariableOption[];
}

/** Why a value is refused. */
export type ValueProblem =
  | { rule: 'required' }
  | { rule: 'type'; expected: 'number' | 'boolean' | 'text' | 'string or number' }
  | { rule: 'tooLong'; max: number }
  | { rule: 'min'; min: number }
  | { rule: 'max'; max: number }
  | { rule: 'email' }
  | { rule: 'url' }
  | { rule: 'pattern'; message: string | undefined }
  | { rule: 'option'; options: readonly VariableOption[] };

export type ValueCheck = { value: string | number | boolean } | { problem: ValueProblem };

/**
 * The type a variable's rules follow: its `type`, else (catalogs written before `type`) a number
 * for a numeric default and `undefined`, the old rule, for the rest: a string or a number, kept
 * as given.
 */
export function typeOf(variable: Pick<VariableRules, 'type' | 'value'>): VariableType | undefined {
  return variable.type ?? (typeof variable.value === 'number' ? 'number' : undefined);
}

/**
 * An address as `<input type="email">` takes it: the HTML standard's "valid e-mail address"
 * (https://html.spec.whatwg.org/#valid-e-mail-address), so the browser and the rule agree.
 */
const EMAIL =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/** An absolute http(s) URL with a host: what a workflow can call or link to. */
function isWebUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** Compiled patterns, by source: a catalog has few, and the modal checks on every save. */
const patterns = new Map<string, RegExp>();
function patternOf(source: string): RegExp {
  let compiled = patterns.get(source);
  if (!compiled) {
    compiled = new RegExp(source, 'u');
    patterns.set(source, compiled);
  }
  return compiled;
}

/** Whether a value counts as not given: nothing, or white space alone (`null` is a wrong value, not none). */
export const isEmpty = (value: unknown): boolean =>
  value === undefined || (typeof value === 'string' && value.trim() === '');

/**
 * A value as the variable stores it, or the rule it breaks. Texts stand for numbers by the
 * number rule and for booleans when they are `true` or `false` (the service interface declares
 * string values). An empty value (nothing, or white space alone) is allowed unless the variable
 * is required, and is stored as given (`""` for nothing: not set), or as `false` for a boolean.
 */
export function checkValue(variable: VariableRules, value: unknown): ValueCheck {
  const type = typeOf(variable);
  if (isEmpty(value)) {
    if (variable.required) return { problem: { rule: 'required' } };
    return { value: type === 'boolean' ? false : ((value as string | undefined) ?? '') };
  }
  switch (type) {
    case 'number': {
      const number = asNumber(value);
      if (number === undefined) {
        // Catalogs written before `type`: a text that is no number stays text, as it always did.
        if (variable.type === undefined) {
          return typeof value === 'string'
            ? textRules(variable, value)
            : { problem: { rule: 'type', expected: 'string or number' } };
        }
        return { problem: { rule: 'type', expected: 'number' } };
      }
      if (variable.min !== undefined && number < variable.min) return { problem: { rule: 'min', min: variable.min } };
      if (variable.max !== undefined && number > variable.max) return { problem: { rule: 'max', max: variable.max } };
      return { value: number };
    }
    case 'boolean':
      if (value === true || value === 'true') return { value: true };
      if (value === false || value === 'false') return { value: false };
      return { problem: { rule: 'type', expected: 'boolean' } };
    case 'select': {
      if (typeof value !== 'string' && !(typeof value === 'number' && Number.isFinite(value))) {
        return { problem: { rule: 'type', expected: 'string or number' } };
      }
      // Choices read from the user's app are the app's to check; fixed ones are checked here.
      if (!variable.options) return textRules(variable, String(value));
      // A text sent for a numeric choice (the interface declares strings) is that choice.
      const chosen = variable.options.find((option) => String(option.value) === String(value));
      return chosen ? { value: chosen.value } : { problem: { rule: 'option', options: variable.options } };
    }
    case undefined:
      // Catalogs written before `type`: a string or a number, kept as given.
      if (typeof value === 'number' && Number.isFinite(value)) return { value };
      if (typeof value !== 'string') return { problem: { rule: 'type', expected: 'string or number' } };
      return textRules(variable, value);
    default: {
      // string, text, email, url: a number sent for one is its text.
      const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
      if (typeof text !== 'string') return { problem: { rule: 'type', expected: 'text' } };
      const trimmed = text.trim();
      if (type === 'email' && !EMAIL.test(trimmed)) return { problem: { rule: 'email' } };
      if (type === 'url' && !isWebUrl(trimmed)) return { problem: { rule: 'url' } };
      return textRules(variable, type === 'email' || type === 'url' ? trimmed : text);
    }
  }
}

function textRules(variable: VariableRules, text: string): ValueCheck {
  if (text.length > MAX_TEXT_LENGTH) return { problem: { rule: 'tooLong', max: MAX_TEXT_LENGTH } };
  if (variable.pattern !== undefined && !patternOf(variable.pattern).test(text)) {
    return { problem: { rule: 'pattern', message: variable.patternMessage } };
  }
  return { value: text };
}

/** What a refused value must be instead, in English, for the service's problem documents. */
export function describeProblem(problem: ValueProblem, label: string): string {
  switch (problem.rule) {
    case 'required':
      return `${label} is required.`;
    case 'type':
      return `${label} must be ${
        problem.expected === 'number'
          ? 'a number (digits, an optional fraction and minus sign, such as 12 or -0.5)'
          : problem.expected === 'boolean'
            ? 'true or false'
            : problem.expected === 'text'
              ? 'a string'
              : 'a string or a number'
      }.`;
    case 'tooLong':
      return `${label} must be at most ${problem.max} characters.`;
    case 'min':
      return `${label} must be at least ${problem.min}.`;
    case 'max':
      return `${label} must be at most ${problem.max}.`;
    case 'email':
      return `${label} must be an e-mail address, such as name@example.com.`;
    case 'url':
      return `${label} must be an http or https address, such as https://example.com/.`;
    case 'pattern':
      return problem.message ? `${label}: ${problem.message}` : `${label} is not in the expected form.`;
    case 'option':
      return `${label} must be one of ${problem.options.map((o) => JSON.stringify(o.value)).join(', ')}.`;
  }
}
