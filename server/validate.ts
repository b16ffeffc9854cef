import type { FieldError } from '../src/api/types.js';
import { badRequest } from './http.js';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The body must be a JSON object; `example` shows the caller what one looks like. */
export function bodyObject(body: unknown, example: string): Record<string, unknown> {
  if (body === undefined) throw badRequest(`A JSON body is required, for example ${example}.`);
  if (!isPlainObject(body)) throw badRequest(`The body must be a JSON object, for example ${example}.`);
  return body;
}

/**
 * Collects every field error of a body before answering, so one 400 names all that is wrong
 * rather than the first thing only.
 */
export class FieldChecker {
  readonly errors: FieldError[] = [];

  constructor(
    private readonly body: Record<string, unknown>,
    private readonly prefix = 'body',
  ) {}

  string(key: string, { max = 200 }: { max?: number } = {}): string {
    const value = this.body[key];
    const path = `${this.prefix}.${key}`;
    if (value === undefined || value === null) {
      this.errors.push({ path, message: `${key} is required.` });
    } else if (typeof value !== 'string') {
      this.errors.push({ path, message: `${key} must be a string.` });
    } else if (value.trim() === '') {
      this.errors.push({ path, message: `${key} must not be empty.` });
    } else if (value.length > max) {
      this.errors.push({ path, message: `${key} must be at most ${max} characters.` });
    } else {
      return value.trim();
    }
    return '';
  }

  email(key: string): string {
    const value = this.string(key, { max: 254 });
    if (value && !EMAIL.test(value)) {
      this.errors.push({
        path: `${this.prefix}.${key}`,
        message: `${key} must be an e-mail address such as ada@example.com.`,
      });
    }
    return value.toLowerCase();
  }

  /** Fields the operation does not know are an error, so a typo is not silently ignored. */
  onlyKnown(known: readonly string[]): void {
    for (const key of Object.keys(this.body)) {
      if (!known.includes(key)) {
        this.errors.push({
          path: `${this.prefix}.${key}`,
          message: `Unknown field; expected only ${known.join(', ')}.`,
        });
      }
    }
  }

  add(path: string, message: string): void {
    this.errors.push({ path, message });
  }

  done(): void {
    if (this.errors.length > 0) {
      throw badRequest(this.errors.map((e) => `${e.path}: ${e.message}`).join(' '), this.errors);
    }
  }
}

/**
 * The one rule of query parameters: an empty value (`?limit=`) is the same as leaving the
 * parameter out, so it takes its default.
 */
export function queryValue(query: URLSearchParams, name: string): string | undefined {
  const raw = query.get(name);
  return raw === null || raw === '' ? undefined : raw;
}

/** Plain decimal digits, no sign, exponent or leading zero: what `Number()` alone would let through is wider. */
const WHOLE_NUMBER = /^(0|[1-9]\d*)$/;

/** An integer query parameter within bounds; the 400 names the bound. */
export function queryInteger(
  query: URLSearchParams,
  name: string,
  { min, max, fallback }: { min: number; max: number; fallback: number },
): number {
  const raw = queryValue(query, name);
  if (raw === undefined) return fallback;
  const value = WHOLE_NUMBER.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = Number.isFinite(max) ? `from ${min} to ${max}` : `of at least ${min}`;
    throw badRequest(`${name} must be a whole number ${range}, written in plain digits; got "${raw}".`, [
      { path: `query.${name}`, message: `Must be a whole number ${range}.` },
    ]);
  }
  return value;
}
