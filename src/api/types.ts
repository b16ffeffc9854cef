/**
 * The resources of the Integration Workflow Management Service, named and shaped as the
 * service interface defines them. Shared by the typed client and the local service, so the
 * two cannot drift apart.
 */

/** A user-supplied parameter an integration needs (an API key, an account subdomain, ...). */
export interface RequiredParameter {
  name: string;
  displayName: string;
  description: string;
}

export interface Integration {
  /** Integration identifier; also the value of the `integration` filter. */
  name: string;
  displayName: string;
  /** URL of an image. */
  icon: string;
  /** Authentication kind: `oauth2`, or `parameters` when `requiredParameters` are asked for. */
  type: string;
  requiredParameters?: RequiredParameter[];
}

/** A variable's value: a string or a number (the seed's), or a boolean for a `boolean` variable. */
export type VariableValue = string | number | boolean;

/** Extension (issue 26): one fixed choice of a `select` variable. */
export interface VariableOption {
  value: string | number;
  label: string;
}

export interface Variable {
  uuid: string;
  name: string;
  value: VariableValue;
  /** Extension: a sentence shown under the field in the configuration modal. */
  description?: string;
  // Extensions of issue 26 (docs/api.md, "Variables"): what the variable holds, and its rules.
  /** The field's label; the modal makes one from `name` when absent. */
  displayName?: string;
  /** What the value is; without it, a numeric default makes a number and anything else a string or number. */
  type?: 'string' | 'number' | 'boolean' | 'select' | 'text' | 'email' | 'url';
  /** An empty value is refused. */
  required?: boolean;
  /** A regular expression (Unicode mode) the whole text must match, for string-like types. */
  pattern?: string;
  /** What to tell the user when `pattern` does not match. */
  patternMessage?: string;
  /** Bounds of a `number`. */
  min?: number;
  max?: number;
  /** A `select`'s fixed choices. */
  options?: VariableOption[];
  /**
   * A `select` whose choices are read from the user's own app, through
   * `GET /workflow/:workflowId/options`; how they are read stays on the service.
   */
  source?: { integration: string };
}

export interface Block {
  name: string;
  /** uuid4; the same in the parent workflow and in its children. */
  id: string;
  /** Block type identifier (`variables`, `webhook`, `schedule`, `http`, ...). */
  type: string;
  /** Depends on `type`; a `variables` block has `parameters.variables`. */
  parameters: Record<string, unknown> & { variables?: Variable[] };
}

/** A parent workflow (a template of the host account), as `GET /workflow` lists it. */
export interface ParentWorkflow {
  workflowId: string;
  name: string;
  /** Extension: one sentence on what the workflow does. */
  description?: string;
  integrations: Integration[];
  blocks: Block[];
}

/**
 * Extension: an integration as `GET /workflow-summary` lists it, for `<forge-workflow-list>` and
 * `<forge-integration-list>`: the fields of `GET /workflow` (so an app can be connected from its
 * card), and two the catalog may add.
 */
export interface IntegrationSummary extends Integration {
  /** One line on what the app is, when the catalog gives one. */
  description?: string;
  /** The app's kind (`Chat`, `CRM`), when the catalog gives one; `<forge-integration-list>` filters by it. */
  category?: string;
}

/**
 * Extension: a parent workflow as `<forge-workflow-list>` shows it, from `GET /workflow-summary`:
 * its integrations by name, its blocks by id and name (a run's steps are named from them).
 */
export interface WorkflowSummary {
  workflowId: string;
  name: string;
  description?: string;
  /** Names of entries in the answer's `integrations`. */
  integrations: string[];
  blocks: Array<{ id: string; name: string }>;
}

/** Extension: `GET /workflow-summary`'s answer; each integration the workflows use appears once. */
export interface WorkflowSummaries {
  workflows: WorkflowSummary[];
  integrations: IntegrationSummary[];
}

export interface User {
  _id: string;
  email: string;
  fullName: string;
}

export interface ChildWorkflowSummaryBlock {
  icon: string;
  displayName: string;
  /** Block type identifier. */
  name: string;
}

