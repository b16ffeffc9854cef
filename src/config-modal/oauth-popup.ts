import type { OAuthResultMessage } from '../api/types.js';
import { ForgeError } from '../errors.js';

const WIDTH = 520;
const HEIGHT = 680;

/**
 * Opens an empty popup for an integration's sign-in. Call it synchronously in the click
 * handler, before any `await`: browsers (Safari first) block `window.open` once the click's
 * user activation is spent. Answers null when the browser blocked it.
 */
export function openOAuthPopup(integration: string): Window | null {
  const left = Math.round(screenX + Math.max(0, (outerWidth - WIDTH) / 2));
  const top = Math.round(screenY + Math.max(0, (outerHeight - HEIGHT) / 3));
  return open('', `forge-oauth-${integration}`, `popup,width=${WIDTH},height=${HEIGHT},left=${left},top=${top}`);
}

/** Hosts that never leave the machine, where a local service may answer over plain http. */
const LOOPBACK = /^(localhost|.+\.localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/**
 * The authorization URL the service answered, if the popup may open it: `https:`, or `http:` on
 * a loopback host. The popup is still on `about:blank`, which shares this page's origin, so a
 * `javascript:` URL from a hostile service (or from anyone between the page and an `http:`
 * service) would run script in the host page. Anything else is a `connect-failed` ForgeError.
 */
export function authorizationUrl(answered: string): string {
  let url: URL | undefined;
  try {
    url = new URL(answered);
  } catch {
    // Not a URL at all: refused below like any other.
  }
  const { protocol = 'no URL', hostname = '' } = url ?? {};
  if (protocol === 'https:' || (protocol === 'http:' && LOOPBACK.test(hostname))) return url!.href;
  throw new ForgeError(
    'connect-failed',
    `The service sent a sign-in address this page does not open (${protocol}); only https addresses are opened. Check that api-base is your Forge service's https origin.`,
  );
}

/**
 * Sends the popup to the one-time authorization `url` and waits for the service's callback page
 * to post its result; only messages from `serviceOrigin` and from this popup are believed, or,
 * with `returnPage`, those the host's return page relays on this origin's BroadcastChannel.
 * Answers the one-time grant to confirm with the user's token (nothing is connected before).
 * Rejects with a ForgeError (`oauth-denied`, `oauth-closed`, `oauth-timeout`, or
 * `connect-failed` with the callback's reason or for a URL `authorizationUrl` refuses) and with the signal's reason when aborted; the
 * popup is closed then.
 */
export function waitForOAuth(
  popup: Window,
  url: string,
  serviceOrigin: string,
  integration: string,
  timeoutMs: number,
  signal: AbortSignal,
  returnPage = false,
): Promise<string> {
  return new Promise((resolve, reject) => {
    try {
      url = authorizationUrl(url);
    } catch (error) {
      popup.close();
      return reject(error);
    }
    let closedOnce = false;
    // With a return page, the result may also come that way (forge-embed/host's oauthReturnPage).
    const channel = returnPage ? new BroadcastChannel('forge-oauth') : undefined;
    const finish = (error?: unknown, grant = '') => {
      channel?.close();
      removeEventListener('message', onMessage);
      signal.removeEventListener('abort', onAbort);
      clearInterval(poll);
      clearTimeout(timer);
      if (!error) return resolve(grant);
      popup.close();
      reject(error);
    };
    const onResult = (data: Partial<OAuthResultMessage> | null) => {
      if (data?.type !== 'forge-oauth' || data.integration !== integration) return;
      if (data.status === 'authorized' && typeof data.grant === 'string') finish(undefined, data.grant);
      else if (data.status === 'denied') finish(new ForgeError('oauth-denied', ''));
      else finish(new ForgeError('connect-failed', data.message ?? ''));
    };
    const onMessage = ({ origin, source, data }: MessageEvent<Partial<OAuthResultMessage> | null>) => {
      if (origin === serviceOrigin && source === popup) onResult(data);
    };
    if (channel) channel.onmessage = ({ data }) => onResult(data);
    const onAbort = () => finish(signal.reason);
    // A cross-origin window fires no event when the user closes it, so look. The callback page
    // posts its message and then closes itself; waiting one more look after seeing the popup
    // closed lets a message already on its way arrive first.
    // A consent page that sends Cross-Origin-Opener-Policy cuts the popup from this page: it then
    // reads closed while it is still open. With a return page the result still arrives, so only
    // the timeout ends the wait; without one, the message says what to do either way.
    const poll = setInterval(() => {
      if (popup.closed && closedOnce && !channel) finish(new ForgeError('oauth-closed', ''));
      closedOnce = popup.closed;
    }, 400);
    const timer = setTimeout(() => finish(new ForgeError('oauth-timeout', '')), timeoutMs);
    addEventListener('message', onMessage);
    signal.addEventListener('abort', onAbort);
    if (signal.aborted) return onAbort();
    popup.location.href = url;
  });
}
