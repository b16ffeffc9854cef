import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { configModalEvents, workflowListEvents } from '../../src/events.js';

/**
 * The package as a consumer gets it, after `npm run build`: its exports map, the CDN bundle,
 * the manifest, and every entry imported in Node as a server-side renderer would.
 */

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const exportsMap: Record<string, string | Record<string, string>> = pkg.exports;
const codeEntries = Object.keys(exportsMap).filter((key) => !key.endsWith('.json'));
const run = promisify(execFile);

describe('the exports map', () => {
  test('names files that exist, with types first', () => {
    for (const [entry, target] of Object.entries(exportsMap)) {
      if (typeof target === 'string') {
        assert.ok(existsSync(target), `${entry}: ${target} is missing; run npm run build`);
        continue;
      }
      assert.equal(Object.keys(target)[0], 'types', `${entry}: "types" must come first`);
      for (const file of Object.values(target)) assert.ok(existsSync(file), `${entry}: ${file} is missing`);
    }
  });

  test('marks only the registering modules as having side effects', () => {
    assert.deepEqual([...pkg.sideEffects].sort(), [
      './dist/src/config-modal/define.js',
      './dist/src/index.js',
      './dist/src/workflow-list/define.js',
    ]);
    for (const file of pkg.sideEffects) assert.ok(existsSync(file), `${file} is missing`);
  });

  test('names the CDN bundle and the custom elements manifest', () => {
    assert.equal(pkg.unpkg, pkg.jsdelivr);
    assert.ok(existsSync(pkg.unpkg), `${pkg.unpkg} is missing; run npm run build`);
    const manifest = JSON.parse(readFileSync(pkg.customElements, 'utf8'));
    const tags = manifest.modules.flatMap((m: { declarations?: { tagName?: string }[] }) =>
      (m.declarations ?? []).map((d) => d.tagName).filter(Boolean),
    );
    assert.deepEqual(tags.sort(), ['forge-config-modal', 'forge-workflow-list']);
    for (const file of ['dist/cdn/forge-embed.min.js', 'custom-elements.json']) {
      assert.ok(
        pkg.files.some((f: string) => file.startsWith(f)),
        `${file} is not in package.json "files"`,
      );
    }
  });
});

test("the manifest's events are the ones events.ts declares for each element, each with its type", () => {
  const manifest = JSON.parse(readFileSync(pkg.customElements, 'utf8'));
  type Declaration = { tagName?: string; events?: { name: string; type?: { text: string } }[] };
  const elements: Declaration[] = manifest.modules.flatMap(
    (m: { declarations?: Declaration[] }) => m.declarations ?? [],
  );
  const declared: Record<string, readonly string[]> = {
    'forge-config-modal': configModalEvents,
    'forge-workflow-list': workflowListEvents,
  };
  for (const [tag, names] of Object.entries(declared)) {
    const events = elements.find((e) => e.tagName === tag)?.events ?? [];
    assert.deepEqual(
      events.map((e) => e.name).sort(),
      [...names].sort(),
      `<${tag}>'s @event tags differ from events.ts`,
    );
    for (const event of events) assert.equal(event.type?.text, `ForgeEvent<'${event.name}'>`, event.name);
  }
});

test('the CDN bundle is a self-contained ES module, whose only imports are its own chunks beside it', () => {
  const bundle = readFileSync(pkg.unpkg, 'utf8');
  // Chunks (a workflow's Runs view) load with `import("./name-hash.min.js")`, and import the
  // entry itself back; nothing else is imported.
  const chunks = [...bundle.matchAll(/\bimport\(\s*["']\.\/([\w-]+\.min\.js)["']\s*\)/g)].map((m) => m[1]!);
  assert.ok(chunks.length > 0, 'the Runs view is a chunk');
  const entryName = pkg.unpkg.split('/').at(-1)!;
  const withoutChunks = bundle.replace(/\bimport\(\s*["']\.\/[\w-]+\.min\.js["']\s*\)/g, '');
  // Minified imports look like `import{x as y}from"lit"` or `import"./a.js"`.
  assert.doesNotMatch(withoutChunks, /\bimport\s*[{*"'(]|\bimport\s+[\w$]+\s*from|\bfrom\s*["']/);
  assert.match(bundle, /\bexport\s*\{/);
  assert.match(bundle, /customElements\.define/);
  for (const chunk of chunks) {
    const code = readFileSync(new URL(chunk, new URL(pkg.unpkg, `file://${process.cwd()}/`)), 'utf8');
    const imported = [...code.matchAll(/\bfrom\s*["']([^"']+)["']/g)].map((m) => m[1]);
    assert.deepEqual([...new Set(imported)], [`./${entryName}`], `${chunk} imports only the entry`);
  }
});

describe('importing each entry in Node, as server-side rendering does', () => {
  for (const entry of codeEntries) {
    const specifier = entry === '.' ? 'forge-embed' : `forge-embed/${entry.slice(2)}`;
    test(`${specifier} loads without a DOM and leaves none behind`, async () => {
      // A fresh process per entry, importing through the package's own exports map.
      const script = `
        await import(${JSON.stringify(specifier)});
        console.log(JSON.stringify({
          window: typeof window, document: typeof document, customElements: typeof customElements,
        }));`;
      const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script]);
      assert.equal(stderr, '');
      const globals = JSON.parse(stdout);
      assert.equal(globals.window, 'undefined');
      assert.equal(globals.document, 'undefined');
      // The client and the host helper do not even load Lit (whose Node build adds a
      // customElements stand-in): they belong on servers.
      if (/\/(client|host)$/.test(specifier)) assert.equal(globals.customElements, 'undefined');
    });
  }
});

test('forge-embed/react is a client module: its built file starts with the "use client" directive', () => {
  // A directive counts only before any statement; comments may come first.
  const code = readFileSync('dist/src/react/index.js', 'utf8');
  assert.match(code, /^(?:\s*(?:\/\/[^\n]*|\/\*[\s\S]*?\*\/))*\s*'use client';/);
});

test('typesVersions names the same declarations as the exports map, for moduleResolution node', () => {
  const fromExports = Object.fromEntries(
    Object.entries(exportsMap)
      .filter(([entry, target]) => entry !== '.' && typeof target !== 'string')
      .map(([entry, target]) => [entry.slice(2), [(target as Record<string, string>).types]]),
  );
  assert.deepEqual(pkg.typesVersions['*'], fromExports);
});
