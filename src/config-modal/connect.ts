import type { ForgeEmbedClient } from '../api/embed-client.js';
import type { Integration, OAuthStart } from '../api/types.js';
import { ForgeError } from '../errors.js';
import { waitForOAuth } from './oauth-popup.js';

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
 * Answers the integrations the service now holds a credential for: it decides what is
 * connected, so that is read back rather than assumed.
 * Rejects with the service's error or a ForgeError (`oauth-*`, `connect-failed`).
 */
export async function connectAccount(
  client: ForgeEmbedClient,
  { integration: { name }, parameters, popup }: ConnectRequest,
  { oauthTimeout, oauthReturnUrl, signal }: { oauthTimeout: number; oauthReturnUrl?: string; signal: AbortSignal },
): Promise<Set<string>> {
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
  return new Set((await client.listCredentials({ signal })).map((c) => c.integration));
}
