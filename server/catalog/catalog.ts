import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type {
  Block,
  Integration,
  RequiredParameter,
  Variable,
  VariableValue,
  VariableValues,
} from 'forge-embed/client';
import { NotFoundError } from '../errors.js';
import { isPlainObject } from '../validate.js';
import { type AppConfig, parseAppConfig } from './auth.js';

/**
 * The host account's parent workflows. A catalog file holds the integrations once and the
 * workflows that use them by name:
 *
 *   { "integrations": [Integration], "workflows": [{ workflowId, name, description?, active?,
 *     integrations: [name], blocks: [Block & { integration?: name }] }] }
 *
 * Icons are URLs, or paths relative to the catalog's `icons/` folder, which the service serves
 * itself under `/forge/2021-12/icons/`.
 */

const UUID4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export interface CatalogBlock extends Block {
  /** The integration this block talks to; its icon stands for the block. */
  integration?: string;
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

export class Catalog {
  readonly iconsDir: string;
  private readonly byId = new Map<string, CatalogWorkflow>();
  /** The seed's Integration shape only: what the elements may read. */
  readonly integrations = new Map<string, Integration>();
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
    const problems: string[] = [];
    const file = isPlainObject(raw) ? raw : {};
    for (const [i, item] of asArray(file.integrations).entries()) {
      const integration = parseIntegration(item, `integrations[${i}]`, problems);
      if (integration) {
        this.integrations.set(integration.name, integration);
        this.apps.set(
          integration.name,
          parseAppConfig(item as Record<string, unknown>, `integrations[${i}]`, problems),
        );
      }
    }
    for (const [i, item] of asArray(file.workflows).entries()) {
      const workflow = this.parseWorkflow(item, `workflows[${i}]`, problems);
      if (workflow) {
        if (this.byId.has(workflow.workflowId))
          problems.push(`workflows[${i}]: duplicate workflowId ${workflow.workflowId}`);
        this.byId.set(workflow.workflowId, workflow);
      }
    }
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

  private parseWorkflow(item: unknown, at: string, problems: string[]): CatalogWorkflow | undefined {
    if (!isPlainObject(item)) return void problems.push(`${at}: must be an object`);
    const { workflowId, name, description, active = true } = item;
    if (typeof workflowId !== 'string' || !/^[\w-]{1,64}$/.test(workflowId)) {
      problems.push(`${at}.workflowId: must be 1 to 64 letters, digits, _ or -`);
    }
    if (typeof name !== 'string' || !name) problems.push(`${at}.name: required`);
    const integrations: Integration[] = [];
    for (const ref of asArray(item.integrations)) {
      const found = typeof ref === 'string' ? this.integrations.get(ref) : undefined;
      if (found) integrations.push(found);
      else problems.push(`${at}.integrations: unknown integration ${JSON.stringify(ref)}`);
    }
    const blocks: CatalogBlock[] = [];
    const ids = new Set<string>();
    for (const [j, b] of asArray(item.blocks).entries()) {
      const where = `${at}.blocks[${j}]`;
      if (!isPlainObject(b)) {
        problems.push(`${where}: must be an object`);
        continue;
      }
      if (typeof b.id !== 'string' || !UUID4.test(b.id)) problems.push(`${where}.id: must be a uuid4`);
      if (ids.has(b.id as string)) problems.push(`${where}.id: duplicate block id`);
      ids.add(b.id as string);
      if (typeof b.name !== 'string' || typeof b.type !== 'string')
        problems.push(`${where}: name and type are required`);
      if (b.integration !== undefined && !this.integrations.has(b.integration as string)) {
        problems.push(`${where}.integration: unknown integration ${JSON.stringify(b.integration)}`);
      }
      const parameters = isPlainObject(b.parameters) ? b.parameters : {};
      if (b.type === 'variables') checkVariables(parameters.variables, `${where}.parameters.variables`, problems);
      blocks.push({ ...(b as unknown as CatalogBlock), parameters });
    }
    return {
      workflowId: workflowId as string,
      name: name as string,
      ...(typeof description === 'string' ? { description } : {}),
      active: active !== false,
      integrations,
      blocks,
    };
  }
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function parseIntegration(item: unknown, at: string, problems: string[]): Integration | undefined {
  if (!isPlainObject(item)) return void problems.push(`${at}: must be an object`);
  const { name, displayName, icon, type } = item;
  for (const [key, value] of Object.entries({ name, displayName, icon, type })) {
    if (typeof value !== 'string' || !value) problems.push(`${at}.${key}: required string`);
  }
  const integration: Integration = {
    name: name as string,
    displayName: displayName as string,
    icon: icon as string,
    type: type as string,
  };
  if (item.requiredParameters !== undefined) {
    integration.requiredParameters = asArray(item.requiredParameters).map((p, k) => {
      const ok = isPlainObject(p) && ['name', 'displayName', 'description'].every((key) => typeof p[key] === 'string');
      if (!ok) problems.push(`${at}.requiredParameters[${k}]: needs name, displayName and description strings`);
      // `secret` and `pattern` are the service's (catalog/auth.ts); the elements get the seed's fields.
      const { name, displayName, description } = (p ?? {}) as RequiredParameter;
      return { name, displayName, description };
    });
  }
  return integration;
}

function checkVariables(value: unknown, at: string, problems: string[]): void {
  const names = new Set<string>();
  for (const [k, v] of asArray(value).entries()) {
    const variable = v as Variable;
    if (!isPlainObject(v) || typeof variable.uuid !== 'string' || typeof variable.name !== 'string') {
      problems.push(`${at}[${k}]: needs uuid and name strings`);
    } else if (typeof variable.value !== 'string' && typeof variable.value !== 'number') {
      problems.push(`${at}[${k}].value: must be a string or a number`);
    } else if (names.has(variable.name)) {
      problems.push(`${at}[${k}].name: duplicate variable name ${variable.name}`);
    }
    names.add(variable?.name);
  }
}

/** Whether the user must connect this integration (store a credential) before installing. */
export function needsCredential(integration: Integration): boolean {
  return integration.type === 'oauth2' || (integration.requiredParameters?.length ?? 0) > 0;
}
