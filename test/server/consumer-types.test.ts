import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';

/**
 * The built package's types from outside this repository, in a project that installed it (a
 * symlink in its node_modules, no @types/node beside it), under compiler settings hosts use:
 * strict with `skipLibCheck: false`, and the old `moduleResolution: node` (node10).
 */
const ROOT = resolve(import.meta.dirname, '../..');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const subpaths = Object.keys(pkg.exports)
  .filter((entry) => !entry.endsWith('.json'))
  .map((entry) => (entry === '.' ? 'forge-embed' : `forge-embed/${entry.slice(2)}`));

let project: string;
before(() => {
  project = mkdtempSync(join(tmpdir(), 'forge-consumer-'));
  mkdirSync(join(project, 'node_modules'));
  symlinkSync(ROOT, join(project, 'node_modules/forge-embed'), 'dir');
});
after(() => rmSync(project, { recursive: true, force: true }));

/** Type-checks `source` in the consumer project under `compilerOptions`; answers tsc's report. */
async function typeCheck(name: string, source: string, compilerOptions: Record<string, unknown>) {
  writeFileSync(join(project, `${name}.ts`), source);
  const config = join(project, `tsconfig.${name}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'ES2022',
        lib: ['ES2022', 'DOM'],
        types: [],
        ...compilerOptions,
      },
      files: [`${name}.ts`],
    }),
  );
  const { stdout } = await promisify(execFile)(process.execPath, [TSC, '-p', config]).catch(
    (error: { stdout: string }) => error,
  );
  return stdout;
}

test('forge-embed/host type-checks without @types/node, with skipLibCheck: false', async () => {
  const report = await typeCheck(
    'host',
    `import { createTokenHandler, toNodeHandler } from 'forge-embed/host';
const handler = createTokenHandler({ apiKey: 'forge_sk_x', serviceUrl: 'http://localhost:4010', getUserId: () => 'u1' });
export const node = toNodeHandler(handler);
// @ts-expect-error: a handler answers a Response
toNodeHandler(async () => 'not a response');
`,
    { module: 'NodeNext', moduleResolution: 'NodeNext', skipLibCheck: false },
  );
  assert.equal(report, '', `tsc reported:\n${report}`);
});

test('every subpath resolves under moduleResolution node (node10)', async () => {
  const source = subpaths.map((specifier, i) => `import type * as entry${i} from '${specifier}';\n`).join('');
  const uses = `export type Entries = [${subpaths.map((_, i) => `typeof entry${i}`).join(', ')}];\n`;
  const report = await typeCheck('node10', source + uses, {
    module: 'ESNext',
    moduleResolution: 'node',
    skipLibCheck: true,
    jsx: 'react-jsx',
    experimentalDecorators: true,
  });
  assert.equal(report, '', `tsc reported:\n${report}`);
});
