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
 * How long after the page has loaded an element waits for its configuration before saying it is
 * missing. Frameworks set properties after the element connects: React sets them when it
 * hydrates server-rendered markup, which may be well after the element first renders.
 */
const CONFIG_GRACE_MS = 1_000;

/** Settles once the page has loaded and CONFIG_GRACE_MS more have passed; rejects when `signal` aborts. */
function configGrace(signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const aborted = () => {
      clearTimeout(timer);
      window.removeEventListener('load', loaded);
      reject(signal.reason);
    };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const loaded = () => {
      timer = setTimeout(() => {
        signal.removeEventListener('abort', aborted);
        resolve();
      }, CONFIG_GRACE_MS);
    };
    signal.addEventListener('abort', aborted, { once: true });
    if (document.readyState === 'complete') loaded();
    else window.addEventListener('load', loaded, { once: true });
  });
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
    // Not reflected: an element that writes its empty defaults back as attributes differs from
    // the server-rendered markup React hydrates, and nothing reads them back.
    apiBase: { attribute: 'api-base' },
    tokenUrl: { attribute: 'token-url' },
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

  /**
   * `connection()` once the element is configured. Settings still missing are read again after
   * the page has loaded and a grace period passed, and only then are a ConfigError: a framework
   * may set them late. Whoever calls this re-runs when a setting changes (a task argument).
   */
  protected async configuredConnection(signal: AbortSignal): Promise<ReturnType<ForgeElement['connection']>> {
    try {
      return this.connection();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      await configGrace(signal);
      return this.connection();
    }
  }

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
