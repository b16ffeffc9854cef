import type { OAuthResultMessage } from '../api/types.js';

export type OAuthFailureCode = 'oauth-blocked' | 'oauth-closed' | 'oauth-timeout' | 'oauth-denied' | 'connect-failed';

/** Why an OAuth popup did not end with a connected account. */
export class OAuthError extends Error {
  override readonly name = 'OAuthError';
  constructor(
    readonly code: OAuthFailureCode,
    /** What the service's callback page said, for `connect-failed`. */
    readonly reason = '',
  ) {
    super(reason || code);
  }
}

const WIDTH = 520;
const HEIGHT = 680;
/** How often to look whether the user closed the popup (a cross-origin window fires no event). */
const CLOSED_POLL_MS = 400;

/**
 * Opens an empty popup for an integration's sign-in. Call it synchronously in the click
 * handler, before any `await`: browsers (Safari first) block `window.open` once the click's
 * user activation is spent. Answers null when the browser blocked it.
 */
export function openOAuthPopup(integration: string): Window | null {
  const left = Math.round(window.screenX + Math.max(0, (window.outerWidth - WIDTH) / 2));
  const top = Math.round(window.screenY + Math.max(0, (window.outerHeight - HEIGHT) / 3));
  return window.open('', `forge-oauth-${integration}`, `popup,width=${WIDTH},height=${HEIGHT},left=${left},top=${top}`);
}

export interface OAuthWait {
  popup: Window;
  /** The one-time authorization URL from the service. */
  url: string;
  /** Only messages from this origin (the service's) are believed. */
  serviceOrigin: string;
  integration: string;
  timeoutMs: number;
  signal: AbortSignal;
}

/**
 * Sends the popup to the authorization URL and waits for the service's callback page to post
 * its result. Rejects with an OAuthError when access is denied, the popup is closed first or
 * the time runs out, and with the signal's reason when aborted; the popup is closed then.
 */
export function waitForOAuth({ popup, url, serviceOrigin, integration, timeoutMs, signal }: OAuthWait): Promise<void> {
  return new Promise((resolve, reject) => {
    let closedOnce = false;
    const finish = (error?: unknown) => {
      window.removeEventListener('message', onMessage);
      signal.removeEventListener('abort', onAbort);
      clearInterval(poll);
      clearTimeout(timer);
      if (error === undefined) return resolve();
      if (!popup.closed) popup.close();
      reject(error);
    };
    const onMessage = (event: MessageEvent) => {
      if (event.origin !== serviceOrigin || event.source !== popup) return;
      const data = event.data as Partial<OAuthResultMessage> | null;
      if (data?.type !== 'forge-oauth' || data.integration !== integration) return;
      if (data.status === 'connected') finish();
      else if (data.status === 'denied') finish(new OAuthError('oauth-denied'));
      else finish(new OAuthError('connect-failed', data.message ?? ''));
    };
    const onAbort = () => finish(signal.reason);
    // The callback page posts its message and then closes itself; waiting one more tick after
    // seeing the popup closed lets a message already on its way arrive first.
    const poll = setInterval(() => {
      if (!popup.closed) return;
      if (closedOnce) finish(new OAuthError('oauth-closed'));
      closedOnce = true;
    }, CLOSED_POLL_MS);
    const timer = setTimeout(() => finish(new OAuthError('oauth-timeout')), timeoutMs);
    window.addEventListener('message', onMessage);
    signal.addEventListener('abort', onAbort);
    if (signal.aborted) return onAbort();
    popup.location.href = url;
  });
}
