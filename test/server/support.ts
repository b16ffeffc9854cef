/**
 * Shared helpers of the service's node tests: a real service on a free port (in-memory SQLite
 * unless a test names a file), requests over real HTTP, fixtures made through the API (users,
 * tokens, installed workflows) and the assertions every file repeats (problem documents, exact
 * key sets, timestamps).
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import { type RunningService, type ServiceOptions, startService } from '../../server/app.js';
import { TOKEN_AUDIENCE, TOKEN_ISSUER } from '../../server/auth.js';
import { DEMO_CATALOG } from '../../server/paths.js';
import type { ExecutionLogEntry, IntegrationSummary, Variable } from '../../src/api/types.js';
import { testDatabase } from './backend.js';
import { OpenApiCheck } from './openapi-check.js';

export const API = '/forge/2021-12';

/** Origins the test service lets the embed surface answer (CORS) and start OAuth from. */
export const APP_ORIGIN = 'http://app.example.test';
export const ADMIN_ORIGIN = 'http://admin.example.test';
/** An origin the test service does not allow. */
export const FOREIGN_ORIGIN = 'http://elsewhere.example.test';

/** ISO 8601, UTC, millisecond precision: the seed's timestamp format. */
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

// The demo catalog as its author wrote it; expected response shapes are derived from it ----

export interface DemoBlock {
  name: string;
  id: string;
  type: string;
  integration?: string;
  parameters: Record<string, unknown> & { variables?: Variable[] };
}

export interface DemoWorkflow {
  workflowId: string;
  name: string;
  description?: string;
  active?: boolean;
  integrations: string[];
  blocks: DemoBlock[];
}

export const demoCatalog = JSON.parse(readFileSync(DEMO_CATALOG, 'utf8')) as {
  integrations: IntegrationSummary[];
  workflows: DemoWorkflow[];
};

/**
 * A block's parameters as the service lists them: a variable's `source` only by its integration
 * (how the choices are read stays on the service).
 */
export function listedParameters(parameters: DemoBlock['parameters']): DemoBlock['parameters'] {
  if (!parameters.variables) return parameters;
  return {
    ...parameters,
    variables: parameters.variables.map((variable) =>
      variable.source ? { ...variable, source: { integration: variable.source.integration } } : variable,
    ),
  };
}

export const integrationNamed = (name: string): IntegrationSummary => {
  const found = demoCatalog.integrations.find((i) => i.name === name);
  assert.ok(found, `the demo catalog has no integration ${name}`);
  return found;
};

/**
 * A parent workflow whose variable block holds both a text and a number variable, the case
 * most rules are about ("numbers stay numbers").
 */
export const sample = (() => {
  for (const workflow of demoCatalog.workflows) {
    for (const block of workflow.blocks) {
      const variables = block.type === 'variables' ? (block.parameters.variables ?? []) : [];
      const text = variables.find((v) => typeof v.value === 'string');
      const number = variables.find((v) => typeof v.value === 'number');
      const other = workflow.blocks.find((b) => b.type !== 'variables');
      if (text && number && other) {
        return { parent: workflow, variablesBlock: block, text, number, otherBlock: other };
      }
    }
  }
  throw new Error('The demo catalog has no workflow with a text and a number variable.');
})();

/** Another parent of the catalog, for users with more than one workflow. */
export const otherParent = demoCatalog.workflows.find((w) => w.workflowId !== sample.parent.workflowId)!;

/** An integration of the sample parent that some other parent does not use: a filter that keeps some and drops some. */
export const sampleIntegration = sample.parent.integrations.find((name) =>
  demoCatalog.workflows.some((w) => !w.integrations.includes(name)),
)!;

// Requests -------------------------------------------------------------------------------

export interface Answer {
  status: number;
  headers: Headers;
  /** The parsed body when the answer is JSON, else undefined. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read any JSON the service answers, and assert its shape themselves.
  body: any;
  text: string;
}

export interface RequestOptions {
  /** API key or user token, sent as `Authorization: Bearer …`. */
  credential?: string;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as is; give its Content-Type in `headers`. */
  body?: BodyInit;
  headers?: Record<string, string>;
}

/** An id in the service's format that names nothing. */
export const unknownId = () => randomBytes(12).toString('hex');

export class TestService {
  private users = 0;

  private constructor(
    readonly service: RunningService,
    /** Every answer `request` sees is checked against the service's OpenAPI document. */
    readonly openApi: OpenApiCheck,
    private readonly knownApiKey?: string,
    private readonly dropDatabase?: () => Promise<void>,
  ) {}

