import { type Static, type TSchema, Type } from '@sinclair/typebox';

/**
 * The shapes of the service interface, once: every route's request and response schemas are
 * made of these. Fastify validates requests and serializes responses with them, and the OpenAPI
 * document (GET /forge/2021-12/openapi.json, docs/openapi.json) is generated from them, so the
 * description and the service cannot drift. The TypeScript side of the same shapes is
 * `forge-embed/client` (src/api/types.ts), which the elements and the client use; the compiler
 * holds the two equal (server/wire-shapes.ts).
 */

/** A shared schema: registered once with `app.addSchema`, referred to by `$ref` everywhere else. */
const shared = <T extends TSchema>(id: string, schema: T) => ({ ...schema, $id: id }) as T & { $id: string };
/** A `$ref` to a shared schema: only the reference is written, but it has the schema's type. */
export const ref = <T extends TSchema & { $id: string }>(schema: T) =>
  Type.Unsafe<Static<T>>({ $ref: `${schema.$id}#` });

const Id = (description: string) => Type.String({ description });
const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC, millisecond precision.' });

export const FieldErrorSchema = shared(
  'FieldError',
  Type.Object({
    path: Type.String({ description: 'Where the problem is, e.g. `body.email` or `query.limit`.' }),
    message: Type.String(),
  }),
);

export const ProblemSchema = shared(
  'Problem',
  Type.Object(
    {
      type: Type.String({ description: 'A URL naming the kind of problem.' }),
      title: Type.String(),
      status: Type.Integer(),
      detail: Type.String({ description: 'What happened and what to change.' }),
      errors: Type.Optional(Type.Array(ref(FieldErrorSchema))),
      workflowId: Type.Optional(Type.String({ description: 'On a 409 of install: the child workflow that exists.' })),
    },
    { description: 'An RFC 9457 problem document (`application/problem+json`).' },
  ),
);

const RequiredParameter = Type.Object({ name: Type.String(), displayName: Type.String(), description: Type.String() });

export const IntegrationSchema = shared(
  'Integration',
  Type.Object({
    name: Type.String({ description: 'The value of the `integration` filter.' }),
    displayName: Type.String(),
    icon: Type.String({ description: 'URL of an image.' }),
    type: Type.String({ description: 'Authentication kind, e.g. `oauth2` or `apiKey`.' }),
    requiredParameters: Type.Optional(Type.Array(RequiredParameter)),
  }),
);

const VariableValue = Type.Union([Type.String(), Type.Number(), Type.Boolean()], {
  description: 'A string or a number; a boolean for a variable of type boolean.',
});

/** A variable as the elements read it: the seed's uuid, name and value, and the extensions of issue 26. */
const VariableSchema = Type.Object({
  uuid: Type.String(),
  name: Type.String(),
  value: VariableValue,
  description: Type.Optional(Type.String()),
  displayName: Type.Optional(Type.String({ description: 'The field’s label.' })),
  type: Type.Optional(
    Type.Union(
      [
        Type.Literal('string'),
        Type.Literal('number'),
        Type.Literal('boolean'),
        Type.Literal('select'),
        Type.Literal('text'),
        Type.Literal('email'),
        Type.Literal('url'),
      ],
      { description: 'What the value is (docs/api.md, "Variables").' },
    ),
  ),
  required: Type.Optional(Type.Boolean()),
  pattern: Type.Optional(Type.String({ description: 'A regular expression (Unicode mode) the text must match.' })),
  patternMessage: Type.Optional(Type.String()),
  min: Type.Optional(Type.Number()),
  max: Type.Optional(Type.Number()),
  options: Type.Optional(
    Type.Array(Type.Object({ value: Type.Union([Type.String(), Type.Number()]), label: Type.String() }), {
      description: 'A select’s fixed choices.',
    }),
  ),
  source: Type.Optional(
    Type.Object(
      { integration: Type.String() },
      { description: 'Choices come from this integration’s app: GET /workflow/:workflowId/options.' },
    ),
  ),
});

export const BlockSchema = shared(
  'Block',
  Type.Object({
    name: Type.String(),
    id: Type.String({ description: 'uuid4; the same in the parent and its children.' }),
    type: Type.String(),
    parameters: Type.Object(
      {
        variables: Type.Optional(Type.Array(VariableSchema)),
      },
      { additionalProperties: true, description: 'Depends on the block type.' },
    ),
  }),
);

export const ParentWorkflowSchema = shared(
  'ParentWorkflow',
  Type.Object({
    workflowId: Type.String(),
    name: Type.String(),
    description: Type.Optional(Type.String()),
    integrations: Type.Array(ref(IntegrationSchema)),
    blocks: Type.Array(ref(BlockSchema)),
  }),
);

