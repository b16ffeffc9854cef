import type {
  ChildWorkflow,
  ConnectedIntegration,
  Disconnected,
  FieldError,
  InstallRequest,
  InstallResponse,
  OAuthStart,
  ParentWorkflow,
  ProblemDocument,
  Setup,
  SetupQuery,
  SetVariablesResponse,
  UserConnection,
  UserWithWorkflows,
  VariableValues,
  WorkflowHealth,
  WorkflowSummaries,
} from './types.js';

export const API_VERSION_PATH = '/forge/2021-12';

/** The `title` of the error a browser's request fails with when the service does not allow the page's origin. */
export const ORIGIN_NOT_ALLOWED = 'Origin not allowed';

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

/** The catalog reads' filter: only the workflows that use this integration. */
export interface CatalogQuery {
  integration?: string;
}

const search = ({ integration }: CatalogQuery) => (integration ? `?integration=${enc(integration)}` : '');

/**
 * The operations of the service's embed surface, which take a user token: what the elements
 * call from a browser. `ForgeClient` (`forge-embed/client`) adds the API-key operations of a
 * host's backend. List operations answer the array inside the service's `{data}` envelope.
 */
export class ForgeEmbedClient {
  readonly baseUrl: string;
  readonly #credential: CredentialSource;
  readonly #fetch: typeof fetch;

  constructor({ baseUrl, credential, fetch: fetchImpl }: ForgeClientOptions) {
    this.baseUrl = baseUrl.replace(/\/+$/, '').replace(new RegExp(`${API_VERSION_PATH}$`), '');
    this.#credential = credential;
    this.#fetch = fetchImpl ?? ((...args) => globalThis.fetch(...args));
  }

  /** Active parent workflows of the host account, optionally those using one integration. */
  async listWorkflows(query: CatalogQuery = {}, options?: CallOptions): Promise<ParentWorkflow[]> {
    return (await this.request<{ data: ParentWorkflow[] }>('GET', `/workflow${search(query)}`, undefined, options))
      .data;
  }

  /**
   * The active parent workflows as `<forge-workflow-list>` shows them (extension): what a row
   * shows and each block's id and name, with each integration once. A fraction of
   * `listWorkflows`' bytes for a long catalog.
   */
  listWorkflowSummaries(query: CatalogQuery = {}, options?: CallOptions): Promise<WorkflowSummaries> {
    return this.request('GET', `/workflow-summary${search(query)}`, undefined, options);
  }

  /** With a user token, only the token's own user. */
  getUser(userId: string, options?: CallOptions): Promise<UserWithWorkflows> {
    return this.request('GET', `/user/${enc(userId)}`, undefined, options);
  }

  /** One child workflow with its blocks and current variable values (extension). */
  getWorkflow(workflowId: string, options?: CallOptions): Promise<ChildWorkflow> {
    return this.request('GET', `/workflow/${enc(workflowId)}`, undefined, options);
  }

  /**
   * Everything the configuration modal opens with, in one request (extension): the parent asked
   * for or the integration's active parents, the user's copies of exactly those (in full), and the
   * user's connected integrations. An unknown parent is a 404; an unknown integration has none.
   */
  getSetup(query: SetupQuery, options?: CallOptions): Promise<Setup> {
    const search =
      query.workflowId !== undefined ? `workflowId=${enc(query.workflowId)}` : `integration=${enc(query.integration)}`;
    return this.request('GET', `/setup?${search}`, undefined, options);
  }

  /**
   * The run health of each of the token user's child workflows, with its id, parent and switch
   * (extension): what `<forge-workflow-list>` opens and refreshes with.
   */
  async getWorkflowHealth(options?: CallOptions): Promise<WorkflowHealth[]> {
    return (await this.request<{ workflows: WorkflowHealth[] }>('GET', '/workflow-health', undefined, options))
      .workflows;
  }

