import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';

/**
 * The published types at work: test/types/ uses the elements in React 19 JSX (`forge-embed/jsx`),
 * through the React wrapper (`forge-embed/react`) and in a Vue template (`forge-embed/vue`),
 * importing the package by its own name so the exports map and the built declarations are what
 * is checked. Misuse marked `@ts-expect-error` / `@vue-expect-error` must stay an error, so types
 * that accept anything fail this test too.
 */
async function compile(compiler: string, project: string): Promise<void> {
  // A compiler that finds errors, or that cannot run at all, exits non-zero.
  const outcome = await promisify(execFile)(process.execPath, [compiler, '-p', project]).then(
    () => ({ code: 0, output: '' }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      output: `${error.stdout}${error.stderr}`,
    }),
  );
  assert.equal(outcome.code, 0, `${compiler} failed on ${project}:\n${outcome.output}`);
}

test('the elements and their events type-check in React JSX, and misuse does not', async () => {
  await compile('node_modules/typescript/bin/tsc', 'test/types/tsconfig.json');
});

test('the elements and their events type-check in Vue templates, and misuse does not', async () => {
  await compile('node_modules/vue-tsc/bin/vue-tsc.js', 'test/types/tsconfig.vue.json');
});
