import { LitElement, type PropertyDeclarations } from 'lit';
import type { TokenProvider } from '../token/token-source.js';

/**
 * The configuration both elements take: where the service is and how to get a user token. The
 * API key never appears here; the host's backend turns its session into a user token. Each
 * element hands these to its `Connection` (`internal/connection.ts`), which reads them when it
 * first needs them.
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
}
