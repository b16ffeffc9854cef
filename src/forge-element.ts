import { LitElement, type PropertyDeclarations } from 'lit';
import { ForgeEmbedClient } from './api/embed-client.js';
import { ForgeError } from './events.js';
import { type TokenProvider, TokenSource, tokenUrlProvider } from './token/token-source.js';

/**
 * Elements configured with the same token endpoint (or the same provider function) share one
 * TokenSource, so a list and the modal it opens fetch one token, not two.
 */
const sourcesByUrl = new Map<string, TokenSource>();
const sourcesByProvider = new WeakMap<TokenProvider, TokenSource>();

/** Thrown when the element is not configured well enough to talk to the service. */
export class ConfigError extends ForgeError {
  override readonly name = 'ConfigError';
  constructor(message: string) {
    super('config', message);
  }
}

/**
 * What both elements share: where the service is and how to get a user token. The API key
 * never appears here; the host's backend turns its session into a user token.
 *
 * Reactive properties are declared in `static properties` rather than with decorators: the
 * decorator helpers cost the single-file CDN bundle more than the declarations themselves.
 */
export class ForgeElement extends LitElement {
  static override properties: PropertyDeclarations = {
    apiBase: { attribute: 'api-base', reflect: true },
    tokenUrl: { attribute: 'token-url', reflect: true },
    tokenProvider: { attribute: false },
  };

  /** Origin of the Forge service, e.g. `https://forge.example.com`. */
  apiBase = '';

  /** URL of the host's token endpoint; it answers `{"token": "<user token>"}` for the signed-in user. */
  tokenUrl = '';

  /** Instead of `token-url`: a function that answers a fresh user token. */
  tokenProvider?: TokenProvider;

  #client?: ForgeEmbedClient;
  #clientFor: unknown[] = [];

  /** The token source and API client for the current configuration; a ConfigError when incomplete. */
  protected connection(): { client: ForgeEmbedClient; tokens: TokenSource } {
    const { apiBase, tokenUrl, tokenProvider, localName } = this;
    if (!apiBase) throw new ConfigError(`Set api-base on <${localName}> to the Forge service's origin.`);
    let tokens = tokenProvider ? sourcesByProvider.get(tokenProvider) : sourcesByUrl.get(tokenUrl);
    if (!tokens) {
      if (tokenProvider) sourcesByProvider.set(tokenProvider, (tokens = new TokenSource(tokenProvider)));
      else if (tokenUrl) sourcesByUrl.set(tokenUrl, (tokens = new TokenSource(tokenUrlProvider(tokenUrl))));
      else
        throw new ConfigError(
          `Set token-url (or the tokenProvider property) on <${localName}> so it can get a user token.`,
        );
    }
    const source = tokens;
    if (this.#clientFor[0] !== apiBase || this.#clientFor[1] !== source) {
      this.#clientFor = [apiBase, source];
      this.#client = new ForgeEmbedClient({
        baseUrl: apiBase,
        // A 401 asks for a new token once and the call is retried with it.
        credential: async ({ refresh }) => (await (refresh ? source.fresh() : source.current())).token,
      });
    }
    return { client: this.#client!, tokens: source };
  }
}
