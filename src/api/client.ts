import { type CallOptions, ForgeEmbedClient } from './embed-client.js';
import type {
  Disconnected,
  ErrorLogEntry,
  ExecutionLogEntry,
  HostSettings,
  HostSettingsUpdate,
  LogsQuery,
  User,
  UserConnection,
} from './types.js';

export {
  API_VERSION_PATH,
  type CallOptions,
  type CredentialSource,
  ForgeApiError,
  type ForgeClientOptions,
  ForgeEmbedClient,
} from './embed-client.js';

const enc = encodeURIComponent;

/**
 * A typed client for the Integration Workflow Management Service: one method per operation.
 * The embed surface (user token) comes from `ForgeEmbedClient`; this adds the operations of a
 * host's backend, most of which take the API key. List operations answer the array inside the
 * service's `{data}` / `{errors}` envelope.
 */
export class ForgeClient extends ForgeEmbedClient {
  // Workflows ----------------------------------------------------------------------------

  /** Removes a child workflow (extension; a user token or the API key). */
  uninstallWorkflow(workflowId: string, options?: CallOptions): Promise<{ success: true }> {
    return this.request('DELETE', `/workflow/${enc(workflowId)}`, undefined, options);
  }

  /** A new webhook URL for a child workflow (extension; API key); the old one stops working. */
  rotateWebhook(workflowId: string, options?: CallOptions): Promise<{ webhookUrl: string }> {
    return this.request('POST', `/workflow/${enc(workflowId)}/rotateWebhook`, undefined, options);
  }

  async getWorkflowLogs(
    workflowId: string,
    query: LogsQuery = {},
    options?: CallOptions,
  ): Promise<ExecutionLogEntry[]> {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value !== undefined) search.set(key, String(value));
    const qs = search.size ? `?${search}` : '';
    return (
      await this.request<{ data: ExecutionLogEntry[] }>(
        'GET',
        `/workflow/${enc(workflowId)}/logs${qs}`,
        undefined,
        options,
      )
    ).data;
  }

  async getWorkflowErrors(workflowId: string, options?: CallOptions): Promise<ErrorLogEntry[]> {
    return (
      await this.request<{ errors: ErrorLogEntry[] }>('GET', `/workflow/${enc(workflowId)}/errors`, undefined, options)
    ).errors;
  }

  // Users --------------------------------------------------------------------------------

  createUser(body: { name: string; email: string }, options?: CallOptions): Promise<{ userId: string }> {
    return this.request('POST', '/user', body, options);
  }

  async listUsers(options?: CallOptions): Promise<User[]> {
    return (await this.request<{ data: User[] }>('GET', '/user', undefined, options)).data;
  }

  updateUser(userId: string, body: { email: string; fullName: string }, options?: CallOptions): Promise<User> {
    return this.request('PATCH', `/user/${enc(userId)}`, body, options);
  }

  deleteUser(userId: string, options?: CallOptions): Promise<{ success: true }> {
    return this.request('DELETE', `/user/${enc(userId)}`, undefined, options);
  }

  /** A user token (a JWT of at most 30 minutes); `expiresIn` (seconds) asks for a shorter one. */
  getUserToken(userId: string, query: { expiresIn?: number } = {}, options?: CallOptions): Promise<{ token: string }> {
    const qs = query.expiresIn ? `?expiresIn=${query.expiresIn}` : '';
    return this.request('GET', `/user/${enc(userId)}/token${qs}`, undefined, options);
  }

  disableUserWorkflows(userId: string, options?: CallOptions): Promise<{ message: string }> {
    return this.request('PATCH', `/user/${enc(userId)}/disableWorkflows`, undefined, options);
  }

  /** A user's connections, as `listCredentials` answers them for the user (extension). */
  async listUserCredentials(userId: string, options?: CallOptions): Promise<UserConnection[]> {
    return (
      await this.request<{ data: UserConnection[] }>('GET', `/user/${enc(userId)}/credentials`, undefined, options)
    ).data;
  }

  /** Disconnects one of a user's apps, as `disconnect` does for the token's user (extension). */
  disconnectUser(userId: string, integration: string, options?: CallOptions): Promise<Disconnected> {
    return this.request('DELETE', `/user/${enc(userId)}/credentials/${enc(integration)}`, undefined, options);
  }

  // Host settings (extension; API key) ----------------------------------------------------

  /** Where failed executions are delivered: the error webhook URL and the event bus. */
  getSettings(options?: CallOptions): Promise<HostSettings> {
    return this.request('GET', '/settings', undefined, options);
  }

  /** Changes the fields given (`null` clears one); answers the settings as they now are. */
  updateSettings(update: HostSettingsUpdate, options?: CallOptions): Promise<HostSettings> {
    return this.request('PUT', '/settings', update, options);
  }
}
