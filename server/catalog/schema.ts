import { type Static, Type } from '@sinclair/typebox';
import { Ajv, type ErrorObject } from 'ajv';
import { VARIABLE_TYPES } from '../shared/variable-rules.js';

/**
 * The catalog file's shape, as a schema: the service validates the file with it at start and
 * refuses to start with every problem named by its path (`workflows[2].blocks[0].parameters.
 * variables[1].name: required`). Objects take more fields than these (a field added to the
 * format is an `Optional` property here); what ties the parts together (an integration named
 * by a workflow exists, ids are unique) is checked by the Catalog after the shape.
 */

const Text = Type.String({ minLength: 1, description: 'must be a non-empty string' });

export const CatalogRequiredParameterSchema = Type.Object({
  name: Type.String(),
  displayName: Type.String(),
  description: Type.String(),
});

export const CatalogIntegrationSchema = Type.Object({
  name: Text,
  displayName: Text,
  /** A URL, or a path relative to the catalog's `icons/` folder. */
  icon: Text,
  type: Text,
  requiredParameters: Type.Optional(Type.Array(CatalogRequiredParameterSchema)),
  /** One line on what the app is, shown by `<forge-integration-list>`. */
  description: Type.Optional(Text),
  /** The app's kind (`Chat`, `CRM`): `<forge-integration-list>` groups and filters by it. */
  category: Type.Optional(Text),
});

/** A dotted path into an app's JSON answer (`response_metadata.next_cursor`). */
const AnswerPath = Type.String({
  pattern: '^[^.\\s]+(\\.[^.\\s]+)*$',
  description: 'must be a dotted path such as a.b.c',
});

/**
 * Where a `select` variable's choices come from: a read of the user's own app, with the user's
 * credential (GET /workflow/:workflowId/options; docs/api.md, "Variables").
 */
export const CatalogOptionsSourceSchema = Type.Object(
  {
    /** One of the workflow's integrations: its app is called, with its credential. */
    integration: Text,
    request: Type.Object(
      {
        method: Type.Optional(
          Type.Union([Type.Literal('GET'), Type.Literal('POST')], { description: 'must be "GET" or "POST"' }),
        ),
        /** Relative to the integration's api.baseUrl, or absolute (may use {{env.X}}). */
        url: Text,
        /** Query parameters; `{{cursor}}` and `{{search}}` stand for the page asked for and the words searched. */
        query: Type.Optional(Type.Record(Type.String(), Type.String())),
      },
      { additionalProperties: false },
    ),
    /** Where the list of items is in the answer; the answer itself when absent. */
    items: Type.Optional(AnswerPath),
    /** Where an item's stored value and its label are. */
    value: AnswerPath,
    label: AnswerPath,
    /** Where the cursor of the next page is; no paging when absent. */
    next: Type.Optional(AnswerPath),
    /** `local`: the service filters a page by label; else the query parameter the app searches by. */
    search: Type.Optional(Text),
  },
  { additionalProperties: false },
);

export const CatalogVariableSchema = Type.Object({
  uuid: Type.String(),
  name: Type.String(),
  value: Type.Union([Type.String(), Type.Number(), Type.Boolean()], {
    description: 'must be a string or a number (a boolean for a boolean variable)',
  }),
  description: Type.Optional(Type.String()),
  displayName: Type.Optional(Text),
  type: Type.Optional(
    Type.Union(
      VARIABLE_TYPES.map((type) => Type.Literal(type)),
      { description: `must be one of ${VARIABLE_TYPES.join(', ')}` },
    ),
  ),
  required: Type.Optional(Type.Boolean()),
  pattern: Type.Optional(Text),
  patternMessage: Type.Optional(Text),
  min: Type.Optional(Type.Number()),
  max: Type.Optional(Type.Number()),
  options: Type.Optional(
    Type.Array(
      Type.Object(
        {
          value: Type.Union([Type.String(), Type.Number()], { description: 'must be a string or a number' }),
          label: Text,
        },
        { additionalProperties: false },
      ),
      { minItems: 1, description: 'must be a non-empty list of {value, label}' },
    ),
  ),
  source: Type.Optional(CatalogOptionsSourceSchema),
});

export const CatalogBlockSchema = Type.Object({
  id: Type.String({
    pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$',
    description: 'must be a uuid4',
  }),
  name: Type.String(),
  type: Type.String(),
  /** The integration this block talks to; its icon stands for the block. */
  integration: Type.Optional(Type.String()),
  parameters: Type.Optional(
    Type.Object({ variables: Type.Optional(Type.Array(CatalogVariableSchema)) }, { additionalProperties: true }),
  ),
});

