/**
 * `forge-embed/host`: what a host app's backend needs to serve the elements a user token. No
 * dependencies and no Node-only imports at run time, so the Fetch-style handler also runs in
 * edge runtimes, Deno and Bun.
 */

export { type NodeContext, type NodeHandler, toNodeHandler } from './node.js';
export { createOAuthReturnHandler, OAUTH_RETURN_CHANNEL, oauthReturnPage } from './oauth-return.js';
export { createTokenHandler, type TokenHandler, type TokenHandlerOptions } from './token-handler.js';
