/**
 * Checks answers against the service's own OpenAPI document, so the document and the service
 * cannot drift: every answer the suites' shared request helper sees must have a status the
 * operation documents, and a JSON body that validates against the documented schema.
 */
import assert from 'node:assert/strict';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

interface OpenApiDocument {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>
  >;
  components: object;
}

interface Operation {
  method: string;
  pattern: RegExp;
  template: string;
  responses: Record<string, { content?: Record<string, { schema: object }> }>;
}

export class OpenApiCheck {
  private readonly operations: Operation[];
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<object, ValidateFunction>();
  /** How many answers were checked against a schema, for the suites to assert they were. */
  checked = 0;

  constructor(private readonly document: OpenApiDocument) {
    this.ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    this.operations = Object.entries(document.paths).flatMap(([template, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({
        method: method.toUpperCase(),
        template,
        // `{name}` matches one path segment, as the service's router does.
        pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}$`),
        responses: operation.responses,
      })),
    );
  }

  static async load(serviceUrl: string): Promise<OpenApiCheck> {
    const response = await fetch(`${serviceUrl}/forge/2021-12/openapi.json`);
    assert.equal(response.status, 200, 'the service serves its OpenAPI document');
    return new OpenApiCheck((await response.json()) as OpenApiDocument);
  }

  /** Fails when the answer is not what the document says `method url` answers. */
  verify(method: string, url: string, status: number, contentType: string, body: unknown): void {
    if (method === 'OPTIONS' || method === 'HEAD') return;
    const { pathname } = new URL(url);
    const operation = this.operations.find((o) => o.method === method && o.pattern.test(pathname));
    // Unknown paths and methods (404, 405) are no operation of the document.
    if (!operation) return;
    const where = `${method} ${operation.template} → ${status}`;
    const response = operation.responses[String(status)] ?? operation.responses[`${String(status)[0]}XX`];
    assert.ok(response, `${where} is not in the OpenAPI document`);
    const mediaType = contentType.split(';')[0]!.trim();
    if (!response.content) return;
    const content = response.content[mediaType];
    assert.ok(content, `${where}: ${mediaType} is not documented (${Object.keys(response.content).join(', ')})`);
    if (!/json$/.test(mediaType)) return;
    const validate = this.validator(content.schema);
    assert.ok(
      validate(body),
      `${where} does not match the OpenAPI document: ${this.ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`,
    );
    this.checked++;
  }

  private validator(schema: object): ValidateFunction {
    let validate = this.compiled.get(schema);
    if (!validate) {
      // The document's components travel with each schema, so its `#/components/...` refs resolve.
      validate = this.ajv.compile({ ...schema, components: this.document.components });
      this.compiled.set(schema, validate);
    }
    return validate;
  }
}
