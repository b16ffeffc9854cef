import type { VariableValues } from '../../src/api/types.js';
import type { ServiceDeps } from '../app.js';
import type { Principal } from '../auth.js';
import { type CatalogWorkflow, currentValue, needsCredential } from '../catalog/catalog.js';
import { badRequest, conflict, HttpProblem, notFound } from '../http.js';
import type { Router } from '../router.js';
import { type ChildRow, uniqueViolation } from '../store/store.js';
import { bodyObject, FieldChecker, isPlainObject, queryInteger, queryValue } from '../validate.js';
import { childView, parentOf, parentView, webhookUrl } from '../views.js';

const MAX_TEXT_VALUE = 10_000;

/**
 * Checks the values for one variable block against the catalog: names must be defined there,
 * values strings or numbers, and a numeric text for a variable whose default is a number
 * becomes a number.
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
  const out: Array<[string, string | number]> = [];
  for (const variable of defined) {
    // Own properties only: a variable may be called "constructor" or "__proto__".
    if (!Object.hasOwn(values, variable.name)) continue;
    const value = values[variable.name];
    const at = `${path}.${variable.name}`;
    if (typeof value === 'number' && Number.isFinite(value)) {
      out.push([variable.name, value]);
    } else if (typeof value !== 'string') {
      fields.add(at, `${variable.name} must be a string or a number.`);
    } else if (value.length > MAX_TEXT_VALUE) {
      fields.add(at, `${variable.name} must be at most ${MAX_TEXT_VALUE} characters.`);
    } else {
      // The interface declares strings; a numeric variable keeps a number when the text is one.
      out.push([variable.name, typeof variable.value === 'number' ? numberOrText(value) : value]);
    }
  }
  // fromEntries makes own properties, also of a variable named "__proto__".
  return Object.fromEntries(out);
}

/** A decimal number as people type one; `Number()` alone would also take "0x10" or "". */
const DECIMAL = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

function numberOrText(text: string): string | number {
  return DECIMAL.test(text) && Number.isFinite(Number(text)) ? Number(text) : text;
}

