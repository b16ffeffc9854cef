import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
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

export interface CdnSizes {
  entry: Sizes;
  /** Every file the entry may load on demand (the modal, detail views), by file name. */
  chunks: Record<string, Sizes>;
  /** Entry and chunks together, each compressed on its own, as a CDN serves them. */
  total: Sizes;
}

/** The CDN entry and every chunk beside it, each compressed as served. */
export function cdnSizes(entryFile: string): CdnSizes {
  const dir = dirname(entryFile);
  const chunks: Record<string, Sizes> = {};
  for (const name of readdirSync(dir)) {
    if (name.endsWith('.js') && name !== basename(entryFile)) chunks[name] = sizesOf(join(dir, name));
  }
  const entry = sizesOf(entryFile);
  const total = { ...entry };
  for (const sizes of Object.values(chunks)) {
    for (const key of Object.keys(total) as (keyof Sizes)[]) total[key] += sizes[key];
  }
  return { entry, chunks, total };
}

/** The CDN bundle's entry that `npm run build` writes, as package.json's `unpkg` names it; its chunks sit beside it. */
export function cdnBundlePath(): string {
  const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { unpkg?: string };
  if (!pkg.unpkg) {
    throw new Error('package.json names no CDN bundle (its "unpkg" field); the bench measures that file.');
  }
  return `${ROOT}${pkg.unpkg.replace(/^\.\//, '')}`;
}
