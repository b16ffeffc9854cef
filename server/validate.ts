import type { FieldError } from 'forge-embed/client';
import { InvalidInputError } from './errors.js';

/**
 * Checks of input whose rules come from data, not from a fixed shape: the parameters an
 * integration of the catalog asks for, the variables a workflow's block defines, the host's
 * settings. Fixed shapes are the routes' schemas (server/schemas.ts). Failures are domain
 * errors, which the HTTP layer answers as 400 problem documents.
 */

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The body must be a JSON object; `example` shows the caller what one looks like. */
export function bodyObject(body: unknown, example: string): Record<string, unknown> {
  if (body === undefined) throw new InvalidInputError(`A JSON body is required, for example ${example}.`);
  if (!isPlainObject(body)) throw new InvalidInputError(`The body must be a JSON object, for example ${example}.`);
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
      throw new InvalidInputError(this.errors.map((e) => `${e.path}: ${e.message}`).join(' '), this.errors);
    }
  }
}
