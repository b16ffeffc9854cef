import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package's root folder, found by walking up from this module: the service runs both from
 * its TypeScript sources and from the compiled `dist/`, and reads files that ship beside
 * them (the demo catalog and its icons).
 */
function findPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('forge-embed-service: cannot find the package root');
    dir = parent;
  }
  return dir;
}

export const PACKAGE_ROOT = findPackageRoot();

/** The demo catalog, used when no other is named. */
export const DEMO_CATALOG = join(PACKAGE_ROOT, 'catalog', 'demo.json');
