import { executeServerCommand } from '@web/test-runner-commands';

/**
 * What a test page may ask of the host side (web-test-runner.config.mjs): the API key stays in
 * Node, exactly as it stays on a host's backend.
 */
const forge = <T>(action: string, args: Record<string, unknown> = {}) =>
  executeServerCommand<T, Record<string, unknown>>('forge', { action, ...args });

/** Parent workflows of the demo catalog the list tests use, by their id and the name their row shows. */
export const STRIPE_TO_SLACK = { id: '64b14ff1704e5bc1057506db', name: 'Post new Stripe payments to Slack' };
export const HUBSPOT_TO_SLACK = { id: '64b1d6aac655b8a937b7db20', name: 'Announce won HubSpot deals in Slack' };

/**
 * `apiBase`: the local service itself; `faultyBase`: the same service behind a fault-injecting
 * proxy; `refusingBase`: a service that allows no page's origin; `deadBase`: where nothing listens.
 */
export const serviceInfo = () =>
  forge<{ apiBase: string; faultyBase: string; refusingBase: string; typedBase: string; deadBase: string }>('info');

/**
 * The service whose catalog adds a workflow with a setting of every type
 * (test/fixtures/typed-workflow.json): a user there, with Slack connected, and that user's tokens.
 */
export const TYPED_WORKFLOW = 'typed-settings';
export async function typedUser({ revoked = false } = {}) {
  const userId = await forge<string>('createUser', { on: 'typed' });
  await forge<boolean>('connect', { userId, integrations: ['slack'], revoked, on: 'typed' });
  return { userId, token: () => forge<string>('token', { userId, on: 'typed' }) };
}

/** Calls the typed service with the API key, from the host side. */
export const typedHostApi = <T = unknown>(method: string, path: string, body?: unknown) =>
  forge<{ status: number; body: T }>('api', { method, path, body, on: 'typed' });

/** Creates a fresh end user and answers its id. */
export const createUser = (name?: string) => forge<string>('createUser', { name });

/** A user token, as the host's token endpoint would hand it out. */
export const userToken = (userId: string, expiresIn?: number) => forge<string>('token', { userId, expiresIn });

/** Calls the service with the API key, from the host side. */
export const hostApi = <T = unknown>(method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
  forge<{ status: number; body: T }>('api', { method, path, body, headers });

/**
 * Arms the proxy at `faultyBase` to fail the next request whose method and path (a regular
 * expression over the path after the origin) match: `kind` is an HTTP status, `network` (the
 * connection fails) or `truncated` (a 200 whose body is cut short).
 */
export const injectFault = (method: string, path: string, kind: number | 'network' | 'truncated') =>
  forge<boolean>('fault', { method, path, kind });

/**
 * Arms the proxy at `faultyBase` to answer the next matching request with `status` and the JSON
 * `body`, as a hostile service (or anyone between the page and an `http:` service) could.
 */
export const injectAnswer = (method: string, path: string, status: number, body: unknown) =>
  forge<boolean>('fault', { method, path, kind: status, body });

export const clearFaults = () => forge<boolean>('clearFaults');

/**
 * Arms the proxy at `faultyBase` to hold the requests whose method and path match until `count`
 * of them wait together (a second at most), then let them go at once: requests sent side by side
 * go as one group, requests sent one after another each go alone. `clearFaults` disarms it.
 */
export const gatherRequests = (method: string, path: string, count: number) =>
  forge<boolean>('gather', { method, path, count });

/** The paths of the requests the armed proxy let go, one sorted list per group, in the order let go. */
export const gatheredRequests = () => forge<string[][]>('gathered');

/**
 * Stores a credential for each integration, as if the user had connected it (OAuth ones too);
 * a `revoked` one is refused by the apps, as a token the user revoked in the app would be.
 * `account`: the label the app gave for it; `broken`: the service has found that the app refuses it.
 */
export const connectIntegrations = (
  userId: string,
  integrations: string[],
  { revoked = false, account, broken = false }: { revoked?: boolean; account?: string; broken?: boolean } = {},
) => forge<boolean>('connect', { userId, integrations, revoked, account, broken });

/**
 * POSTs `payload` to a child workflow's webhook URL (read with the API key), as the app would,
 * waiting for the run (`Prefer: wait`); answers the run.
 */
export async function runWorkflow(workflowId: string, payload: Record<string, unknown>) {
  const { body } = await hostApi<{ webhookUrl: string }>('GET', `/workflow/${workflowId}`);
  const token = body.webhookUrl.split('/hooks/')[1];
  return (
    await hostApi<{ executionId: string; finished: boolean }>('POST', `/hooks/${token}`, payload, { Prefer: 'wait=30' })
  ).body;
}

/** A URL of this page's own token endpoint for `token-url`; `mode` makes it fail on purpose. */
export const tokenUrl = (userId: string, mode?: 'error' | 'html' | 'garbage', expiresIn?: number) =>
  `/test-host/token?user=${encodeURIComponent(userId)}${mode ? `&mode=${mode}` : ''}${expiresIn ? `&expiresIn=${expiresIn}` : ''}`;

/**
 * Completes a one-time OAuth URL (from `startOAuth`) over HTTP, as if the user pressed Allow;
 * answers the grant the page then confirms (`confirmOAuth`).
 */
export const authorizeOAuth = (url: string) => forge<string>('authorize', { url });

/**
 * Acts on the local consent page in the OAuth popup this page opened: presses Allow or Deny,
 * or closes the window, or (`find`) only waits until the consent page shows. Answers the popup's URL.
 */
export const consentInPopup = (decision: 'allow' | 'deny' | 'close' | 'find', detached = false) =>
  forge<string>('consent', { decision, detached });

/**
 * Closes every window but the test page, from the browser's driver: a window cut from its opener
 * (Cross-Origin-Opener-Policy) cannot be closed by any script of the page.
 */
export const closeOtherWindows = () => forge<boolean>('closeOtherWindows');

/** A user of the service whose consent page cuts the popup from its opener (Cross-Origin-Opener-Policy). */
export const coopUser = () => forge<{ apiBase: string; userId: string }>('coopUser');

/**
 * Holds keys down together and lets them go (`['Control', 'a']`), in every engine: `sendKeys`
 * has no `down`/`up` over WebDriver.
 */
export const pressChord = (keys: string[]) =>
  executeServerCommand<boolean, { keys: string[] }>('press-chord', { keys });
