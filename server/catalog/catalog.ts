import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type {
  Block,
  Integration,
  IntegrationSummary,
  Variable,
  VariableValue,
  VariableValues,
} from 'forge-embed/client';
import { NotFoundError } from '../errors.js';
import { checkValue, describeProblem, typeOf } from '../shared/variable-rules.js';
import { type AppConfig, parseAppConfig } from './auth.js';
import { type CatalogFile, type CatalogVariable, checkCatalogFile, whereIn } from './schema.js';

/**
 * The host account's parent workflows. A catalog file holds the integrations once and the
 * workflows that use them by name:
 *
 *   { "integrations": [Integration], "workflows": [{ workflowId, name, description?, active?,
 *     integrations: [name], blocks: [Block & { integration?: name }] }] }
 *
 * Icons are URLs, or paths relative to the catalog's `icons/` folder, which the service serves
 * itself under `/forge/2021-12/icons/`. The format is a schema (./schema.ts), checked at start.
 */

export interface CatalogBlock extends Block {
  /** The integration this block talks to; its icon stands for the block. */
  integration?: string;
  /** A variable block's variables with all their rules, `source` in full (the elements see less: views.ts). */
  parameters: Record<string, unknown> & { variables?: CatalogVariable[] };
}

export interface CatalogWorkflow {
  workflowId: string;
  name: string;
  description?: string;
  /** Inactive parents are not listed and cannot be installed. */
  active: boolean;
  integrations: Integration[];
  blocks: CatalogBlock[];
}

/**
 * A variable's value for one user: what the user set, else the catalog's default. Own
 * properties only, so a variable named "constructor" or "__proto__" is a variable like any other.
 */
export function currentValue(variable: Variable, values: VariableValues | undefined): VariableValue {
  return values && Object.hasOwn(values, variable.name) ? values[variable.name]! : variable.value;
}

/** An integration's optional catalog extensions, beside the seed's Integration fields. */
export type IntegrationAbout = Pick<IntegrationSummary, 'description' | 'category'>;

export class Catalog {
  readonly iconsDir: string;
  private readonly byId = new Map<string, CatalogWorkflow>();
  /** The seed's Integration shape only: what the elements may read. */
  readonly integrations = new Map<string, Integration>();
  /**
   * What the catalog says of each integration beyond the seed's shape (`description`,
   * `category`): only `GET /workflow-summary` carries it, for `<forge-integration-list>`.
   */
  readonly about = new Map<string, IntegrationAbout>();
  /** How each integration authenticates and where its API lives (docs/integrations.md): never sent to a page. */
  readonly apps = new Map<string, AppConfig>();

  constructor(readonly path: string) {
    this.iconsDir = resolve(dirname(path), 'icons');
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(path, 'utf8'));
    } catch (error) {
      throw new Error(`Cannot read the catalog ${path}: ${(error as Error).message}`);
    }
    const checked = checkCatalogFile(raw);
    const problems = 'problems' in checked ? checked.problems : this.load(checked.file);
    if (problems.length > 0) throw new Error(`The catalog ${path} is not valid:\n  ${problems.join('\n  ')}`);
  }

  get(workflowId: string): CatalogWorkflow | undefined {
    return this.byId.get(workflowId);
  }

  /** An active parent (one that is listed and can be installed), or the 404 that says where ids come from. */
  active(workflowId: string): CatalogWorkflow {
    const parent = this.byId.get(workflowId);
    if (!parent?.active) {
      throw new NotFoundError(
        `No parent workflow ${workflowId}. Parent ids are the workflowId of entries in GET /workflow.`,
      );
    }
    return parent;
  }

  /** Every parent, active or not: children of a parent taken out of the listing still run. */
  all(): CatalogWorkflow[] {
    return [...this.byId.values()];
  }

  /** Active parents, optionally only those that use the integration named. */
  list(integration?: string): CatalogWorkflow[] {
    return [...this.byId.values()].filter(
      (w) => w.active && (integration === undefined || w.integrations.some((i) => i.name === integration)),
    );
  }

  /**
   * Takes in a file of the right shape, checking what ties its parts together: the integrations
   * named exist, and ids and variable names are unique. Answers the problems found.
   */
  private load(file: CatalogFile): string[] {
    const problems: string[] = [];
    for (const [i, item] of (file.integrations ?? []).entries()) {
      const { name, displayName, icon, type, requiredParameters } = item;
      // A parameter's `secret` and `pattern` are the service's (catalog/auth.ts); the elements get the seed's fields.
      const seed = requiredParameters?.map((p) => ({
        name: p.name,
        displayName: p.displayName,
        description: p.description,
      }));
      this.integrations.set(name, { name, displayName, icon, type, ...(seed ? { requiredParameters: seed } : {}) });
      this.about.set(name, {
        ...(item.description ? { description: item.description } : {}),
        ...(item.category ? { category: item.category } : {}),
      });
      this.apps.set(name, parseAppConfig(item, `integrations[${i}]`, problems));
    }
    for (const [i, item] of (file.workflows ?? []).entries()) {
      const at = `workflows[${i}]`;
      if (this.byId.has(item.workflowId)) problems.push(`${at}: duplicate workflowId ${item.workflowId}`);
      const integrations: Integration[] = [];
      for (const name of item.integrations ?? []) {
        const found = this.integrations.get(name);
        if (found) integrations.push(found);
        else problems.push(`${at}.integrations: unknown integration ${JSON.stringify(name)}`);
      }
      const ids = new Set<string>();
      const blocks = (item.blocks ?? []).map((block, j): CatalogBlock => {
        const where = `${at}.blocks[${j}]`;
        if (ids.has(block.id)) problems.push(`${where}.id: duplicate block id`);
        ids.add(block.id);
        if (block.integration !== undefined && !this.integrations.has(block.integration)) {
          problems.push(`${where}.integration: unknown integration ${JSON.stringify(block.integration)}`);
        }
        const parameters = block.parameters ?? {};
        if (block.type === 'variables') {
          const names = new Set<string>();
          for (const [k, variable] of (parameters.variables ?? []).entries()) {
            const at = `${where}.parameters.variables[${k}]`;
            const named = whereIn(file, `/workflows/${i}/blocks/${j}/parameters/variables/${k}`);
            if (names.has(variable.name)) {
              problems.push(`${at}.name${named}: duplicate variable name ${variable.name}`);
            }
            names.add(variable.name);
            for (const [field, problem] of variableProblems(variable, item.integrations ?? [])) {
              problems.push(`${at}${field ? `.${field}` : ''}${named}: ${problem}`);
            }
          }
        }
        return { ...block, parameters };
      });
      this.byId.set(item.workflowId, {
        workflowId: item.workflowId,
        name: item.name,
        ...(item.description !== undefined ? { description: item.description } : {}),
        active: item.active !== false,
        integrations,
        blocks,
      });
    }
    return problems;
  }
}

