import { gzipSync } from 'node:zlib';
import minifyHTML from '@lit-labs/rollup-plugin-minify-html-literals';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import terser from '@rollup/plugin-terser';

/**
 * The CDN bundle: one minified ES module with Lit, @lit/task and jose's decodeJwt inside, for
 * `<script type="module" src="https://cdn.jsdelivr.net/npm/forge-embed">`. It bundles the
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

export default {
  // What index.js registers and exports, without ForgeClient's API-key operations (see src/cdn.ts).
  input: 'dist/src/cdn.js',
  // A chunk (a workflow's details view) imports Lit and the shared helpers from the entry itself
  // rather than from a third file, which would cost the page one more request.
  preserveEntrySignatures: 'allow-extension',
  output: {
    dir: 'dist/cdn',
    // The file package.json's `unpkg` names; any `import()` chunk sits beside it.
    entryFileNames: 'forge-embed.min.js',
    chunkFileNames: '[name]-[hash].min.js',
    format: 'es',
    sourcemap: true,
  },
  onwarn(warning, warn) {
    // tsc's decorator helper starts with `this && this.__decorate`, which is harmless in a module.
    if (warning.code !== 'THIS_IS_UNDEFINED') warn(warning);
  },
  plugins: [
    // `browser` picks jose's Web Crypto build; Lit's default export condition is its production build.
    nodeResolve({ browser: true, exportConditions: ['production'] }),
    // The templates' and styles' indentation is for people; the bundle does not need it.
    minifyHTML(),
    terser({ ecma: 2022, module: true, compress: { passes: 2 }, format: { comments: false } }),
    reportSize(),
  ],
};
