import type { ForgeEmbedClient } from '../api/embed-client.js';
import type { Integration, OAuthStart, UserConnection } from '../api/types.js';
import { ForgeError, type ForgeErrorCode } from '../errors.js';
import { waitForOAuth } from './oauth-popup.js';

/** Keys and secrets are masked; other parameters (a server prefix) are easier to check when visible. */
export const secretParameter = (name: string) => /key|secret|token|password/i.test(name);

export interface ConnectRequest {
  integration: Integration;
  /** The required parameters the user typed; without them, the OAuth flow runs in `popup`. */
  parameters?: Record<string, string> | undefined;
  /** Opened by the click that asked for it (null when the browser blocked it). */
  popup: Window | null;
}

/**
 * Connects one of the user's accounts: stores an integration's required parameters, or runs
 * its OAuth flow (fetch the one-time authorization URL, send the popup there, wait for the
 * service's callback page to post its grant, confirm the grant with the user's token).
 * Answers the user's connections as the service now holds them: it decides what is connected
 * (and as which account), so that is read back rather than assumed.
 * Rejects with the service's error or a ForgeError (`oauth-*`, `connect-failed`).
 * `<forge-config-modal>`'s connect step and `<forge-integration-list>`'s Connect both run it.
 */
export async function connectAccount(
  client: ForgeEmbedClient,
  { integration: { name }, parameters, popup }: ConnectRequest,
  { oauthTimeout, oauthReturnUrl, signal }: { oauthTimeout: number; oauthReturnUrl?: string; signal: AbortSignal },
): Promise<UserConnection[]> {
  if (parameters) {
    await client.saveCredential(name, parameters, { signal });
  } else {
    if (!popup) throw new ForgeError('oauth-blocked', '');
    let url: string;
    try {
      // With the host's return page (forge-embed/host), for a popup its consent page cuts from this page.
      ({ url } = oauthReturnUrl
        ? await client.request<OAuthStart>(
            'POST',
            `/credentials/${encodeURIComponent(name)}/oauth`,
            { returnUrl: new URL(oauthReturnUrl, location.href).href },
            { signal },
          )
        : await client.startOAuth(name, { signal }));
    } catch (error) {
      popup.close();
      throw error;
    }
    const serviceOrigin = new URL(client.baseUrl).origin;
    const grant = await waitForOAuth(popup, url, serviceOrigin, name, oauthTimeout, signal, !!oauthReturnUrl);
    // Only the page that started the flow holds the grant; confirming binds it to this user.
    await client.confirmOAuth(name, grant, { signal });
  }
  return client.listCredentials({ signal });
}

/**
 * The texts of connecting an account, the same in every element that connects one (the modal's
 * connect step, the integration list's cards).
 */
export interface ConnectStrings {
  connected: string;
  /** A connection the app named an account for. */
  connectedAs: (account: string) => string;
  /** A connection the app refused (revoked or expired): Reconnect fixes it. */
  broken: string;
  notConnected: string;
  connect: string;
  reconnect: string;
  cancel: string;
  /** Shown while an app's sign-in window is open. */
  waitingForPopup: (integrationName: string) => string;
  /** Label of the button that saves an integration's required parameters. */
  saveParameters: string;
  parameterRequired: (label: string) => string;
  /** Why a connect failed: */
  oauthBlocked: (integrationName: string) => string;
  oauthClosed: (integrationName: string) => string;
  oauthTimeout: (integrationName: string) => string;
  oauthDenied: (integrationName: string) => string;
  /** The user pressed Cancel while the sign-in window was open (it may be one this page cannot close). */
  oauthCanceled: (integrationName: string) => string;
  connectFailed: (integrationName: string, reason: string) => string;
}

export const defaultConnectStrings: ConnectStrings = {
  connected: 'Connected',
  connectedAs: (account) => `Connected as ${account}`,
  broken: 'Needs reconnecting',
  notConnected: 'Not connected',
  connect: 'Connect',
  reconnect: 'Reconnect',
  cancel: 'Cancel',
  waitingForPopup: (name) => `Finish connecting in the ${name} window.`,
  saveParameters: 'Connect',
  parameterRequired: (label) => `Enter the ${label}.`,
  oauthBlocked: (name) =>
    `Your browser blocked the ${name} sign-in window. Allow pop-ups for this site, then try again.`,
  oauthClosed: (name) =>
    `The ${name} window closed, or lost its link to this page, before the connection finished. If it is still open, close it, then try again.`,
  oauthTimeout: (name) => `Connecting ${name} took too long and was stopped. Try again.`,
  oauthDenied: (name) => `${name} access was not allowed, so it is not connected. Try again and choose Allow.`,
  oauthCanceled: (name) => `Connecting ${name} was canceled. If its window is still open, close it.`,
  connectFailed: (name, reason) => `${name} could not be connected. ${reason}`,
};

/**
 * What to tell the user when connecting `displayName` failed with `error`: a sentence of its
 * own for a popup that was blocked, closed, timed out or denied; otherwise `connectFailed` around
 * the plain words for the failure (`reportError` passes them to what this answers).
 */
export function connectFailure(t: ConnectStrings, error: unknown, displayName: string): (reason: string) => string {
  const oauthMessages: Partial<Record<ForgeErrorCode, (name: string) => string>> = {
    'oauth-blocked': t.oauthBlocked,
    'oauth-closed': t.oauthClosed,
    'oauth-timeout': t.oauthTimeout,
    'oauth-denied': t.oauthDenied,
  };
  const oauthMessage = oauthMessages[(error as ForgeError).code];
  return (reason) => (oauthMessage ? oauthMessage(displayName) : t.connectFailed(displayName, reason));
}