export function registerWorkflows(router: Router, { store, catalog }: ServiceDeps): void {
  /**
   * The child workflow a caller names. Another user's child answers exactly as a missing one,
   * so a token never learns that someone else's workflow exists.
   */
  const childFor = (workflowId: string, principal: Principal): { child: ChildRow; parent: CatalogWorkflow } => {
    const child = store.getChild(workflowId);
    if (child && (principal.kind === 'apiKey' || child.userId === principal.userId)) {
      return { child, parent: parentOf(child, (id) => catalog.get(id)) };
    }
    if (!child && catalog.get(workflowId)) {
      throw badRequest(
        `${workflowId} is a parent workflow id; this operation needs a child workflow id (the _id of an entry in GET /user/:userId workflows).`,
        [{ path: 'params.workflowId', message: 'Must be a child workflow id, not a parent workflow id.' }],
      );
    }
    throw notFound(
      `No workflow ${workflowId}. Child workflow ids are the _id of entries in GET /user/:userId workflows.`,
    );
  };

  router.add('GET', '/workflow', 'any', ({ query, base }) => {
    const integration = query.get('integration') ?? undefined;
    return { body: { data: catalog.list(integration || undefined).map((w) => parentView(w, base)) } };
  });

  router.add('GET', '/workflow/:workflowId', 'any', ({ params, principal, base }) => {
    const { child, parent } = childFor(params.workflowId!, principal);
    return { body: childView(child, parent, base, { withWebhookUrl: principal.kind === 'apiKey' }) };
  });

  // A leaked webhook URL is replaced by a new one; the old one stops working at once.
  router.add('POST', '/workflow/:workflowId/rotateWebhook', 'apiKey', ({ params, principal, base }) => {
    const { child, parent } = childFor(params.workflowId!, principal);
    if (!parent.blocks.some((b) => b.type === 'webhook')) {
      throw badRequest(`Workflow ${child.id} starts on a schedule; it has no webhook URL to rotate.`);
    }
    return { body: { webhookUrl: webhookUrl(store.rotateWebhookToken(child.id), base) } };
  });

  router.add('DELETE', '/workflow/:workflowId', 'any', ({ params, principal }) => {
    const { child } = childFor(params.workflowId!, principal);
    store.deleteChild(child.id);
    return { body: { success: true } };
  });

  router.add('POST', '/workflow/:workflowId/install', 'user', async ({ params, principal, body }) => {
    const userId = (principal as { userId: string }).userId;
    const parent = catalog.active(params.workflowId!);
    const existing = store.findChild(userId, parent.workflowId);
    if (existing) {
      throw conflict(
        `This user already has workflow ${parent.workflowId} installed as ${existing.id}; edit that one.`,
        {
          workflowId: existing.id,
        },
      );
    }
    const raw = (await body()) ?? {};
    const request = bodyObject(raw, '{"variables": {"<blockId>": {"<name>": "value"}}}');
    const fields = new FieldChecker(request);
    fields.onlyKnown(['variables']);
    const variables: Record<string, VariableValues> = {};
    if (request.variables !== undefined) {
      if (!isPlainObject(request.variables)) fields.add('body.variables', 'Must be an object of block id → values.');
      else {
        for (const [blockId, values] of Object.entries(request.variables)) {
          variables[blockId] = checkBlockValues(parent, blockId, values, `body.variables.${blockId}`, fields);
        }
      }
    }
    fields.done();
    const connected = new Set(store.listCredentials(userId).map((c) => c.integration));
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
    let child: ChildRow;
    try {
      child = store.createChild(userId, parent.workflowId, variables);
    } catch (error) {
      // Two installs at once (a double click): the second finds the first's row.
      if (uniqueViolation(error) === null) throw error;
      const winner = store.findChild(userId, parent.workflowId)!;
      throw conflict(`This workflow is already installed as ${winner.id}.`, { workflowId: winner.id });
    }
    return { status: 201, body: { workflowId: child.id, active: true } };
  });

  for (const [action, active] of [
    ['activate', true],
    ['deactivate', false],
  ] as const) {
    router.add('PUT', `/workflow/:workflowId/${action}`, 'any', ({ params, principal }) => {
      const { child } = childFor(params.workflowId!, principal);
      store.setChildActive(child.id, active);
      return { body: { activated: active } };
    });
  }

  router.add('PATCH', '/workflow/:workflowId/variables/:blockId', 'any', async ({ params, principal, body }) => {
    const { child, parent } = childFor(params.workflowId!, principal);
    const blockId = params.blockId!;
    const block = parent.blocks.find((b) => b.id === blockId && b.type === 'variables');
    if (!block) {
      throw notFound(
        `No variable block ${blockId} in this workflow. Variable block ids are the id of blocks of type "variables" in GET /workflow.`,
      );
    }
    const values = bodyObject(await body(), '{"<variable name>": "value"}');
    if (Object.keys(values).length === 0) {
      throw badRequest(
        `Name at least one variable to set; this block defines ${block.parameters.variables?.map((v) => v.name).join(', ')}.`,
      );
    }
    const fields = new FieldChecker(values);
    const checked = checkBlockValues(parent, blockId, values, 'body', fields);
    fields.done();
    // Read, merge and write in one transaction, so concurrent saves of different blocks both stay.
    const merged = store.transaction(() => {
      const current = store.getChild(child.id)!.variables;
      const next = { ...current, [blockId]: { ...current[blockId], ...checked } };
      store.setChildVariables(child.id, next);
      return next[blockId]!;
    });
    return {
      body: {
        blockId,
        variables: (block.parameters.variables ?? []).map((v) => ({
          uuid: v.uuid,
          name: v.name,
          value: currentValue(v, merged),
        })),
      },
    };
  });

  router.add('GET', '/workflow/:workflowId/logs', 'any', ({ params, principal, query }) => {
    const { child } = childFor(params.workflowId!, principal);
    const page = queryInteger(query, 'page', { min: 1, max: Number.POSITIVE_INFINITY, fallback: 1 });
    const limit = queryInteger(query, 'limit', { min: 1, max: 30, fallback: 10 });
    const order = queryValue(query, 'order') ?? 'desc';
    if (order !== 'asc' && order !== 'desc') {
      throw badRequest(`order must be "asc" or "desc"; got "${order}".`, [
        { path: 'query.order', message: 'Must be "asc" or "desc".' },
      ]);
    }
    // A page past any row there could be is empty; SQLite's OFFSET refuses what is no 64-bit integer.
    const beyondEnd = !Number.isSafeInteger((page - 1) * limit);
    return { body: { data: beyondEnd ? [] : store.listExecutions(child.id, page, limit, order) } };
  });

  router.add('GET', '/workflow/:workflowId/errors', 'any', ({ params, principal }) => {
    const { child } = childFor(params.workflowId!, principal);
    return { body: { errors: store.listErrors(child.id) } };
  });
}
