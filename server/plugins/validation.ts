import { Ajv, type ValidateFunction } from 'ajv';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { SHARED_SCHEMAS } from '../schemas.js';

/**
 * How requests are validated and answers serialized, for every route: the shared schemas are
 * added at the root so that each route's `$ref`s resolve, whatever plugin registers it.
 */
async function validation(app: FastifyInstance): Promise<void> {
  // Bodies are never coerced (a number sent for a name is an error); paths and queries are text
  // that may stand for numbers. Each validator reports every error, not only the first.
  const bodyValidator = new Ajv({ allErrors: true, verbose: true, coerceTypes: false, useDefaults: true });
  const textValidator = new Ajv({ allErrors: true, verbose: true, coerceTypes: true, useDefaults: true });
  for (const ajv of [bodyValidator, textValidator]) {
    ajv.addKeyword('example');
    ajv.addFormat('date-time', true);
    for (const schema of SHARED_SCHEMAS) ajv.addSchema(schema);
  }
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const validate = (httpPart === 'body' ? bodyValidator : textValidator).compile(schema);
    return httpPart === 'querystring' ? plainWholeNumbers(schema, validate) : validate;
  });
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  // Answers are serialized with JSON.stringify, not compiled from the response schemas: with
  // this service's schemas (open `parameters` objects, unions of value types) the compiled
  // serializer halved GET /workflow's throughput. The response schemas still describe every
  // answer in the OpenAPI document, and the test suites check each answer they see against it.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
}

/** Plain decimal digits, no sign, exponent or leading zero: what coercion alone would let through is wider. */
const WHOLE_NUMBER = /^(0|[1-9]\d*)$/;

/**
 * The one rule of whole-number query parameters: plain digits only. The validator's coercion
 * would read `1e1`, `+5` or `010` as numbers; they are refused like any other wrong value, with
 * the same field error. (An empty value never gets here: the query parser drops it, so the
 * parameter takes its default.)
 */
function plainWholeNumbers(schema: unknown, validate: ValidateFunction): ValidateFunction {
  const properties = ((schema as { properties?: Record<string, { type?: string }> }).properties ?? {}) as Record<
    string,
    { type?: string }
  >;
  const integers = Object.keys(properties).filter((key) => properties[key]!.type === 'integer');
  if (integers.length === 0) return validate;
  const check = ((query: Record<string, unknown>) => {
    const wrong = integers.filter((key) => typeof query[key] === 'string' && !WHOLE_NUMBER.test(query[key]));
    if (wrong.length === 0) {
      const valid = validate(query);
      check.errors = validate.errors;
      return valid;
    }
    check.errors = wrong.map((key) => ({
      keyword: 'type',
      instancePath: `/${key}`,
      schemaPath: `#/properties/${key}/type`,
      params: { type: 'integer' },
      message: 'must be integer',
      data: query[key],
      parentSchema: properties[key],
    }));
    return false;
  }) as ValidateFunction;
  return check;
}

export default fp(validation, { name: 'forge-validation', fastify: '5.x' });
