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
import { type AppConfig, parseAppConfig } from './auth.js';
import { type CatalogFile, checkCatalogFile } from './schema.js';

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
            if (names.has(variable.name)) {
              problems.push(`${where}.parameters.variables[${k}].name: duplicate variable name ${variable.name}`);
            }
            names.add(variable.name);
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

/** Whether the user must connect this integration (store a credential) before installing. */
export function needsCredential(integration: Integration): boolean {
  return integration.type === 'oauth2' || (integration.requiredParameters?.length ?? 0) > 0;
}