/** A child workflow as it appears in `GET /user/:userId`. */
export interface ChildWorkflowSummary {
  _id: string;
  parentId: string;
  name: string;
  active: boolean;
  blocks: ChildWorkflowSummaryBlock[];
}

export interface UserWithWorkflows extends User {
  workflows: ChildWorkflowSummary[];
}

/** Extension: one child workflow in full, from `GET /workflow/:workflowId`. */
export interface ChildWorkflow {
  _id: string;
  parentId: string;
  userId: string;
  name: string;
  description?: string;
  active: boolean;
  integrations: Integration[];
  /** The blocks with this user's current variable values. */
  blocks: Block[];
  /**
   * Present when the workflow starts on a webhook and the API key reads it: POST here to run
   * it. It is the sender's only credential, so a user token never sees it.
   */
  webhookUrl?: string;
  createdAt: string;
  updatedAt: string;
}

export interface ResultItem {
  json: Record<string, unknown>;
  id: string;
}

export interface BlockResult {
  blockId: string;
  startedAt: string;
  stoppedAt: string;
  data: ResultItem[][];
}

export interface ExecutionLogEntry {
  executionId: string;
  startedAt: string;
  stoppedAt: string;
  finished: boolean;
  results: BlockResult[];
}

export interface ErrorLogEntry {
  _id: string;
  workflowId: string;
  executionId: string;
  blockId: string;
  blockType: string;
  error: string;
  /** Extension: what kind of problem the run met, so a page can offer the fix (see `ErrorKind`). */
  kind: ErrorKind;
  createdAt: string;
  updatedAt: string;
  __v: number;
}

/**
 * Extension of error log entries, set when the error is recorded: `connection` the app rejected
 * the user's credential (401/403), `settings` a setting of the user's is missing or invalid,
 * `app` any other failure of the app's API, `internal` everything else.
 */
export type ErrorKind = 'connection' | 'settings' | 'app' | 'internal';

/** The run health of one of the user's child workflows (extension: `GET /workflow-health`). */
export interface WorkflowHealth {
  /** The child workflow. */
  workflowId: string;
  parentId: string;
  active: boolean;
  /** The latest execution, or null when the workflow never ran. */
  lastRun: { executionId: string; startedAt: string; stoppedAt: string; finished: boolean } | null;
  /** How many executions failed in the 24 hours before the answer. */
  failedLast24h: number;
  /** Why the latest execution failed; null when it did not (or there is none). */
  failure: {
    kind: ErrorKind;
    /** The error log entry's message, for technical details. */
    error: string;
    blockId: string;
    /** The integration of the block that failed (its `name`), when it has one. */
    integration: string | null;
    createdAt: string;
    /**
     * Extension, on a `connection` failure only: when the user connected the integration again
     * after it. There is nothing to reconnect now; the next run tells.
     */
    reconnectedAt?: string;
  } | null;
  /** For a workflow on a schedule that is switched on: when it runs next. */
  nextRunAt: string | null;
}

/** The values to set on one variable block: variable name → value. */
export type VariableValues = Record<string, VariableValue>;

export interface SetVariablesResponse {
  blockId: string;
  variables: Array<Pick<Variable, 'uuid' | 'name' | 'value'>>;
}

export interface InstallRequest {
  /** Initial values per variable block: block id → variable name → value. */
  variables?: Record<string, VariableValues>;
}

export interface InstallResponse {
  workflowId: string;
  active: true;
}

export interface LogsQuery {
  /** 1-based; default 1. */
  page?: number;
  /** 1..30; default 10. */
  limit?: number;
  /** Default `desc` (newest first). */
  order?: 'asc' | 'desc';
}

/** Extension: which integrations the token's user has connected. Never the secrets. */
export interface ConnectedIntegration {
  integration: string;
  connectedAt: string;
}

/** Extension: one of the user's connections, as `GET /credentials` and `GET /setup` answer it; never its secret. */
export interface UserConnection extends ConnectedIntegration {
  /** `broken` once the app refused the grant (revoked or expired); connecting again clears it at once. */
  status: 'connected' | 'broken';
  /** A display label the app gave (a workspace name, an e-mail), when it gave one; never a secret. */
  account?: string;
}