  /**
   * `knownApiKey`: the key of a database whose key was generated on an earlier start (the
   * service keeps only its hash, so it cannot tell it again).
   */
  static async start(options: ServiceOptions = {}, knownApiKey?: string): Promise<TestService> {
    const { db, drop } = await testDatabase(options.db);
    const service = await startService({
      port: 0,
      allowedOrigins: [APP_ORIGIN, ADMIN_ORIGIN],
      // Tests run workflows themselves; a minute timer would only add noise.
      scheduler: false,
      ...options,
      db,
    });
    return new TestService(service, await OpenApiCheck.load(service.url), knownApiKey, drop);
  }

  get url(): string {
    return this.service.url;
  }

  get apiKey(): string {
    const key = this.service.apiKey ?? this.knownApiKey;
    assert.ok(key, 'this service does not know its API key; pass it to TestService.start');
    return key;
  }

  get store() {
    return this.service.store;
  }

  async close(): Promise<void> {
    await this.service.close();
    await this.dropDatabase?.();
  }

  /** A request to `path` under the API prefix, or to an absolute URL. Redirects are not followed. */
  async request(method: string, path: string, options: RequestOptions = {}): Promise<Answer> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.credential !== undefined) headers.Authorization = `Bearer ${options.credential}`;
    let body = options.body;
    if (options.json !== undefined) {
      headers['Content-Type'] ??= 'application/json';
      body = JSON.stringify(options.json);
    }
    const url = /^https?:/.test(path) ? path : `${this.url}${API}${path}`;
    const response = await fetch(url, { method, headers, body, redirect: 'manual' });
    const text = await response.text();
    const type = response.headers.get('content-type') ?? '';
    const answer = {
      status: response.status,
      headers: response.headers,
      body: /json/.test(type) && text ? JSON.parse(text) : undefined,
      text,
    };
    if (url.startsWith(this.url)) this.openApi.verify(method, url, answer.status, type, answer.body);
    return answer;
  }

  /** A call from the host's backend, with the API key. */
  asHost(method: string, path: string, json?: unknown): Promise<Answer> {
    return this.request(method, path, { credential: this.apiKey, json });
  }

  /** A call from the embedded elements, with a user token. */
  asUser(token: string, method: string, path: string, json?: unknown): Promise<Answer> {
    return this.request(method, path, { credential: token, json });
  }

  async createUser(name = 'Ada Lovelace'): Promise<{ userId: string; email: string; name: string }> {
    const email = `user${++this.users}.${randomBytes(3).toString('hex')}@example.com`;
    const answer = await this.asHost('POST', '/user', { name, email });
    assert.equal(answer.status, 200, answer.text);
    return { userId: answer.body.userId, email, name };
  }

  async token(userId: string, expiresIn?: number): Promise<string> {
    const answer = await this.asHost('GET', `/user/${userId}/token${expiresIn ? `?expiresIn=${expiresIn}` : ''}`);
    assert.equal(answer.status, 200, answer.text);
    return answer.body.token;
  }

  async newUser(name?: string): Promise<{ userId: string; token: string; email: string }> {
    const { userId, email } = await this.createUser(name);
    return { userId, email, token: await this.token(userId) };
  }

  /**
   * Stores a credential for the integration directly, as a finished OAuth flow or a saved
   * parameters form would (both have their own tests over HTTP).
   */
  async connect(userId: string, integration: string): Promise<void> {
    await this.store.credentials.save(userId, integration, this.service.secrets.seal({ kind: 'test' }));
  }

  /** Connects what the parent needs and installs it for the token's user; answers the child id. */
  async install(
    userId: string,
    token: string,
    parent: DemoWorkflow = sample.parent,
    variables?: Record<string, Record<string, string | number>>,
  ): Promise<string> {
    for (const integration of parent.integrations) await this.connect(userId, integration);
    const answer = await this.asUser(
      token,
      'POST',
      `/workflow/${parent.workflowId}/install`,
      variables ? { variables } : {},
    );
    assert.equal(answer.status, 201, answer.text);
    return answer.body.workflowId;
  }

  /** A user with a token and one installed child workflow of `parent`. */
  async userWithChild(parent: DemoWorkflow = sample.parent) {
    const user = await this.newUser();
    return { ...user, childId: await this.install(user.userId, user.token, parent) };
  }

  /** Stores an execution of a child workflow, as the engine would after a run. */
  async seedExecution(childId: string, startedAt: Date, finished = true): Promise<ExecutionLogEntry> {
    const stoppedAt = new Date(startedAt.getTime() + 250).toISOString();
    const entry: ExecutionLogEntry = {
      executionId: randomUUID(),
      startedAt: startedAt.toISOString(),
      stoppedAt,
      finished,
      results: [
        {
          blockId: sample.otherBlock.id,
          startedAt: startedAt.toISOString(),
          stoppedAt,
          data: [[{ json: { amount: 120, currency: 'eur' }, id: randomUUID() }]],
        },
      ],
    };
    await this.store.logs.insertExecution(childId, entry);
    return entry;
  }

  seedError(childId: string, message = 'The Slack channel does not exist.') {
    return this.store.logs.insertError({
      workflowId: childId,
      executionId: randomUUID(),
      blockId: sample.otherBlock.id,
      blockType: sample.otherBlock.type,
      error: message,
      kind: 'app',
    });
  }

  /**
   * A user token signed with the service's own key, with any claims: for expired tokens and
   * tokens that live too long, which the service never issues.
   */
  async signedByService(claims: {
    sub: string;
    iat: number;
    exp: number;
    aud?: string;
    kid?: string;
  }): Promise<string> {
    const jwk = await this.signingJwk();
    return new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: claims.kid ?? jwk.kid!, typ: 'JWT' })
      .setSubject(claims.sub)
      .setIssuer(TOKEN_ISSUER)
      .setAudience(claims.aud ?? TOKEN_AUDIENCE)
      .setIssuedAt(claims.iat)
      .setExpirationTime(claims.exp)
      .sign(await importJWK(jwk, 'ES256'));
  }

  /** The service's current token-signing key, which the database keeps sealed in its key ring. */
  private async signingJwk(): Promise<JWK> {
    const current = (await this.store.signingKeys.list()).find((k) => k.retiredAt === null)!;
    return { ...this.service.secrets.open<JWK>(current.sealedKey), kid: current.kid };
  }

  /** A well-formed, unexpired user token signed with a key that is not the service's. */
  async signedByStranger(sub: string): Promise<string> {
    const { privateKey } = await generateKeyPair('ES256');
    const jwk = await this.signingJwk();
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: jwk.kid!, typ: 'JWT' })
      .setSubject(sub)
      .setIssuer(TOKEN_ISSUER)
      .setAudience(TOKEN_AUDIENCE)
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .sign(privateKey);
  }
}

