import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { ForgeEmbedClient } from '../api/embed-client.js';
import { ConfigError } from '../errors.js';
import { sharedTokenSource, type TokenProvider, type TokenSource, type UserToken } from '../token/token-source.js';

/** What an element tells its connection: where the service is and how to get a user token. */
export interface ConnectionHost extends ReactiveControllerHost, HTMLElement {
  apiBase: string;
  tokenUrl: string;
  tokenProvider?: TokenProvider | undefined;
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
 * An element's connection to the Forge service: the only path from `token-url` (or
 * `tokenProvider`) to the `Authorization` header. It
 * - reads the configuration when it is first used, never at connect (frameworks set
 *   properties after they attach an element), and again whenever it changes;
 * - keeps the user token fresh while the element is connected, once a token was asked for;
 * - gives every request one `AbortSignal` per connected lifetime: once the element is removed,
 *   nothing it started still talks to the service or touches what it shows.
 */
export class Connection implements ReactiveController {
  readonly #host: ConnectionHost;
  #lifetime = new AbortController();
  #tokens?: TokenSource | undefined;
  #client?: ForgeEmbedClient;
  #clientFor: unknown[] = [];
  readonly #appsChanged: (() => void) | undefined;

  /**
   * `appsChanged`, when given, runs whenever the user connects or disconnects an app anywhere on
   * the page (`forge-connect` or `forge-disconnect` reaches the document) while the element is
   * connected: every element that shows connections updates at once, whichever one the user used.
   * Heard in the capture phase, so a page that stops the event's propagation does not hide it.
   */
  constructor(host: ConnectionHost, appsChanged?: () => void) {
    this.#host = host;
    this.#appsChanged = appsChanged;
    host.addController(this);
  }

  /** Aborted when the element is removed from the page; a new one once it is back. */
  get signal(): AbortSignal {
    return this.#lifetime.signal;
  }

  hostConnected(): void {
    if (this.#lifetime.signal.aborted) this.#lifetime = new AbortController();
    this.#tokens?.keepFresh(this, true);
    // Removed with the lifetime's end, like every request the element started.
    const changed = this.#appsChanged;
    for (const name of ['forge-connect', 'forge-disconnect']) {
      if (changed) document.addEventListener(name, changed, { capture: true, signal: this.signal });
    }
  }

  hostDisconnected(): void {
    this.#lifetime.abort(new DOMException(`<${this.#host.localName}> was removed from the page.`, 'AbortError'));
    this.#tokens?.keepFresh(this, false);
  }

  /** The embed client for the configuration as it is now; a ConfigError when it is incomplete. */
  get client(): ForgeEmbedClient {
    const { apiBase, localName } = this.#host;
    if (!apiBase) throw new ConfigError(`Set api-base on <${localName}> to the Forge service's origin.`);
    const tokens = this.#tokenSource();
    if (this.#clientFor[0] !== apiBase || this.#clientFor[1] !== tokens) {
      this.#clientFor = [apiBase, tokens];
      this.#client = new ForgeEmbedClient({
        baseUrl: apiBase,
        // A 401 asks for a new token once and the call is retried with it.
        credential: async ({ refresh }) => (await (refresh ? tokens.fresh() : tokens.current())).token,
        // Every request ends with the element's lifetime, whatever signal its caller passed.
        fetch: (input, init) =>
          fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, this.signal]) : this.signal }),
      });
    }
    return this.#client!;
  }

  /**
   * The client once the element is configured. Settings still missing are read again after the
   * page has loaded and a grace period passed, and only then are a ConfigError: a framework may
   * set them late. Whoever calls this re-runs when a setting changes (a task argument).
   */
  async ready(signal: AbortSignal): Promise<ForgeEmbedClient> {
    try {
      return this.client;
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      await configGrace(signal);
      return this.client;
    }
  }

  /** The user token in hand, or a new one when it is due for refresh. */
  token(): Promise<UserToken> {
    return this.#tokenSource().current();
  }

  /** The user token in hand while it is not due for refresh; nothing is fetched. */
  tokenInHand(): UserToken | undefined {
    return this.#tokenSource().inHand;
  }

  /** A token fetched now (the service wants one per display of the modal). */
  freshToken(): Promise<UserToken> {
    return this.#tokenSource().fresh();
  }

  #tokenSource(): TokenSource {
    const { tokenProvider, tokenUrl, localName, isConnected } = this.#host;
    const tokens = sharedTokenSource(tokenProvider, tokenUrl);
    if (!tokens) {
      throw new ConfigError(
        `Set token-url (or the tokenProvider property) on <${localName}> so it can get a user token.`,
      );
    }
    if (tokens !== this.#tokens) {
      this.#tokens?.keepFresh(this, false);
      this.#tokens = tokens;
      tokens.keepFresh(this, isConnected);
    }
    return tokens;
  }
}
