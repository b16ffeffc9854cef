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
}