export const WorkflowSummariesSchema = Type.Object({
  workflows: Type.Array(
    Type.Object({
      workflowId: Type.String(),
      name: Type.String(),
      description: Type.Optional(Type.String()),
      integrations: Type.Array(Type.String(), { description: 'Names of entries in `integrations`.' }),
      blocks: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })),
    }),
  ),
  integrations: Type.Array(
    Type.Object({
      ...IntegrationSchema.properties,
      description: Type.Optional(Type.String({ description: 'One line on what the app is.' })),
      category: Type.Optional(Type.String({ description: 'The app’s kind, e.g. `Chat` or `CRM`.' })),
    }),
    { description: 'Each integration the workflows use, once: as in GET /workflow, with what the catalog adds.' },
  ),
});

export const ChildWorkflowSchema = shared(
  'ChildWorkflow',
  Type.Object({
    _id: Type.String(),
    parentId: Type.String(),
    userId: Type.String(),
    name: Type.String(),
    description: Type.Optional(Type.String()),
    active: Type.Boolean(),
    integrations: Type.Array(ref(IntegrationSchema)),
    blocks: Type.Array(ref(BlockSchema), { description: 'Variable blocks carry this child’s current values.' }),
    webhookUrl: Type.Optional(
      Type.String({ description: 'Only with the API key, for workflows that start on a webhook.' }),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
);

const ChildWorkflowSummary = Type.Object({
  _id: Type.String(),
  parentId: Type.String(),
  name: Type.String(),
  active: Type.Boolean(),
  blocks: Type.Array(Type.Object({ icon: Type.String(), displayName: Type.String(), name: Type.String() })),
});

export const UserSchema = Type.Object({ _id: Type.String(), email: Type.String(), fullName: Type.String() });
export const UserWithWorkflowsSchema = Type.Object({
  _id: Type.String(),
  email: Type.String(),
  fullName: Type.String(),
  workflows: Type.Array(ChildWorkflowSummary),
});

const BlockResult = Type.Object({
  blockId: Type.String(),
  startedAt: Timestamp,
  stoppedAt: Timestamp,
  data: Type.Array(
    Type.Array(Type.Object({ json: Type.Object({}, { additionalProperties: true }), id: Type.String() })),
  ),
});

const ErrorKindSchema = Type.Unsafe<'connection' | 'settings' | 'app' | 'internal'>({
  type: 'string',
  enum: ['connection', 'settings', 'app', 'internal'],
  description:
    'Extension: connection (the app refused the user’s credential: reconnect), settings (a setting is missing or invalid), app (another failure of the app’s API), internal (anything else).',
});

export const ExecutionLogEntrySchema = Type.Object({
  executionId: Type.String(),
  startedAt: Timestamp,
  stoppedAt: Timestamp,
  finished: Type.Boolean(),
  results: Type.Array(BlockResult),
});

export const ErrorLogEntrySchema = Type.Object({
  _id: Type.String(),
  workflowId: Type.String(),
  executionId: Type.String(),
  blockId: Type.String(),
  blockType: Type.String(),
  error: Type.String(),
  kind: ErrorKindSchema,
  createdAt: Timestamp,
  updatedAt: Timestamp,
  __v: Type.Number(),
});

export const WorkflowHealthSchema = Type.Object({
  workflowId: Type.String({ description: 'The child workflow.' }),
  parentId: Type.String(),
  active: Type.Boolean(),
  lastRun: Type.Union(
    [
      Type.Object({
        executionId: Type.String(),
        startedAt: Timestamp,
        stoppedAt: Timestamp,
        finished: Type.Boolean({ description: 'False when the run failed.' }),
      }),
      Type.Null(),
    ],
    { description: 'The latest execution; null when the workflow never ran.' },
  ),
  failedLast24h: Type.Integer({ minimum: 0, description: 'Executions that failed in the last 24 hours.' }),
  failure: Type.Union(
    [
      Type.Object({
        kind: ErrorKindSchema,
        error: Type.String({ description: 'The error log entry’s message.' }),
        blockId: Type.String(),
        integration: Type.Union([Type.String(), Type.Null()], {
          description: 'The integration of the block that failed, when it has one.',
        }),
        createdAt: Timestamp,
        reconnectedAt: Type.Optional(
          Type.String({
            format: 'date-time',
            description:
              'Extension, on a `connection` failure only: when the user connected the integration again after it. There is nothing to reconnect now; the next run tells.',
          }),
        ),
      }),
      Type.Null(),
    ],
    { description: 'Why the latest execution failed; null when it did not fail or there is none.' },
  ),
  nextRunAt: Type.Union([Timestamp, Type.Null()], {
    description: 'When a switched-on workflow that runs on a schedule is next due.',
  }),
});

export const ConnectedIntegrationSchema = Type.Object({ integration: Type.String(), connectedAt: Timestamp });

/** A connection as GET /credentials and GET /setup show it (extensions: `status`, `account`); never its secret. */
export const UserConnectionSchema = Type.Object({
  integration: Type.String(),
  connectedAt: Timestamp,
  status: Type.Union([Type.Literal('connected'), Type.Literal('broken')], {
    description:
      'Extension: `broken` once the app refused the grant (revoked or expired); connecting again clears it at once.',
  }),
  account: Type.Optional(
    Type.String({ description: 'Extension: a display label the app gave (a workspace, an e-mail); never a secret.' }),
  ),
});

/** What DELETE /credentials/:integration did. */
export const DisconnectedSchema = Type.Object({
  integration: Type.String(),
  switchedOff: Type.Array(Type.String(), {
    description: 'The user’s child workflows that used the integration and were switched on: now switched off.',
  }),
  revocation: Type.Union([Type.Literal('revoked'), Type.Literal('not-supported'), Type.Literal('failed')], {
    description:
      '`revoked`: the app confirmed it revoked the grant. `not-supported`: the app has no revocation endpoint (or the connection is not OAuth). `failed`: the app could not be reached or refused; the service deleted its credential all the same, so the access may be removed in the app’s own settings.',
  }),
});

export const SetupSchema = Type.Object({
  workflows: Type.Array(ref(ParentWorkflowSchema)),
  installed: Type.Array(ref(ChildWorkflowSchema)),
  credentials: Type.Array(UserConnectionSchema),
});

const Backlog = Type.Object({
  pending: Type.Integer({
    description: 'Entries waiting for this channel: due, backing off after a failure, or being attempted.',
  }),
  deadLetters: Type.Integer({
    description:
      'Entries whose last allowed attempt failed: GET /deadLetters lists them, POST /deadLetters/resend sends them again.',
  }),
  lastError: Type.Union([Type.String(), Type.Null()]),
});
const NullableString = Type.Union([Type.String(), Type.Null()]);

export const HostSettingsSchema = Type.Object({
  errorWebhookUrl: NullableString,
  errorWebhookSecret: Type.String({
    description:
      'Signs each error delivery (the Forge-Signature header), so the host can verify it came from the service.',
  }),
  eventBus: Type.Object({
    enabled: Type.Boolean(),
    busName: NullableString,
    region: NullableString,
    endpoint: NullableString,
    hasAccessKeys: Type.Boolean(),
  }),
  deliveries: Type.Object({ webhook: Backlog, eventBus: Backlog }),
});

const ChannelSchema = Type.Unsafe<'webhook' | 'eventBus'>({
  type: 'string',
  enum: ['webhook', 'eventBus'],
  description: 'Must be "webhook" or "eventBus".',
});

export const DeadLetterSchema = Type.Object({
  channel: ChannelSchema,
  attempts: Type.Integer({ description: 'Attempts made before it was given up on.' }),
  lastError: Type.Union([Type.String(), Type.Null()], { description: 'Why the last attempt failed.' }),
  deadAt: Type.String({ format: 'date-time', description: 'When its last allowed attempt failed.' }),
  entry: ErrorLogEntrySchema,
});

export const DeadLettersQuery = Type.Object({
  channel: Type.Optional(ChannelSchema),
  page: Type.Integer({ minimum: 1, default: 1, description: '1-based.' }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
});

export const ResendBody = Type.Object(
  {
    errorIds: Type.Optional(
      Type.Array(
        Type.String({ pattern: '^[0-9a-f]{24}$', description: 'Must be an error log entry’s _id: 24 hex digits.' }),
        { minItems: 1, maxItems: 100, uniqueItems: true },
      ),
    ),
    channel: Type.Optional(ChannelSchema),
  },
  {
    additionalProperties: false,
    examples: [{ errorIds: ['6650a1b2c3d4e5f6a7b8c9d0'], channel: 'webhook' }, {}],
  },
);

/** A text field of `PUT /settings`: `null` clears it; the description is the message a refused value gets. */
const NullableText = (description: string, rules: { pattern?: string; maxLength?: number; minLength?: number } = {}) =>
  Type.Union([Type.String({ maxLength: 2000, ...rules, description }), Type.Null()], { description });

const HTTP_URL = NullableText('Must be an http:// or https:// URL, or null (or "") to remove it.', {
  pattern: '^$|^[Hh][Tt][Tt][Pp][Ss]?://',
});

/**
 * The whole shape of a `PUT /settings` body, the one place it is checked: fields left out keep
 * their value, `null` clears one. What depends on more than one field or on the network (the
 * address rule, keys given together, what switching the bus on needs) is the domain's
 * (engine/host-settings.ts).
 */
export const HostSettingsUpdateSchema = Type.Object(
  {
    errorWebhookUrl: Type.Optional(HTTP_URL),
    eventBus: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean({ description: 'Must be true or false.' })),
          busName: Type.Optional(
            NullableText('Must be an event bus name (letters, digits, . - _ /) or ARN, or null.', {
              pattern: '^([\\w.\\-/]{1,256}|arn:[\\w.\\-:/]{1,1600})$',
            }),
          ),
          region: Type.Optional(
            NullableText('Must be a region such as eu-west-1, or null for us-east-1.', {
              pattern: '^[a-z]{2}(-[a-z]+)+-\\d+$',
            }),
          ),
          endpoint: Type.Optional(HTTP_URL),
          accessKeyId: Type.Optional(
            NullableText('Stored sealed; never read back. Give it with secretAccessKey.', {
              minLength: 1,
              maxLength: 128,
            }),
          ),
          secretAccessKey: Type.Optional(
            NullableText('Stored sealed; never read back. Give it with accessKeyId.', { minLength: 1, maxLength: 256 }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  {
    additionalProperties: false,
    description: 'Fields left out keep their value; null clears one.',
    examples: [
      {
        errorWebhookUrl: 'https://example.com/forge-errors',
        eventBus: { enabled: true, busName: 'default', region: 'eu-west-1', accessKeyId: '…', secretAccessKey: '…' },
      },
    ],
  },
);

/**
 * The 429 of an operation with a rate limit (see --rate-limits): a problem document, with
 * `Retry-After` saying in how many seconds to try again.
 */
export const RateLimitedResponse = (what: string) => ({
  description: `Too many ${what} in the current window: a problem document; the Retry-After header says in how many seconds to try again.`,
  headers: {
    'Retry-After': { type: 'integer', minimum: 1, description: 'Seconds until the limit opens again.' },
  },
  content: { 'application/problem+json': { schema: ref(ProblemSchema) } },
});

/** Every shared schema, for `app.addSchema` (and the OpenAPI document's components). */
export const SHARED_SCHEMAS = [
  FieldErrorSchema,
  ProblemSchema,
  IntegrationSchema,
  BlockSchema,
  ParentWorkflowSchema,
  ChildWorkflowSchema,
];

// Path and query parts ---------------------------------------------------------------------

export const WorkflowIdParams = Type.Object({
  workflowId: Id('A child workflow id (the `_id` of an entry in GET /user/:userId workflows).'),
});
export const UserIdParams = Type.Object({ userId: Id('A user id (from POST /user or GET /user).') });
export const IntegrationParams = Type.Object({ integration: Id('An integration name, e.g. `slack`.') });

/**
 * Strings the elements' users type are text, not whitespace (the handler trims them), and hold
 * no NUL character, which PostgreSQL cannot store in text.
 */
const Text = (max: number, description?: string) =>
  Type.String({
    maxLength: max,
    pattern: '^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$',
    ...(description ? { description } : {}),
  });
const Email = Type.String({
  maxLength: 254,
  pattern: '^\\s*[^\\s@\\u0000]+@[^\\s@\\u0000]+\\.[^\\s@\\u0000]+\\s*$',
  description: 'Must be an e-mail address such as ada@example.com.',
});

export const CreateUserBody = Type.Object(
  { name: Text(200, 'Must not be empty or hold a NUL character.'), email: Email },
  { additionalProperties: false, examples: [{ name: 'Ada Lovelace', email: 'ada@example.com' }] },
);
export const UpdateUserBody = Type.Object(
  { email: Email, fullName: Text(200, 'Must not be empty or hold a NUL character.') },
  { additionalProperties: false, examples: [{ email: 'ada@example.com', fullName: 'Ada Lovelace' }] },
);

/** Install's answer: the new child workflow, switched on. */
export const InstallResponseSchema = Type.Object({ workflowId: Type.String(), active: Type.Literal(true) });

/** One page of a select variable's choices, read from the user's own app (issue 26). */
export const OptionsPageSchema = Type.Object({
  options: Type.Array(Type.Object({ value: Type.Union([Type.String(), Type.Number()]), label: Type.String() }), {
    description: 'The choices: `value` is what the variable stores, `label` what the user reads.',
  }),
  next: Type.Optional(Type.String({ description: 'Give it as `cursor` for the next page; absent on the last.' })),
});

/** The values of one variable block after a change. */
export const SetVariablesResponseSchema = Type.Object({
  blockId: Type.String(),
  variables: Type.Array(
    Type.Object({
      uuid: Type.String(),
      name: Type.String(),
      value: VariableValue,
    }),
  ),
});

/** Where the OAuth popup starts. */
export const OAuthStartSchema = Type.Object({ url: Type.String(), expiresAt: Type.String({ format: 'date-time' }) });

/** The seed's `{message}` and `{success}` answers. */
export const MessageSchema = Type.Object({ message: Type.String() });
export const SuccessSchema = Type.Object({ success: Type.Boolean() });
