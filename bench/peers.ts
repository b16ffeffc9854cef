import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Sizes, sizesOf } from './size.js';

/**
 * The embed SDKs forge-embed is compared with, each bundled with everything it exports the way
 * forge-embed's CDN bundle is (bench/rollup.peers.mjs).
 * They are installed at bench time into bench/.peers (git-ignored), never as dependencies.
 *
 * `iframe`: whether the SDK shows its UI as a separate app in an iframe, read from each package's
 * bundled code (`evidence` says where); that app's own download comes on top of the size here.
 */
export const PEERS = [
  {
    name: '@useparagon/connect',
    iframe: true,
    evidence: 'the Connect Portal is `document.createElement("iframe")` whose src is its CONNECT_PUBLIC_URL + `/ui`',
  },
  {
    name: '@prismatic-io/embedded',
    iframe: true,
    evidence: 'the marketplace is an iframe in `#pio__embedded .pio__iframeContainer`, of app.prismatic.io',
  },
  {
    name: '@nangohq/frontend',
    iframe: true,
    evidence: 'Connect UI is `document.createElement("iframe")` (id connect-ui, position fixed) of connect.nango.dev',
  },
  {
    name: 'alloy-frontend',
    iframe: true,
    evidence: 'the modal is `document.createElement("iframe")` (id embedded-modal) of embedded.runalloy.com',
  },
  {
    name: '@cobaltio/cobalt-js',
    iframe: false,
    evidence: 'no UI: an API client for api.gocobalt.io that opens the OAuth page with `window.open`',
  },
] as const;

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CACHE = `${ROOT}bench/.peers/`;

export interface PeerSize extends Sizes {
  name: string;
  version: string;
  iframe: boolean;
  evidence: string;
}

/** Installs the peers (once; npm keeps them) and answers each one's bundle size. */
export function peerSizes(): PeerSize[] {
  mkdirSync(CACHE, { recursive: true });
  writeFileSync(`${CACHE}package.json`, JSON.stringify({ name: 'forge-bench-peers', private: true }));
  execFileSync(
    'npm',
    ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error', ...PEERS.map((p) => p.name)],
    { cwd: CACHE, stdio: 'inherit' },
  );
  const results: PeerSize[] = [];
  for (const peer of PEERS) {
    const entry = `${CACHE}entry-${peer.name.replace(/\W/g, '_')}.js`;
    writeFileSync(entry, `import * as peer from '${peer.name}';\nexport default peer;\n`);
    const file = `${CACHE}dist/${peer.name.replace(/\W/g, '_')}.min.js`;
    execFileSync(`${ROOT}node_modules/.bin/rollup`, ['-c', 'bench/rollup.peers.mjs', '--silent'], {
      cwd: ROOT,
      stdio: 'inherit',
      env: { ...process.env, PEER_ENTRY: entry, PEER_FILE: file },
    });
    const { version } = JSON.parse(
      execFileSync('npm', ['ls', peer.name, '--json', '--depth=0'], { cwd: CACHE, encoding: 'utf8' }),
    ).dependencies[peer.name];
    results.push({ ...peer, version, ...sizesOf(file) });
  }
  return results;
}
