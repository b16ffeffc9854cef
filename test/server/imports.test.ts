/**
 * The import graph of the repository's own code: no file reaches itself through its imports
 * (type-only and dynamic ones included), and the rules compiled into both packages
 * (server/shared/) import nothing outside that folder. Imports are read with TypeScript's own pre-processor, which
 * sees every `import`, `export … from` and `import()` without compiling anything.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

const ROOTS = ['src', 'server', 'demo', 'test', 'bench', 'scripts'];
const CODE = /\.(ts|tsx|mts|js|mjs)$/;

function* files(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else if (CODE.test(entry.name) && !entry.name.endsWith('.d.ts')) yield path;
  }
}

/** The file a relative specifier names: `./x.js` is written for `./x.ts` in TypeScript. */
function target(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  const candidates = [
    base,
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.js$/, '.tsx'),
    base.replace(/\.mjs$/, '.mts'),
  ];
  return candidates.find((path) => CODE.test(path) && existsSync(path));
}

/** Every file's imports of other files of the repository. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const root of ROOTS) {
    for (const file of files(root)) {
      const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
      const path = resolve(file);
      const targets = importedFiles.map(({ fileName }) => target(path, fileName)).filter((t) => t !== undefined);
      graph.set(path, [...new Set(targets)]);
    }
  }
  return graph;
}

/** The circles of a graph: its strongly connected components of more than one file, or of one that imports itself (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const to of graph.get(file) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(file, Math.min(low.get(file)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(file, Math.min(low.get(file)!, index.get(to)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)?.includes(file)) found.push(component);
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

const graph = importGraph();
const named = (path: string) => relative(process.cwd(), path);

test('the import graph is read: it holds the elements, the service and their imports', () => {
  assert.ok(graph.size > 100, `only ${graph.size} files read`);
  assert.ok(graph.get(resolve('src/workflow-list/row.ts'))?.includes(resolve('src/workflow-list/health.ts')));
});

test('no import circle, type-only and dynamic imports included', () => {
  const found = circles(graph).map((component) => component.map(named).sort().join(' ↔ '));
  assert.deepEqual(
    found,
    [],
    `break each circle, e.g. by moving what both files need into a third:\n${found.join('\n')}`,
  );
});

test('the rules compiled into both packages import nothing but each other', () => {
  for (const [file, targets] of graph) {
    if (!named(file).startsWith(join('server', 'shared'))) continue;
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    // variable-rules.ts reads numbers by number.ts: both are in server/shared/, compiled together.
    assert.deepEqual(
      importedFiles.map((i) => i.fileName).filter((name) => !/^\.\/[\w-]+\.js$/.test(name)),
      [],
      `${named(file)} is compiled into the elements and the service: it may import only server/shared/ files (it imports ${targets.map(named).join(', ')})`,
    );
  }
});
