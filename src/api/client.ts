import type {
  ChildWorkflow,
  ConnectedIntegration,
  ErrorLogEntry,
  ExecutionLogEntry,
  FieldError,
  HostSettings,
  HostSettingsUpdate,
  InstallRequest,
  InstallResponse,
  LogsQuery,
  OAuthStart,
  ParentWorkflow,
  ProblemDocument,
  SetVariablesResponse,
  User,
  UserWithWorkflows,
  VariableValues,
} from './types.js';

export const API_VERSION_PATH = '/forge/2021-12';

/**
 * Every failure of a call: the service's problem document, or a network failure (`status` 0).
 * `errors` lists field errors of a 400, each with the `path` of the field.
 */
export class ForgeApiError extends Error {
  override readonly name = 'ForgeApiError';
  readonly status: number;
  readonly type: string;
  readonly title: string;
  readonly detail: string;
  readonly errors: FieldError[];
  /** The whole problem document, with any extension members (a 409's `workflowId`). */
  readonly problem: ProblemDocument;

  constructor(problem: ProblemDocument) {
    super(problem.detail || problem.title);
    this.problem = problem;
    this.status = problem.status;
    this.type = problem.type;
    this.title = problem.title;
    this.detail = problem.detail;
    this.errors = problem.errors ?? [];
  }
}

/**
 * The credential for each call: the host's API key (backend only), a user token, or a function
 * that answers one. A function is asked again with `{refresh: true}` after a 401, and the call
 * is retried once with what it answers.
 */
export type CredentialSource =
  | string
  | ((options: { refresh: boolean; signal?: AbortSignal }) => Promise<string> | string);

export interface ForgeClientOptions {
  /** The service origin, e.g. `http://localhost:4010` (the version path is added). */
  baseUrl: string;
  credential: CredentialSource;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
}

export interface CallOptions {
  signal?: AbortSignal;
}

const enc = encodeURIComponent;

/**
 * A typed client for the Integration Workflow Management Service: one method per operation.
 * List operations answer the array inside the service's `{data}` / `{errors}` envelope.
 */
export class ForgeClient {
  readonly baseUrl: string;
  private readonly credential: CredentialSource;
  private readonly fetchImpl: typeof fetch;

  constructor({ baseUrl, credential, fetch: fetchImpl }: ForgeClientOptions) {
    this.baseUrl = baseUrl.replace(/\/+$/, '').replace(new RegExp(`${API_VERSION_PATH}$`), '');
    this.credential = credential;
    this.fetchImpl = fetchImpl ?? ((...args) => globalThis.fetch(...args));
  }

  // Workflows ----------------------------------------------------------------------------

  /** Active parent workflows of the host account, optionally those using one integration. */
  async listWorkflows(query: { integration?: string } = {}, options?: CallOptions): Promise<ParentWorkflow[]> {
    const search = query.integration ? `?integration=${enc(query.integration)}` : '';
    return (await this.request<{ data: ParentWorkflow[] }>('GET', `/workflow${search}`, undefined, options)).data;
  }

  /** One child workflow with its blocks and current variable values (extension). */
  getWorkflow(workflowId: string, options?: CallOptions): Promise<ChildWorkflow> {
    return this.request('GET', `/workflow/${enc(workflowId)}`, undefined, options);
  }

  /** Installs a parent workflow for the token's user (extension); answers the child's id. */
  installWorkflow(parentId: string, body: InstallRequest = {}, options?: CallOptions): Promise<InstallResponse> {
    return this.request('POST', `/workflow/${enc(parentId)}/install`, body, options);
  }

  /** Removes a child workflow (extension). */
  uninstallWorkflow(workflowId: string, options?: CallOptions): Promise<{ success: true }> {
    return this.request('DELETE', `/workflow/${enc(workflowId)}`, undefined, options);
  }

  activateWorkflow(workflowId: string, options?: CallOptions): Promise<{ activated: true }> {
    return this.request('PUT', `/workflow/${enc(workflowId)}/activate`, undefined, options);
  }

  deactivateWorkflow(workflowId: string, options?: CallOptions): Promise<{ activated: false }> {
    return this.request('PUT', `/workflow/${enc(workflowId)}/deactivate`, undefined, options);
  }

  setVariables(
    workflowId: string,
    blockId: string,
    values: VariableValues,
    options?: CallOptions,
  ): Promise<SetVariablesResponse> {
    return this.request('PATCH', `/workflow/${enc(workflowId)}/variables/${enc(blockId)}`, values, options);
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

  getUser(userId: string, options?: CallOptions): Promise<UserWithWorkflows> {
    return this.request('GET', `/user/${enc(userId)}`, undefined, options);
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

  // Host settings (extension; API key) ----------------------------------------------------

  /** Where failed executions are delivered: the error webhook URL and the event bus. */
  getSettings(options?: CallOptions): Promise<HostSettings> {
    return this.request('GET', '/settings', undefined, options);
  }

  /** Changes the fields given (`null` clears one); answers the settings as they now are. */
  updateSettings(update: HostSettingsUpdate, options?: CallOptions): Promise<HostSettings> {
    return this.request('PUT', '/settings', update, options);
  }

  // Credentials (extension; user token) ---------------------------------------------------

  async listCredentials(options?: CallOptions): Promise<ConnectedIntegration[]> {
    return (await this.request<{ data: ConnectedIntegration[] }>('GET', '/credentials', undefined, options)).data;
  }

  /** Stores an integration's required parameters for the token's user. */
  saveCredential(
    integration: string,
    values: Record<string, string>,
    options?: CallOptions,
  ): Promise<ConnectedIntegration> {
    return this.request('POST', `/credentials/${enc(integration)}`, values, options);
  }

  /** A one-time URL that starts the OAuth flow in a popup. */
  startOAuth(integration: string, options?: CallOptions): Promise<OAuthStart> {
    return this.request('POST', `/credentials/${enc(integration)}/oauth`, undefined, options);
  }

  // Transport ----------------------------------------------------------------------------

  async request<T>(method: string, path: string, body?: unknown, { signal }: CallOptions = {}): Promise<T> {
    let response = await this.send(method, path, body, signal, false);
    if (response.status === 401 && typeof this.credential === 'function') {
      response = await this.send(method, path, body, signal, true);
    }
    const text = await response.text();
    const parsed = parseJson(text);
    if (response.ok) return parsed as T;
    throw new ForgeApiError(
      isProblem(parsed)
        ? parsed
        : {
            type: 'about:blank',
            title: response.statusText || 'Error',
            status: response.status,
            detail: `The service answered ${response.status} without a problem document. Check that ${this.baseUrl} is a Forge service.`,
          },
    );
  }

  private async send(method: string, path: string, body: unknown, signal: AbortSignal | undefined, refresh: boolean) {
    const credential =
      typeof this.credential === 'function' ? await this.credential({ refresh, signal }) : this.credential;
    const headers: Record<string, string> = { Authorization: `Bearer ${credential}`, Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    try {
      return await this.fetchImpl(`${this.baseUrl}${API_VERSION_PATH}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (error) {
      if ((error as Error)?.name === 'AbortError' || signal?.aborted) throw error;
      throw new ForgeApiError({
        type: 'about:blank',
        title: 'Network error',
        status: 0,
        detail: `Could not reach the Forge service at ${this.baseUrl} (${(error as Error).message}). Check the address and your connection, then try again.`,
      });
    }
  }
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

function isProblem(value: unknown): value is ProblemDocument {
  return typeof value === 'object' && value !== null && 'status' in value && 'title' in value;
}