/**
 * Runs `use` against a service of its own whose catalog is the demo catalog with `workflowId`
 * switched off (`active: false`); the service and its catalog file are gone afterwards.
 */
export async function withWorkflowSwitchedOff(
  workflowId: string,
  use: (service: TestService) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'forge-catalog-'));
  try {
    const catalog = structuredClone(demoCatalog);
    catalog.workflows.find((w) => w.workflowId === workflowId)!.active = false;
    writeFileSync(join(dir, 'catalog.json'), JSON.stringify(catalog));
    const service = await TestService.start({ catalog: join(dir, 'catalog.json') });
    try {
      await use(service);
    } finally {
      await service.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A request exactly as written, through node:http: fetch would normalise the path (`..`,
 * `%2e`) and refuse some headers, and these tests need what a careless or hostile client sends.
 */
export function rawRequest(
  base: string,
  method: string,
  path: string,
  { headers = {}, body }: { headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

// Assertions -------------------------------------------------------------------------------

export function assertKeys(value: unknown, keys: string[], where = 'object'): void {
  assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value), `${where} is not an object`);
  assert.deepEqual(Object.keys(value).sort(), [...keys].sort(), `keys of ${where}`);
}

export function assertTimestamp(value: unknown, where = 'timestamp'): void {
  assert.equal(typeof value, 'string', `${where} is not a string`);
  assert.match(value as string, ISO_MS, `${where} is not ISO 8601 UTC with milliseconds`);
  assert.equal(new Date(value as string).toISOString(), value, `${where} is not a real date`);
}

/**
 * An RFC 9457 problem document with this status: its media type, its members, and a detail
 * that says something. `errors` lists the field paths a validation failure must name.
 */
export function assertProblem(
  answer: Answer,
  status: number,
  { detail, errors }: { detail?: RegExp; errors?: string[] } = {},
): void {
  assert.equal(answer.status, status, `expected ${status}, got ${answer.status}: ${answer.text}`);
  assert.match(answer.headers.get('content-type') ?? '', /^application\/problem\+json/);
  const body = answer.body;
  assert.equal(typeof body.type, 'string');
  assert.match(body.type, /^https:\/\/\S+$/);
  assert.equal(typeof body.title, 'string');
  assert.ok(body.title.length > 0, 'empty title');
  assert.equal(body.status, status);
  assert.equal(typeof body.detail, 'string');
  assert.ok(body.detail.length >= 15, `detail too short to help: ${body.detail}`);
  if (detail) assert.match(body.detail, detail);
  if (errors) {
    assert.ok(Array.isArray(body.errors), `no errors member in ${answer.text}`);
    for (const [i, error] of body.errors.entries()) {
      assertKeys(error, ['path', 'message'], `errors[${i}]`);
      assert.equal(typeof error.message, 'string');
      assert.ok(error.message.length > 0);
    }
    assert.deepEqual(
      body.errors.map((e: { path: string }) => e.path).sort(),
      [...errors].sort(),
      'paths named in errors',
    );
  }
}
