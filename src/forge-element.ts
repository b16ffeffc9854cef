import { LitElement } from 'lit';
import { property } from 'lit/decorators.js';
import { ForgeClient } from './api/client.js';
import { type TokenProvider, TokenSource, tokenUrlProvider } from './token/token-source.js';

/**
 * Elements configured with the same token endpoint (or the same provider function) share one
 * TokenSource, so a list and the modal it opens fetch one token, not two.
 */
const sourcesByUrl = new Map<string, TokenSource>();
const sourcesByProvider = new WeakMap<TokenProvider, TokenSource>();

function sourceFor(tokenUrl: string, provider: TokenProvider | undefined): TokenSource | undefined {
  if (provider) {
    let source = sourcesByProvider.get(provider);
    if (!source) sourcesByProvider.set(provider, (source = new TokenSource(provider)));
    return source;
  }
  if (!tokenUrl) return undefined;
  let source = sourcesByUrl.get(tokenUrl);
  if (!source) sourcesByUrl.set(tokenUrl, (source = new TokenSource(tokenUrlProvider(tokenUrl))));
  return source;
}

/** Thrown when the element is not configured well enough to talk to the service. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * What both elements share: where the service is and how to get a user token. The API key
 * never appears here; the host's backend turns its session into a user token.
 */
export class ForgeElement extends LitElement {
  /** Origin of the Forge service, e.g. `https://forge.example.com`. */
  @property({ attribute: 'api-base', reflect: true }) apiBase = '';

  /** URL of the host's token endpoint; it answers `{"token": "<user token>"}` for the signed-in user. */
  @property({ attribute: 'token-url', reflect: true }) tokenUrl = '';

  /** Instead of `token-url`: a function that answers a fresh user token. */
  @property({ attribute: false }) tokenProvider?: TokenProvider;

  private clientCache?: { key: unknown[]; client: ForgeClient; source: TokenSource };

  /** The token source and API client for the current configuration; a ConfigError when incomplete. */
  protected connection(): { client: ForgeClient; tokens: TokenSource } {
    if (!this.apiBase) throw new ConfigError(`Set api-base on <${this.localName}> to the Forge service's origin.`);
    const source = sourceFor(this.tokenUrl, this.tokenProvider);
    if (!source) {
      throw new ConfigError(
        `Set token-url (or the tokenProvider property) on <${this.localName}> so it can get a user token.`,
      );
    }
    const key = [this.apiBase, source];
    if (!this.clientCache || this.clientCache.key.some((k, i) => k !== key[i])) {
      const client = new ForgeClient({
        baseUrl: this.apiBase,
        // A 401 asks for a new token once and the call is retried with it.
        credential: async ({ refresh }) => (await (refresh ? source.fresh() : source.current())).token,
      });
      this.clientCache = { key, client, source };
    }
    return { client: this.clientCache.client, tokens: source };
  }
}
