import cdn, { bundlePlugins } from '../rollup.config.mjs';

/**
 * The floor bundle (see floor-entry.js), built exactly as the CDN bundle is (the same resolution
 * and terser settings, taken from the project's rollup.config.mjs), so the two sizes compare.
 * `npx rollup -c bench/rollup.floor.mjs` builds it alone.
 */
export default {
  ...cdn,
  input: 'bench/floor-entry.js',
  output: { file: 'dist/bench/floor.min.js', format: 'es' },
  plugins: bundlePlugins,
};