/** Types whose value is text, which a `pattern` applies to. */
const TEXT_TYPES = new Set(['string', 'text', 'email', 'url', 'select', undefined]);

/**
 * What is wrong in one variable's rules beyond their shape (schema.ts): each rule on a type it
 * applies to, a pattern that compiles, bounds in order, a select's choices from one place, a
 * source among the workflow's integrations, and a default its own rules accept (a required
 * variable may start empty: the user fills it in). Answers [field, problem] pairs.
 */
function variableProblems(variable: CatalogVariable, integrations: readonly string[]): Array<[string, string]> {
  const problems: Array<[string, string]> = [];
  const type = typeOf(variable);
  if (variable.pattern !== undefined) {
    if (!TEXT_TYPES.has(type) || variable.options) {
      problems.push(['pattern', `applies to text; this variable's type is ${type}`]);
    }
    try {
      new RegExp(variable.pattern, 'u');
    } catch (error) {
      problems.push(['pattern', `must be a regular expression (${(error as Error).message})`]);
    }
  }
  if (variable.patternMessage !== undefined && variable.pattern === undefined) {
    problems.push(['patternMessage', 'says what the pattern expects; give the pattern too']);
  }
  for (const bound of ['min', 'max'] as const) {
    if (variable[bound] !== undefined && type !== 'number') {
      problems.push([bound, `applies to numbers; this variable's type is ${type ?? 'not set'}`]);
    }
  }
  if (variable.min !== undefined && variable.max !== undefined && variable.min > variable.max) {
    problems.push(['max', `must not be below min (${variable.min})`]);
  }
  if (type === 'select' && (variable.options === undefined) === (variable.source === undefined)) {
    problems.push(['', 'a select needs its choices: either options (fixed) or source (read from the app), not both']);
  }
  for (const field of ['options', 'source'] as const) {
    if (variable[field] !== undefined && type !== 'select') {
      problems.push([field, `applies to a select; give type "select" (this variable's type is ${type ?? 'not set'})`]);
    }
  }
  if (variable.source && !integrations.includes(variable.source.integration)) {
    problems.push([
      'source.integration',
      `must be one of this workflow's integrations (${integrations.join(', ')}), whose credential the read uses`,
    ]);
  }
  if (typeof variable.value === 'boolean' && type !== 'boolean') {
    problems.push(['value', 'a boolean default needs type "boolean"']);
  } else if (problems.length === 0) {
    const checked = checkValue({ ...variable, required: false }, variable.value);
    if ('problem' in checked) problems.push(['value', describeProblem(checked.problem, 'the default')]);
  }
  return problems;
}

/** Whether the user must connect this integration (store a credential) before installing. */
export function needsCredential(integration: Integration): boolean {
  return integration.type === 'oauth2' || (integration.requiredParameters?.length ?? 0) > 0;
}
