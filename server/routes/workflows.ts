import { Type } from '@sinclair/typebox';
import type { VariableValue, VariableValues } from 'forge-embed/client';
import type { Principal } from '../auth.js';
import { CatalogAnswers } from '../catalog/answers.js';
import { type CatalogWorkflow, needsCredential } from '../catalog/catalog.js';
import { OptionsFailure } from '../engine/options.js';
import { badRequest, conflict, HttpProblem, notFound, sendJsonText } from '../http.js';
import { KeptAnswers } from '../kept-answers.js';
import {
  ChildWorkflowSchema,
  ErrorLogEntrySchema,
  ExecutionLogEntrySchema,
  InstallResponseSchema,
  OptionsPageSchema,
  ParentWorkflowSchema,
  ref,
  SetVariablesResponseSchema,
  SuccessSchema,
  WorkflowIdParams,
  WorkflowSummariesSchema,
} from '../schemas.js';
import { checkValue, describeProblem, isEmpty } from '../shared/variable-rules.js';
import { type ChildOwner, type ChildRow, uniqueViolation } from '../store/store.js';
import { FieldChecker, isPlainObject } from '../validate.js';
import { blockValuesView, childView, executionLogBody, parentOf, webhookUrl } from '../views.js';
import { baseOf, type RoutePlugin } from './context.js';

/**
 * Checks the values for one variable block against the catalog: names must be defined there,
 * and each value must keep its variable's rules (server/shared/variable-rules.ts, the same the
 * modal checks with): a numeric text for a number becomes the number, `"true"`/`"false"` for a
 * boolean the boolean.
 */
function checkBlockValues(
  parent: CatalogWorkflow,
  blockId: string,
  values: unknown,
  path: string,
  fields: FieldChecker,
): VariableValues {
  const block = parent.blocks.find((b) => b.id === blockId && b.type === 'variables');
  if (!block) {
    fields.add(path, `No variable block ${blockId} in workflow ${parent.workflowId}.`);
    return {};
  }
  if (!isPlainObject(values)) {
    fields.add(path, 'Must be an object of variable name → value.');
    return {};
  }
  const defined = block.parameters.variables ?? [];
  const unknown = Object.keys(values).filter((name) => !defined.some((v) => v.name === name));
  if (unknown.length > 0) {
    fields.add(
      path,
      `Unknown variable${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; this block defines ${defined.map((v) => v.name).join(', ')}.`,
    );
  }
  const out: Array<[string, VariableValue]> = [];
  for (const variable of defined) {
    // Own properties only: a variable may be called "constructor" or "__proto__".
    if (!Object.hasOwn(values, variable.name)) continue;
    const checked = checkValue(variable, values[variable.name]);
    if ('problem' in checked)
      fields.add(`${path}.${variable.name}`, describeProblem(checked.problem, labelOf(variable)));
    else out.push([variable.name, checked.value]);
  }
  // fromEntries makes own properties, also of a variable named "__proto__".
  return Object.fromEntries(out);
}

/** How a problem names a variable: its label, and its name when the label is another. */
const labelOf = ({ name, displayName }: { name: string; displayName?: string }) =>
  displayName && displayName !== name ? `${displayName} (${name})` : name;

/**
 * On install, a required variable left out takes the parent's default, which is often empty (a
 * spreadsheet id only the user knows): each such one is named, so no workflow is switched on
 * that fails on its first run.
 */
function checkRequiredGiven(parent: CatalogWorkflow, given: Record<string, unknown>, fields: FieldChecker) {
  for (const block of parent.blocks) {
    if (block.type !== 'variables') continue;
    const values = Object.hasOwn(given, block.id) ? given[block.id] : undefined;
    for (const variable of block.parameters.variables ?? []) {
      // A value given is checked with the others (checkBlockValues).
      if (isPlainObject(values) && Object.hasOwn(values, variable.name)) continue;
      if (variable.required && isEmpty(variable.value)) {
        fields.add(
          `body.variables.${block.id}.${variable.name}`,
          describeProblem({ rule: 'required' }, labelOf(variable)),
        );
      }
    }
  }
}