export const CatalogWorkflowSchema = Type.Object({
  workflowId: Type.String({ pattern: '^[\\w-]{1,64}$', description: 'must be 1 to 64 letters, digits, _ or -' }),
  name: Text,
  description: Type.Optional(Type.String()),
  /** Inactive parents are not listed and cannot be installed; their children still run. */
  active: Type.Optional(Type.Boolean()),
  /** Names of entries in the file's `integrations`. */
  integrations: Type.Optional(Type.Array(Type.String())),
  blocks: Type.Optional(Type.Array(CatalogBlockSchema)),
});

export const CatalogFileSchema = Type.Object(
  {
    integrations: Type.Optional(Type.Array(CatalogIntegrationSchema)),
    workflows: Type.Optional(Type.Array(CatalogWorkflowSchema)),
  },
  { description: 'must be a JSON object with integrations and workflows' },
);

export type CatalogFile = Static<typeof CatalogFileSchema>;
export type CatalogVariable = Static<typeof CatalogVariableSchema>;
export type CatalogOptionsSource = Static<typeof CatalogOptionsSourceSchema>;

const validate = new Ajv({ allErrors: true, verbose: true }).compile<CatalogFile>(CatalogFileSchema);

/**
 * The file's content as a catalog file, or one problem per place that is wrong, each named by
 * its path in the file.
 */
export function checkCatalogFile(content: unknown): { file: CatalogFile } | { problems: string[] } {
  if (validate(content)) return { file: content };
  const errors = validate.errors ?? [];
  // A value that matches no member of a union is named once, by the union's description,
  // rather than once for each member it does not match.
  const unions = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  const problems = new Map<string, string>();
  for (const error of errors) {
    if (unions.has(error.instancePath) && error.keyword !== 'anyOf') continue;
    const [at, message] = problemOf(error);
    const path = at + whereIn(content, error.instancePath);
    // A value that breaks two rules (a type and a bound) is named once.
    if (!problems.has(path)) problems.set(path, message);
  }
  return { problems: [...problems].map(([path, message]) => `${path || 'the file'}: ${message}`) };
}

function problemOf(error: ErrorObject): [path: string, message: string] {
  const path = pathOf(error.instancePath);
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    return [path ? `${path}.${missing}` : missing, 'required'];
  }
  // A rule's description says it in words (a pattern, a bound, a union); a wrong type of a
  // field is said as ajv says it ("must be string"), except for the file itself.
  const description = (error.parentSchema as { description?: string } | undefined)?.description;
  if (description && (error.keyword !== 'type' || !path)) return [path, description];
  return [path, error.message ?? 'is not valid'];
}

/**
 * Which workflow, block and variable a place in the file belongs to, by their ids and names:
 * ` (workflow 64b1…, block "Settings", variable "channel")`, or nothing outside a workflow.
 */
export function whereIn(content: unknown, pointer: string): string {
  const [, top, w, , b, , , v] = pointer.split('/');
  if (top !== 'workflows' || w === undefined) return '';
  const named = (value: unknown, field: string) => {
    const name = (value as Record<string, unknown> | undefined)?.[field];
    return typeof name === 'string' || typeof name === 'number' ? JSON.stringify(name) : undefined;
  };
  const workflow = (content as { workflows?: unknown[] }).workflows?.[Number(w)] as
    | { blocks?: Array<{ parameters?: { variables?: unknown[] } }> }
    | undefined;
  const block = b === undefined ? undefined : workflow?.blocks?.[Number(b)];
  const variable = v === undefined ? undefined : block?.parameters?.variables?.[Number(v)];
  const names = [
    ['workflow', named(workflow, 'workflowId')],
    ['block', b === undefined ? undefined : named(block, 'name')],
    ['variable', v === undefined ? undefined : named(variable, 'name')],
  ].filter(([, name]) => name !== undefined);
  return names.length ? ` (${names.map(([kind, name]) => `${kind} ${name}`).join(', ')})` : '';
}

/** `/workflows/2/blocks/0` as `workflows[2].blocks[0]`. */
function pathOf(pointer: string): string {
  let path = '';
  for (const segment of pointer.split('/').slice(1)) {
    const key = segment.replace(/~1/g, '/').replace(/~0/g, '~');
    path += /^\d+$/.test(key) ? `[${key}]` : path ? `.${key}` : key;
  }
  return path;
}
