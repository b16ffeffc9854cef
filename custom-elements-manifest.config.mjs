/**
 * `npm run build` writes custom-elements.json from the elements' JSDoc (`@event`, `@csspart`,
 * `@cssproperty`, the property comments); `scripts/api-docs.mjs` turns it into docs/elements.md.
 */
export default {
  // The elements, their base classes and their registrations; helpers are not public API.
  globs: [
    'src/internal/forge-element.ts',
    'src/internal/dialog.ts',
    'src/{config-modal,workflow-list,integration-list}/{config-modal,workflow-list,integration-list,define}.ts',
  ],
  outdir: '.',
  litelement: true,
  dependencies: false,
};