/** Which names and value types a block takes is the catalog's to say (checkBlockValues), not a fixed schema's. */
const VariablesOfBlock = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'Variable name → value (a string or a number; a boolean for a boolean variable), as the block defines them and within their rules (type, required, pattern, min/max, options; docs/api.md, "Variables"). A numeric string is stored as a number for a number variable, "true"/"false" as a boolean for a boolean one.',
});

const workflows: RoutePlugin = async (api, { store, catalog, options }) => {
  // The catalog's listings, serialized once per origin and filter (issue 29).
  const answers = new CatalogAnswers(catalog);
  // Logs pages, kept per workflow at its logs version (issue 29). A page is at most 30 runs; the
  // bench's are 15 KB, so this holds the first pages of a few hundred workflows.
  const pages = new KeptAnswers(32 * 1024 * 1024);
  /**
   * Throws unless `principal` may use `child`, the child workflow `workflowId` names (undefined:
   * none). Another user's child answers exactly as a missing one, so a token never learns that
   * someone else's workflow exists.
   */
  function mayUse(
    workflowId: string,
    principal: Principal,
    child: ChildOwner | undefined,
  ): asserts child is ChildOwner {
    if (child && (principal.kind === 'apiKey' || child.userId === principal.userId)) return;
    if (!child && catalog.get(workflowId)) {
      throw badRequest(
        `${workflowId} is a parent workflow id; this operation needs a child workflow id (the _id of an entry in GET /user/:userId workflows).`,
        [{ path: 'params.workflowId', message: 'workflowId must be a child workflow id, not a parent workflow id.' }],
      );
    }
    throw notFound(
      `No workflow ${workflowId}. Child workflow ids are the _id of entries in GET /user/:userId workflows.`,
    );
  }
  /** The child workflow a caller names, and its parent, if the caller may use it. */
  const childFor = async (
    workflowId: string,
    principal: Principal,
  ): Promise<{ child: ChildRow; parent: CatalogWorkflow }> => {
    const child = await store.children.get(workflowId);
    mayUse(workflowId, principal, child);
    return { child, parent: parentOf(child, (id) => catalog.get(id)) };
  };

  api.get(
    '/workflow',
    {
      config: { access: 'any' },
      schema: {
        summary: 'List parent workflows',
        tags: ['workflows', 'embed'],
        querystring: Type.Object({
          integration: Type.Optional(Type.String({ description: 'Only workflows that use this integration.' })),
        }),
        response: { 200: Type.Object({ data: Type.Array(ref(ParentWorkflowSchema)) }) },
      },
    },
    // Not async: the answer is sent at once, and a promise resolved with the reply would cost
    // two more turns of the microtask queue per request (issue 29).
    (request, reply) => {
      sendJsonText(reply, answers.workflowList(baseOf(request), request.query.integration));
    },
  );

  // GET /workflow's answer, cut to what <forge-workflow-list> shows: a tenth to a fifth of the
  // bytes for a long catalog, whose parsing was most of the list's render (design notes, issue 16).
  api.get(
    '/workflow-summary',
    {
      config: { access: 'user' },
      schema: {
        summary: 'The parent workflows as the workflow list shows them',
        description:
          'The workflows of GET /workflow (with the same integration filter), each with its integrations by name and its blocks by id and name; each integration they use appears once.',
        tags: ['embed'],
        querystring: Type.Object({
          integration: Type.Optional(Type.String({ description: 'Only workflows that use this integration.' })),
        }),
        response: { 200: WorkflowSummariesSchema },
      },
    },
    // Not async, as GET /workflow's.
    (request, reply) => {
      sendJsonText(reply, answers.workflowSummaries(baseOf(request), request.query.integration));
    },
  );

  api.get(
    '/workflow/:workflowId',
    {
      config: { access: 'any' },
      schema: {
        summary: 'Get a child workflow with its current values',
        description: 'The webhookUrl is in the answer only for the API key: it is the webhook’s only credential.',
        tags: ['workflows', 'embed'],
        params: WorkflowIdParams,
        response: { 200: ref(ChildWorkflowSchema) },
      },
    },
    async (request) => {
      const { child, parent } = await childFor(request.params.workflowId, request.principal);
      return childView(child, parent, baseOf(request), { withWebhookUrl: request.principal.kind === 'apiKey' });
    },
  );

  // A leaked webhook URL is replaced by a new one; the old one stops working at once.
  api.post(
    '/workflow/:workflowId/rotateWebhook',
    {
      config: { access: 'apiKey' },
      schema: {
        summary: 'Replace a child workflow’s webhook URL',
        description: 'The old URL stops working at once. Only for workflows that start on a webhook.',
        tags: ['workflows'],
        params: WorkflowIdParams,
        response: { 200: Type.Object({ webhookUrl: Type.String({ description: 'The new webhook URL.' }) }) },
      },
    },
    async (request) => {
      const { child, parent } = await childFor(request.params.workflowId, request.principal);
      if (!parent.blocks.some((b) => b.type === 'webhook')) {
        throw badRequest(`Workflow ${child.id} starts on a schedule; it has no webhook URL to rotate.`);
      }
      return { webhookUrl: webhookUrl(await store.children.rotateWebhookToken(child.id), baseOf(request)) };
    },
  );

  api.delete(
    '/workflow/:workflowId',
    {
      config: { access: 'any' },
      schema: {
        summary: 'Uninstall a child workflow',
        tags: ['workflows', 'embed'],
        params: WorkflowIdParams,
        response: { 200: SuccessSchema },
      },
    },
    async (request) => {
      const { child } = await childFor(request.params.workflowId, request.principal);
      await store.children.delete(child.id);
      return { success: true };
    },
  );

  api.post(
    '/workflow/:workflowId/install',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Install a parent workflow for the token’s user',
        tags: ['workflows', 'embed'],
        params: Type.Object({ workflowId: Type.String({ description: 'A parent workflow id (from GET /workflow).' }) }),
        body: Type.Object(
          {
            variables: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Block id → values.' })),
          },
          { additionalProperties: false, examples: [{ variables: { '<blockId>': { '<name>': 'value' } } }] },
        ),
        response: { 201: InstallResponseSchema },
      },
      // The body is optional: installing with the parent's defaults sends none.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      const { userId } = request.principal;
      const parent = catalog.active(request.params.workflowId);
      const existing = await store.children.find(userId, parent.workflowId);
      if (existing) {
        throw conflict(
          `This user already has workflow ${parent.workflowId} installed as ${existing.id}; edit that one.`,
          { workflowId: existing.id },
        );
      }
      const request_ = request.body;
      const fields = new FieldChecker(request_);
      const variables: Record<string, VariableValues> = {};
      for (const [blockId, values] of Object.entries(request_.variables ?? {})) {
        variables[blockId] = checkBlockValues(parent, blockId, values, `body.variables.${blockId}`, fields);
      }
      checkRequiredGiven(parent, request_.variables ?? {}, fields);
      fields.done();
      const connected = new Set((await store.credentials.list(userId)).map((c) => c.integration));
      const missing = parent.integrations.filter((i) => needsCredential(i) && !connected.has(i.name));
      if (missing.length > 0) {
        throw new HttpProblem(
          400,
          'integration-not-connected',
          'Integration not connected',
          `Connect ${missing.map((i) => i.displayName).join(' and ')} before enabling this workflow.`,
          missing.map((i) => ({ path: `integrations.${i.name}`, message: `${i.displayName} is not connected.` })),
        );
      }
      // Two installs at once (a double click): the second finds the first's row. That row may be
      // uninstalled before the second looks for it; then the second tries again.
      for (let attempt = 1; ; attempt++) {
        let child: ChildRow;
        try {
          child = await store.children.create(userId, parent.workflowId, variables);
        } catch (error) {
          if (uniqueViolation(error) === null) throw error;
          const winner = await store.children.find(userId, parent.workflowId);
          if (winner) throw conflict(`This workflow is already installed as ${winner.id}.`, { workflowId: winner.id });
          if (attempt < 3) continue;
          throw conflict('This workflow was installed and uninstalled at the same time. Try again.');
        }
        return reply.code(201).send({ workflowId: child.id, active: true });
      }
    },
  );

  for (const [action, active] of [
    ['activate', true],
    ['deactivate', false],
  ] as const) {
    api.put(
      `/workflow/:workflowId/${action}`,
      {
        config: { access: 'any' },
        schema: {
          summary: active ? 'Switch a child workflow on' : 'Switch a child workflow off',
          tags: ['workflows', 'embed'],
          params: WorkflowIdParams,
          response: { 200: Type.Object({ activated: Type.Boolean() }) },
        },
      },
      async (request) => {
        const { child } = await childFor(request.params.workflowId, request.principal);
        await store.children.setActive(child.id, active);
        return { activated: active };
      },
    );
  }

  api.patch(
    '/workflow/:workflowId/variables/:blockId',
    {
      config: { access: 'any' },
      schema: {
        summary: 'Set variable values of a block',
        tags: ['workflows', 'embed'],
        params: Type.Object({
          workflowId: WorkflowIdParams.properties.workflowId,
          blockId: Type.String({ description: 'The id of a block of type "variables".' }),
        }),
        body: { ...VariablesOfBlock, examples: [{ '<variable name>': 'value' }] },
        response: { 200: SetVariablesResponseSchema },
      },
    },
    async (request) => {
      const { workflowId, blockId } = request.params;
      const { child, parent } = await childFor(workflowId, request.principal);
      const block = parent.blocks.find((b) => b.id === blockId && b.type === 'variables');
      if (!block) {
        throw notFound(
          `No variable block ${blockId} in this workflow. Variable block ids are the id of blocks of type "variables" in GET /workflow.`,
        );
      }
      const values = request.body;
      if (Object.keys(values).length === 0) {
        throw badRequest(
          `Name at least one variable to set; this block defines ${block.parameters.variables?.map((v) => v.name).join(', ')}.`,
        );
      }
      const fields = new FieldChecker(values);
      const checked = checkBlockValues(parent, blockId, values, 'body', fields);
      fields.done();
      // Read, merge and write in one transaction, so concurrent saves of different blocks both stay.
      const merged = await store.transaction(async (tx) => {
        const current = (await tx.children.getForUpdate(child.id))!.variables;
        const next = { ...current, [blockId]: { ...current[blockId], ...checked } };
        await tx.children.setVariables(child.id, next);
        return next[blockId]!;
      });
      return blockValuesView(block, merged);
    },
  );

  // The choices of a select variable whose `source` is the user's own app (issue 26).
  api.get(
    '/workflow/:workflowId/options',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Choices for a select variable, read from the user’s own app',
        description:
          'Calls the app of the variable’s `source` with the token user’s credential (sent only to that app’s origin) and answers its choices, a page at a time; a page is kept 30 seconds per user. 400 `integration-not-connected` when the user has not connected the app; 409 `connection-refused` when the app refuses the credential (connect it again); 502 `app-failed` when the app fails otherwise (try again).',
        tags: ['embed'],
        params: Type.Object({
          workflowId: Type.String({
            description: 'The parent workflow id when installing, or the user’s child workflow id when editing.',
          }),
        }),
        querystring: Type.Object({
          // Required, but checked after the workflow: another user's id is a 404 whatever the query.
          blockId: Type.Optional(Type.String({ description: 'Required: the variable block.' })),
          variable: Type.Optional(
            Type.String({ description: 'Required: the name of a select variable with a `source`.' }),
          ),
          search: Type.Optional(Type.String({ maxLength: 200, description: 'Words the choices’ labels contain.' })),
          cursor: Type.Optional(Type.String({ maxLength: 2000, description: 'A page’s `next`: the page after it.' })),
        }),
        response: { 200: OptionsPageSchema },
      },
    },
    async (request) => {
      const { userId } = request.principal;
      const { blockId, variable: name, search, cursor } = request.query;
      // The user's own copy when editing; a parent on offer when installing. Another user's
      // copy is a 404, exactly as one that does not exist.
      const child = await store.children.get(request.params.workflowId);
      const parent =
        child && child.userId === userId
          ? parentOf(child, (id) => catalog.get(id))
          : child
            ? undefined
            : catalog.get(request.params.workflowId)?.active
              ? catalog.get(request.params.workflowId)
              : undefined;
      if (!parent) {
        throw notFound(
          `No workflow ${request.params.workflowId}: give a parent id from GET /workflow, or the id of your own copy.`,
        );
      }
      const fields = new FieldChecker(request.query, 'query');
      fields.string('blockId');
      fields.string('variable');
      fields.done();
      const block = parent.blocks.find((b) => b.id === blockId && b.type === 'variables');
      const variable = block?.parameters.variables?.find((v) => v.name === name);
      if (!block || !variable?.source) {
        const path = block ? 'query.variable' : 'query.blockId';
        const message = block
          ? `${name} is not a variable of this block whose choices come from an app.`
          : `No variable block ${blockId} in workflow ${parent.workflowId}.`;
        throw badRequest(message, [{ path, message }]);
      }
      const { source } = variable;
      const app = catalog.integrations.get(source.integration)?.displayName ?? source.integration;
      try {
        return await options.read({
          userId,
          key: `${parent.workflowId}\n${block.id}\n${name}`,
          source,
          appName: app,
          search: search?.trim() || undefined,
          cursor,
        });
      } catch (error) {
        if (!(error instanceof OptionsFailure)) throw error;
        const errors = [{ path: `integrations.${source.integration}`, message: error.message }];
        if (error.kind === 'not-connected') {
          throw new HttpProblem(400, 'integration-not-connected', 'Integration not connected', error.message, errors);
        }
        if (error.kind === 'refused') {
          throw new HttpProblem(409, 'connection-refused', `${app} refused the connection`, error.message, errors);
        }
        throw new HttpProblem(502, 'app-failed', `${app} failed`, `${error.message} Try again.`, errors);
      }
    },
  );

  api.get(
    '/workflow/:workflowId/logs',
    {
      config: { access: 'any' },
      schema: {
        summary: 'Read execution logs',
        tags: ['workflows', 'embed'],
        params: WorkflowIdParams,
        querystring: Type.Object({
          page: Type.Integer({ minimum: 1, default: 1, description: '1-based.' }),
          limit: Type.Integer({ minimum: 1, maximum: 30, default: 10 }),
          order: Type.Unsafe<'asc' | 'desc'>({
            type: 'string',
            enum: ['asc', 'desc'],
            default: 'desc',
            description: 'Must be "asc" or "desc".',
          }),
        }),
        response: { 200: Type.Object({ data: Type.Array(ExecutionLogEntrySchema) }) },
      },
    },
    async (request, reply) => {
      const { workflowId } = request.params;
      const { page, limit, order } = request.query;
      // A page past any row there could be is empty; SQLite's OFFSET refuses what is no 64-bit integer.
      if (!Number.isSafeInteger((page - 1) * limit)) {
        await childFor(workflowId, request.principal);
        return { data: [] };
      }
      // The child and its logs version first: the page is answered only if the caller may read
      // it, and one kept at that version is sent as it is (KeptAnswers).
      const head = await store.logs.getChildWithLogsVersion(workflowId);
      mayUse(workflowId, request.principal, head?.child);
      const key = `${page}:${limit}:${order}`;
      const kept = pages.get(workflowId, head!.logsVersion, key);
      if (kept) return sendJsonText(reply, kept);
      const read = await store.logs.getChildWithExecutions(workflowId, page, limit, order);
      // Removed since: as if it had never been there.
      if (!read) mayUse(workflowId, request.principal, undefined);
      const body = Buffer.from(executionLogBody(read!.executions));
      pages.keep(workflowId, head!.logsVersion, key, body);
      return sendJsonText(reply, body);
    },
  );

  api.get(
    '/workflow/:workflowId/errors',
    {
      config: { access: 'any' },
      schema: {
        summary: 'Read error logs',
        tags: ['workflows', 'embed'],
        params: WorkflowIdParams,
        response: { 200: Type.Object({ errors: Type.Array(ErrorLogEntrySchema) }) },
      },
    },
    async (request) => {
      const { child } = await childFor(request.params.workflowId, request.principal);
      return { errors: await store.logs.listErrors(child.id) };
    },
  );
};

export default workflows;
