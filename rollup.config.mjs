import { rmSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import minifyHTML from '@lit-labs/rollup-plugin-minify-html-literals';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import terser from '@rollup/plugin-terser';

/**
 * The CDN bundle: a minified ES module with Lit and @lit/task inside, for
 * `<script type="module" src="https://cdn.jsdelivr.net/npm/forge-embed@0/dist/cdn/forge-embed.min.js">`, and the chunks it
 * loads on demand beside it (the modal). It bundles the
 * JavaScript tsc wrote to dist/ (`npm run build` runs tsc first) because the TypeScript plugin
 * for rollup does not work with this project's compiler.
 */

/** Prints the bundle's gzip size, the number a host page pays. */
const reportSize = () => ({
  name: 'report-size',
  generateBundle(_options, bundle) {
    for (const file of Object.values(bundle)) {
      if (file.type !== 'chunk') continue;
      const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
      console.log(`${file.fileName}: ${kb(file.code.length)} minified, ${kb(gzipSync(file.code).length)} gzip`);
    }
  },
});

/** Empties the output folder first: chunk names carry a hash, and a stale chunk would be shipped and measured. */
const cleanOutput = (dir) => ({
  name: 'clean-output',
  buildStart() {
    rmSync(dir, { recursive: true, force: true });
  },
});

/** How every bundle of this project is built (the floor and the peers' bundles in bench/ too). */
export const bundlePlugins = [
  // `browser` picks browser builds where a package has them; Lit's default export condition is its production build.
  nodeResolve({ browser: true, exportConditions: ['production'] }),
  // The templates' and styles' indentation is for people; the bundle does not need it.
  minifyHTML(),
  terser({ ecma: 2022, module: true, compress: { passes: 2 }, format: { comments: false } }),
];

export default {
  // What index.js registers and exports, without ForgeClient's API-key operations (see src/cdn.ts).
  input: 'dist/src/cdn.js',
  // The modal's chunk imports Lit and the shared helpers from the entry itself rather than from a
  // third file, which would cost the page one more request before anything renders.
  preserveEntrySignatures: 'allow-extension',
  output: {
    dir: 'dist/cdn',
    // The file package.json's `unpkg` names; the modal's chunk (and any other `import()`) sits beside it.
    entryFileNames: 'forge-embed.min.js',
    // Named after the element or view they hold (every element's registration module is `define`).
    chunkFileNames: ({ name, moduleIds }) =>
      `${
        (name === 'define' &&
          moduleIds
            .find((id) => id.endsWith('/define.js'))
            ?.split('/')
            .at(-2)) ||
        name
      }-[hash].min.js`,
    format: 'es',
    sourcemap: true,
  },
  onwarn(warning, warn) {
    // tsc's decorator helper starts with `this && this.__decorate`, which is harmless in a module.
    if (warning.code !== 'THIS_IS_UNDEFINED') warn(warning);
  },
  plugins: [cleanOutput('dist/cdn'), ...bundlePlugins, reportSize()],
};
