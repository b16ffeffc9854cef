import { waitUntil } from '@open-wc/testing';
import { executeServerCommand } from '@web/test-runner-commands';
import type { ForgeEventDetails } from '../../src/events.js';

/** A new user with one enabled workflow ("Post new Stripe payments to Slack"), made on the server side. */
export const installedWorkflow = () =>
  executeServerCommand<{ userId: string; workflowId: string }, { action: string }>('frameworks', {
    action: 'installedWorkflow',
  });

/**
 * A framework as an app ships it, served by test/frameworks/plugin.mjs. The URL is built at run
 * time so that neither TypeScript nor the dev server takes it for a package name.
 */
export const loadFramework = <T>(name: 'react18' | 'react19' | 'vue'): Promise<T> =>
  import(/* @vite-ignore */ `${'/__frameworks__/'}${name}.js`) as Promise<T>;

export type ToggleDetail = ForgeEventDetails['forge-toggle'];

/** What `find` answers once it answers something, within ten seconds. */
export async function eventually<T>(find: () => T | null | undefined, message: string): Promise<T> {
  let found: T | null | undefined;
  await waitUntil(() => (found = find()) != null, message, { timeout: 10_000 });
  return found!;
}

/** The on/off switch the list shows for the enabled workflow, once it has loaded. */
export const switchIn = (list: Element) =>
  eventually(
    () => list.shadowRoot?.querySelector<HTMLInputElement>('[role="switch"]'),
    'the enabled workflow never showed its switch',
  );

/** A fresh element to mount an app in, removed after the test. */
export function mountPoint(): HTMLElement {
  const container = document.createElement('div');
  document.body.append(container);
  return container;
}
