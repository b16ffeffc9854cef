import commonjs from '@rollup/plugin-commonjs';
import replace from '@rollup/plugin-replace';
import { bundlePlugins } from '../rollup.config.mjs';

/**
 * One embed SDK of another product (bench/peers.ts sets PEER_ENTRY and PEER_FILE), bundled as
 * the CDN bundle is: its resolution and terser settings, plus what CommonJS packages need.
 */
export default {
  input: process.env.PEER_ENTRY,
  output: { file: process.env.PEER_FILE, format: 'es', inlineDynamicImports: true },
  onwarn: () => undefined,
  plugins: [
    replace({ preventAssignment: true, values: { 'process.env.NODE_ENV': JSON.stringify('production') } }),
    commonjs(),
    ...bundlePlugins,
  ],
};
