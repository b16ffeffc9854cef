import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import { rollup } from 'rollup';
import { configModalEvents, integrationListEvents, workflowListEvents } from '../../src/events.js';

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
      './dist/src/integration-list/define.js',
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
    assert.deepEqual(tags.sort(), ['forge-config-modal', 'forge-integration-list', 'forge-workflow-list']);
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
    'forge-integration-list': integrationListEvents,
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

test('the CDN bundle is self-contained: its entry and the chunks beside it import only each other', () => {
  const dir = dirname(pkg.unpkg);
  const files = new Map<string, string>();
  const read = (name: string) => {
    if (files.has(name)) return;
    assert.ok(existsSync(join(dir, name)), `${name}, imported in the CDN bundle, is missing from ${dir}`);
    const code = readFileSync(join(dir, name), 'utf8');
    files.set(name, code);
    // Minified imports look like `import{x as y}from"./a.js"`, `import"./a.js"` or `import("./a.js")`.
    for (const [, specifier] of code.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*["']([^"']+)["']/g)) {
      assert.match(specifier!, /^\.\/[\w.-]+\.js$/, `${name} imports ${specifier}, which is not beside it`);
      read(specifier!.slice(2));
    }
  };
  read(basename(pkg.unpkg));
  const entry = files.get(basename(pkg.unpkg))!;
  assert.match(entry, /\bexport\s*\{/);
  assert.match(entry, /customElements\.define\("forge-workflow-list"/);
  // The modal is a chunk of its own, loaded on demand: the page that shows the list does not wait for it.
  assert.doesNotMatch(entry, /customElements\.define\("forge-config-modal"/);
  assert.ok(
    [...files.values()].some((code) => /customElements\.define\("forge-config-modal"/.test(code)),
    'no chunk of the CDN bundle registers <forge-config-modal>',
  );
  // So is the integration list: a page that does not show one never loads its code.
  assert.doesNotMatch(entry, /customElements\.define\("forge-integration-list"/);
  assert.ok(
    [...files.values()].some((code) => /customElements\.define\("forge-integration-list"/.test(code)),
    'no chunk of the CDN bundle registers <forge-integration-list>',
  );
});

test('a bundler given forge-embed/workflow-list/define puts the modal in a chunk of its own', async () => {
  const bundle = await rollup({
    input: (exportsMap['./workflow-list/define'] as Record<string, string>).default!,
    plugins: [nodeResolve({ browser: true })],
  });
  const { output } = await bundle.generate({ format: 'es' });
  await bundle.close();
  const registers = (tag: string) => new RegExp(`customElements\\.define\\(\\s*['"]${tag}['"]`);
  const chunks = new Map(output.flatMap((file) => (file.type === 'chunk' ? [[file.fileName, file] as const] : [])));
  // What the page loads before anything runs: the entry and what it imports statically.
  const loadedAtOnce = new Set<string>();
  const walk = (name: string) => {
    if (loadedAtOnce.has(name)) return;
    loadedAtOnce.add(name);
    for (const imported of chunks.get(name)!.imports) walk(imported);
  };
  walk([...chunks.values()].find((chunk) => chunk.isEntry)!.fileName);
  const atOnce = [...loadedAtOnce].map((name) => chunks.get(name)!.code).join('\n');
  assert.match(atOnce, registers('forge-workflow-list'));
  assert.doesNotMatch(atOnce, registers('forge-config-modal'));
  const modal = [...chunks.values()].find((chunk) => registers('forge-config-modal').test(chunk.code));
  assert.ok(modal?.isDynamicEntry, 'no chunk loaded with import() registers <forge-config-modal>');
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

describe('the packed tarballs, installed into an empty project', () => {
  const servicePkg = JSON.parse(readFileSync('server/package.json', 'utf8'));

  test('both packages build before they are packed', () => {
    assert.equal(pkg.scripts.prepack, 'npm run build');
    assert.equal(servicePkg.scripts.prepack, 'npm run build');
  });

  // Nothing here touches a database: once, on the SQLite run of the suite.
  test('every subpath of forge-embed and forge-embed-service imports, and the service starts', {
    skip: !!process.env.FORGE_TEST_POSTGRES,
    timeout: 600_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'forge-packed-'));
    try {
      // The build is there (the suite needs it): --ignore-scripts packs it without building again.
      const pack = async (...workspace: string[]) => {
        const { stdout } = await run('npm', [
          'pack',
          ...workspace,
          '--ignore-scripts',
          '--json',
          '--pack-destination',
          dir,
        ]);
        return join(dir, (JSON.parse(stdout) as { filename: string }[])[0]!.filename);
      };
      const tarballs = [await pack(), await pack('-w', 'server')];
      // Nothing of the service needs an install script (its SQLite is Node's own node:sqlite);
      // React for forge-embed/react, whose optional peer it is, as this checkout has it.
      const versionOf = (name: string) => JSON.parse(readFileSync(`node_modules/${name}/package.json`, 'utf8')).version;
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
      await run(
        'npm',
        [
          'install',
          '--prefer-offline',
          '--ignore-scripts',
          '--no-audit',
          '--no-fund',
          '--loglevel=error',
          ...tarballs,
          `react@${versionOf('react')}`,
        ],
        { cwd: dir },
      );

      const specifiers = (name: string, exports: Record<string, unknown>) =>
        Object.keys(exports).map((entry) => (entry === '.' ? name : `${name}/${entry.slice(2)}`));
      const script = `
          for (const specifier of ${JSON.stringify([
            ...specifiers('forge-embed', exportsMap),
            ...specifiers('forge-embed-service', servicePkg.exports),
          ])}) {
            await import(specifier, specifier.endsWith('.json') ? { with: { type: 'json' } } : undefined);
          }
          const { startService } = await import('forge-embed-service');
          const service = await startService({ port: 0, db: ':memory:' });
          const health = await fetch(service.url + '/healthz');
          await service.close();
          console.log(health.status);`;
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: dir });
      assert.equal(stdout.trim(), '200');
      const help = await run(join(dir, 'node_modules/.bin/forge-service'), ['--help'], { cwd: dir });
      assert.match(help.stdout, /FORGE_ALLOWED_ORIGINS/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
