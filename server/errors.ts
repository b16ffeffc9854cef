import type { FieldError } from 'forge-embed/client';

/**
 * What domain modules (catalog, engine, store) throw when a request cannot be carried out. They
 * know nothing of HTTP: the service's error handler (server/http.ts) turns each into a problem
 * document, so a domain module can also run from a CLI, a job or a test without an HTTP layer.
 */
export class DomainError extends Error {}

/** The thing a caller named does not exist (or is not theirs to see). */
export class NotFoundError extends DomainError {}

/** Input the domain refuses; `errors` names each field that is wrong. */
export class InvalidInputError extends DomainError {
  constructor(
    message: string,
    readonly errors?: FieldError[],
    /** A short name for the kind of problem, e.g. `integration-not-connected`; default `validation`. */
    readonly kind?: string,
  ) {
    super(message);
  }
}

/** The request contradicts what is stored (a duplicate, an existing copy); `extensions` say what. */
export class ConflictError extends DomainError {
  constructor(
    message: string,
    readonly extensions: Record<string, unknown> = {},
  ) {
    super(message);
  }
}
