import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface Sizes {
  minBytes: number;
  gzipBytes: number;
  brotliBytes: number;
}

/** A file's size as shipped (minified), and compressed as a CDN serves it, at the strongest settings. */
export function sizesOf(file: string): Sizes {
  const bytes = readFileSync(file);
  return {
    minBytes: bytes.length,
    gzipBytes: gzipSync(bytes, { level: 9 }).length,
    brotliBytes: brotliCompressSync(bytes, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    }).length,
  };
}

/** Builds the floor bundle (lit, @lit/task, decodeJwt) with bench/rollup.floor.mjs and answers its path. */
export function buildFloor(): string {
  execFileSync(`${ROOT}node_modules/.bin/rollup`, ['-c', 'bench/rollup.floor.mjs', '--silent'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  return `${ROOT}dist/bench/floor.min.js`;
}

/** The single-file CDN bundle that `npm run build` writes, as package.json's `unpkg` names it. */
export function cdnBundlePath(): string {
  const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { unpkg?: string };
  if (!pkg.unpkg) {
    throw new Error('package.json names no CDN bundle (its "unpkg" field); the bench measures that file.');
  }
  return `${ROOT}${pkg.unpkg.replace(/^\.\//, '')}`;
}