/** Extension: what `DELETE /credentials/:integration` did. */
export interface Disconnected {
  integration: string;
  /** The user's child workflows that used the integration and were on: now switched off. */
  switchedOff: string[];
  /**
   * `revoked`: the app confirmed it revoked the grant. `not-supported`: the app has no revocation
   * endpoint (or the connection is not OAuth). `failed`: the app could not be reached or refused;
   * the service deleted its credential all the same, so the user may remove the access in the app.
   */
  revocation: 'revoked' | 'not-supported' | 'failed';
}

/**
 * Extension: everything the configuration modal needs to open, from `GET /setup` — the parents
 * on offer, the token user's copies of exactly those, and the user's connected integrations.
 */
/** Extension (issue 26): one page of a select variable's choices, read from the user's own app. */
export interface OptionsPage {
  options: VariableOption[];
  /** Give it as `cursor` for the next page; absent on the last. */
  next?: string;
}

/** What `GET /workflow/:workflowId/options` asks for. */
export interface OptionsQuery {
  /** The variable block and the variable (its `name`) whose choices are wanted. */
  blockId: string;
  variable: string;
  /** Words the choices' labels contain. */
  search?: string;
  /** A page's `next`, for the page after it. */
  cursor?: string;
}

export interface Setup {
  /** The one parent asked for, or the active parents using the integration (none for an unknown one). */
  workflows: ParentWorkflow[];
  /** The user's child workflows of those parents, in full as `GET /workflow/:workflowId` answers them. */
  installed: ChildWorkflow[];
  /** The user's connections, as `GET /credentials` answers them. */
  credentials: UserConnection[];
}

/** What `GET /setup` is asked about: one parent workflow, or every workflow using an integration. */
export type SetupQuery = { workflowId: string; integration?: never } | { integration: string; workflowId?: never };

export interface OAuthStart {
  /** One-time, short-lived URL to open in the popup. Carries no credential. */
  url: string;
  expiresAt: string;
}

/**
 * The message the service's OAuth callback page posts to the window that opened it, on that
 * window's exact origin. `authorized` carries `grant`, a one-time value the element confirms
 * with the user's token (`POST /credentials/:integration/oauth/confirm`); nothing is connected
 * before that.
 */
export interface OAuthResultMessage {
  type: 'forge-oauth';
  integration: string;
  status: 'authorized' | 'denied' | 'error';
  grant?: string;
  message?: string;
}

/** Extension: host settings for delivering failed executions. */
export interface HostSettings {
  errorWebhookUrl: string | null;
  /**
   * The secret that signs every error delivery (`Forge-Signature: t=<unix seconds>,v1=<hex
   * HMAC-SHA256 of "<t>.<body>">`); see docs/executions.md for how to verify it.
   */
  errorWebhookSecret: string;
  eventBus: {
    enabled: boolean;
    busName: string | null;
    region: string | null;
    endpoint: string | null;
    /** Whether access keys are stored; the keys themselves are never returned. */
    hasAccessKeys: boolean;
  };
  /** Error log entries waiting to be delivered on each channel, and why the last attempt failed. */
  deliveries: {
    webhook: DeliveryBacklog;
    eventBus: DeliveryBacklog;
  };
}

export interface DeliveryBacklog {
  pending: number;
  /** Entries whose last allowed attempt failed: `GET /deadLetters` lists them, `POST /deadLetters/resend` sends them again. */
  deadLetters: number;
  lastError: string | null;
}

export interface HostSettingsUpdate {
  errorWebhookUrl?: string | null;
  eventBus?: {
    enabled?: boolean;
    busName?: string | null;
    region?: string | null;
    endpoint?: string | null;
    /** Give both keys together; both `null` removes them. */
    accessKeyId?: string | null;
    secretAccessKey?: string | null;
  };
}

/** An RFC 9457 problem document, as every error response of the service is. */
export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

export interface FieldError {
  /** Where in the request: `body.email`, `query.limit`, `variables.<blockId>.<name>`, ... */
  path: string;
  message: string;
}
