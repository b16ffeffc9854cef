export {
  API_VERSION_PATH,
  type CallOptions,
  type CredentialSource,
  ForgeApiError,
  ForgeClient,
  type ForgeClientOptions,
  ForgeEmbedClient,
} from './client.js';
export type * from './types.js';
