import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { startService } from '../../server/app.js';
import { PACKAGE_ROOT } from '../../server/paths.js';
import { demoCatalog } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'forge-catalog-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The demo catalog with `change` made to a copy, as a file. */
function catalogFile(name: string, change: (catalog: typeof demoCatalog) => void): string {
  const catalog = structuredClone(demoCatalog);
  change(catalog);
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(catalog));
  return path;
}

/** The demo catalog's first variable block with two variables or more, by its indexes. */
const [w, b] = (() => {
  for (const [i, workflow] of demoCatalog.workflows.entries()) {
    const j = workflow.blocks.findIndex((block) => (block.parameters.variables?.length ?? 0) > 1);
    if (j >= 0) return [i, j];
  }
  throw new Error('The demo catalog has no block with two variables.');
})();

describe('a catalog file that is not valid', () => {
  const broken = catalogFile('broken.json', (catalog) => {
    const variables = catalog.workflows[w]!.blocks[b]!.parameters.variables!;
    (variables[1] as { name: unknown }).name = 5;
    (variables[0] as { value: unknown }).value = null;
    (catalog.workflows[0] as { workflowId: string }).workflowId = 'not an id!';
    delete (catalog.integrations[0] as { icon?: string }).icon;
  });

  test('stops the service from starting, naming each problem by its path in the file', async () => {
    await assert.rejects(
      startService({ port: 0, db: ':memory:', catalog: broken, scheduler: false }),
      (error: Error) => {
        assert.match(error.message, /^The catalog .*broken\.json is not valid:/);
        const problems = error.message
          .split('\n')
          .slice(1)
          .map((line) => line.trim());
        // Each problem in a workflow names the workflow, the block and the variable it is in.
        const workflow = demoCatalog.workflows[w]!;
        const block = workflow.blocks[b]!;
        const id = w === 0 ? 'not an id!' : workflow.workflowId;
        const names = `workflow "${id}", block "${block.name}"`;
        assert.deepEqual(problems, [
          'integrations[0].icon: required',
          'workflows[0].workflowId (workflow "not an id!"): must be 1 to 64 letters, digits, _ or -',
          `workflows[${w}].blocks[${b}].parameters.variables[0].value (${names}, variable "${block.parameters.variables![0]!.name}"): must be a string or a number (a boolean for a boolean variable)`,
          `workflows[${w}].blocks[${b}].parameters.variables[1].name (${names}, variable 5): must be string`,
        ]);
        return true;
      },
    );
  });

  test('makes forge-service exit with that message', async () => {
    const outcome = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'main.ts', '--port', '0', '--db', ':memory:', '--catalog', broken],
      { cwd: PACKAGE_ROOT, env: { ...process.env, FORGE_LOG: 'off' } },
    ).then(
      () => ({ code: 0, output: '' }),
      // The service log (a JSON line on stdout) or the usage message (stderr) says why.
      (error: { code: number; stdout: string; stderr: string }) => ({
        code: error.code,
        output: `${error.stdout}${error.stderr}`,
      }),
    );
    assert.notEqual(outcome.code, 0);
    assert.match(
      outcome.output,
      /workflows\[\d+\]\.blocks\[\d+\]\.parameters\.variables\[1\]\.name \(workflow [^)]*\): must be string/,
    );
  });

  test('names what ties the parts together too: an unknown integration, a duplicate id', async () => {
    const unknown = catalogFile('unknown.json', (catalog) => {
      catalog.workflows[0]!.integrations.push('no-such-integration' as never);
      catalog.workflows[1]!.workflowId = catalog.workflows[0]!.workflowId;
    });
    await assert.rejects(
      startService({ port: 0, db: ':memory:', catalog: unknown, scheduler: false }),
      (error: Error) => {
        assert.match(error.message, /workflows\[0\]\.integrations: unknown integration "no-such-integration"/);
        assert.match(error.message, /workflows\[1\]: duplicate workflowId/);
        return true;
      },
    );
  });

  test('that is not a JSON object at all is named as the file', async () => {
    const list = join(dir, 'list.json');
    writeFileSync(list, '[]');
    await assert.rejects(startService({ port: 0, db: ':memory:', catalog: list, scheduler: false }), {
      message: /not valid:\n {2}the file: must be a JSON object with integrations and workflows/,
    });
  });
});
