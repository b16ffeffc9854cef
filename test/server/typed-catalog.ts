/**
 * A catalog for the tests of typed variables (issue 26): the demo catalog plus one workflow whose
 * variable block holds a variable of every type and rule, and one without `type` of each kind
 * (catalogs written before types). Written to a temporary file for a service to start with.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DemoWorkflow, demoCatalog } from './support.js';

export const TYPED_BLOCK = '3f2b8e4c-5a1d-4c7e-9b6a-0d4e8f1a2b3c';

/** The workflow, also read by the browser tests' service (web-test-runner.config.mjs). */
export const typedWorkflow = JSON.parse(
  readFileSync(new URL('../fixtures/typed-workflow.json', import.meta.url), 'utf8'),
) as DemoWorkflow;

/** Values that keep every rule of the typed workflow. */
export const validTypedValues = { channel: 'C0001', spreadsheetId: 'a'.repeat(24) };

/** Writes the catalog (`change` may alter a copy first) and answers its path and a removal. */
export function typedCatalogFile(change?: (catalog: typeof demoCatalog) => void): {
  path: string;
  remove: () => void;
} {
  const catalog = structuredClone(demoCatalog);
  catalog.workflows.push(structuredClone(typedWorkflow));
  change?.(catalog);
  const dir = mkdtempSync(join(tmpdir(), 'forge-typed-'));
  const path = join(dir, 'catalog.json');
  writeFileSync(path, JSON.stringify(catalog));
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