  /** Installs a parent workflow for the token's user (extension); answers the child's id. */
  installWorkflow(parentId: string, body: InstallRequest = {}, options?: CallOptions): Promise<InstallResponse> {
    return this.request('POST', `/workflow/${enc(parentId)}/install`, body, options);
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

  /** The token user's connections: when, whether each still works, as which account (extension; never secrets). */
  async listCredentials(options?: CallOptions): Promise<UserConnection[]> {
    return (await this.request<{ data: UserConnection[] }>('GET', '/credentials', undefined, options)).data;
  }

  /**
   * Disconnects one of the token user's apps (extension): the app is asked to revoke the grant,
   * the credential is deleted and the user's workflows that use it are switched off.
   */
  disconnect(integration: string, options?: CallOptions): Promise<Disconnected> {
    return this.request('DELETE', `/credentials/${enc(integration)}`, undefined, options);
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

  /**
   * Confirms the grant the OAuth popup posted back, which makes it the user's credential: a
   * flow someone else finished never becomes one without this call from the starting page.
   */
  confirmOAuth(integration: string, grant: string, options?: CallOptions): Promise<ConnectedIntegration> {
    return this.request('POST', `/credentials/${enc(integration)}/oauth/confirm`, { grant }, options);
  }

  async request<T>(method: string, path: string, body?: unknown, { signal }: CallOptions = {}): Promise<T> {
    let response = await this.#send(method, path, body, signal, false);
    if (response.status === 401 && typeof this.#credential === 'function') {
      response = await this.#send(method, path, body, signal, true);
    }
    // A success whose body broke off is not a success: the call's outcome is unknown. Chromium
    // and Firefox fail the read; WebKit answers the part that arrived, which then does not parse.
    const brokenOff = () =>
      new ForgeApiError({
        type: 'about:blank',
        title: 'Network error',
        status: 0,
        detail: `The Forge service at ${this.baseUrl} answered ${response.status}, but the whole answer never arrived (the connection broke). Check your connection, then try again.`,
      });
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      if (signal?.aborted) throw error;
      throw brokenOff();
    }
    let parsed: Partial<ProblemDocument> | undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // A failure's non-JSON body gets the problem below; a success's means it did not arrive whole.
      if (response.ok) throw brokenOff();
    }
    if (response.ok) return parsed as T;
    throw new ForgeApiError(
      parsed?.status && parsed.title
        ? (parsed as ProblemDocument)
        : {
            type: 'about:blank',
            title: response.statusText || 'Error',
            status: response.status,
            detail: `The service answered ${response.status} without a problem document. Check that ${this.baseUrl} is a Forge service.`,
          },
    );
  }

  async #send(method: string, path: string, body: unknown, signal: AbortSignal | undefined, refresh: boolean) {
    const credential = this.#credential;
    const headers: Record<string, string> = {
      Authorization: `Bearer ${typeof credential === 'function' ? await credential({ refresh, signal }) : credential}`,
      Accept: 'application/json',
    };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    try {
      return await this.#fetch(`${this.baseUrl}${API_VERSION_PATH}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (error) {
      // Aborted by the caller, or by whatever the given fetch ties requests to: not a network error.
      if (signal?.aborted || (error as Error).name === 'AbortError') throw error;
      // In a browser, a service that refuses the page's origin (CORS) fails the request just as a
      // network failure does: origin-check.ts tells them apart, in a module of its own that only a
      // failed request loads.
      const refusal =
        globalThis.location &&
        (await import('./origin-check.js').then(
          ({ originRefusal }) => originRefusal(`${this.baseUrl}${API_VERSION_PATH}`, this.#fetch, signal),
          () => undefined,
        ));
      throw new ForgeApiError({
        type: 'about:blank',
        title: refusal ? ORIGIN_NOT_ALLOWED : 'Network error',
        status: 0,
        detail:
          refusal ||
          `Could not reach the Forge service at ${this.baseUrl} (${(error as Error).message}). Check the address and your connection, then try again.`,
      });
    }
  }
}
