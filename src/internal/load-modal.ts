/**
 * `<forge-config-modal>` as a chunk of its own: a page that shows only the list does not pay for
 * the modal's code, styles and strings until someone is about to open it. Bundlers (and the CDN
 * build) split at this `import()`; a host that imports `forge-embed/config-modal/define` itself
 * has the modal at once and this import answers immediately.
 */
type ModalModule = typeof import('../config-modal/define.js');
let loading: Promise<ModalModule> | undefined;

/** Registers `<forge-config-modal>`, loading its chunk once, and answers its module (`{ForgeConfigModal}`); a failed load may be tried again. */
export function loadConfigModal(): Promise<ModalModule> {
  loading ??= import('../config-modal/define.js').catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

/** Loads the modal ahead of need (on intent, or when the browser is idle); a failure waits for the open to report it. */
export function prefetchConfigModal(): void {
  loadConfigModal().catch(() => undefined);
}

/** Prefetches the modal once the browser has nothing better to do (Safari has no requestIdleCallback). */
export function prefetchConfigModalWhenIdle(): void {
  (globalThis.requestIdleCallback ?? setTimeout)(prefetchConfigModal);
}
