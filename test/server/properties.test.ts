/**
 * Property-based: generated bodies, path parameters and queries sent to every operation of the
 * route table (the one the security matrix walks, so a new route without a spec here fails):
 * - whatever is sent, the answer is never a 5xx, and a 4xx is a problem document (an HTML page
 *   on the pages the OAuth popup visits);
 * - a request known to be invalid is a 4xx;
 * - a request known to be valid is a 2xx (a 3xx on the popup's redirects).
 * Runs are bounded (RUNS per property and route) so the suite stays quick.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { type RunningSandbox, startSandbox } from '../../server/sandbox.js';
import { LOCAL_PROVIDER_PREFIX } from '../../server/views.js';
import { type Answer, API, APP_ORIGIN, demoCatalog, sample, TestService } from './support.js';

const RUNS = 12;

type Route = { method: string; path: string; access: 'apiKey' | 'user' | 'any' | 'public' };

interface Request {
  params: Record<string, string>;
  query?: Record<string, string>;
  /** Sent as JSON unless `raw` is given. */
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
  /** Overrides the credential the route's access calls for. */
  credential?: string;
}

interface Spec {
  /** Requests that must succeed; built after generation, since some need fresh state. */
  valid: fc.Arbitrary<() => Promise<Request>>;
  /** Requests that must be refused with a 4xx; none for an operation that takes no input. */
  invalid?: fc.Arbitrary<Request>;
  /** Query parameters the operation reads, for the anything-goes property. */
  queryKeys?: string[];
}

let forge: TestService;
let sandbox: RunningSandbox;
let routes: Route[];
let user: { userId: string; token: string; email: string; childId: string };

const webhookParent = demoCatalog.workflows.find((w) => w.blocks.some((b) => b.type === 'webhook'))!;
const oauthIntegration = demoCatalog.integrations.find((i) => i.type === 'oauth2')!;
const parametersIntegration = demoCatalog.integrations.find((i) => i.requiredParameters?.length)!;
/** One the shared user never connects (it connects what webhookParent uses). */
const unconnectedIntegration = demoCatalog.integrations.find((i) => !webhookParent.integrations.includes(i.name))!;
const variables = sample.variablesBlock.parameters.variables!;
/** A workflow whose Slack channel is chosen from the app (GET /workflow/:workflowId/options), and its block. */
const sourceParent = demoCatalog.workflows.find((w) =>
  w.blocks.some((b) => b.parameters.variables?.some((v) => v.source)),
)!;
const sourceBlock = sourceParent.blocks.find((b) => b.parameters.variables?.some((v) => v.source))!;
let emails = 0;

before(async () => {
  // Rate limits would turn valid requests into 429s; they have their own tests.
  // The apps a settings field reads its choices from (GET /workflow/:workflowId/options).
  sandbox = await startSandbox({ port: 0 });
  forge = await TestService.start({
    rateLimits: { token: false, credentials: false, oauth: false, webhook: false },
    sandboxUrl: sandbox.url,
  });
  routes = forge.service.routes as Route[];
  const created = await forge.newUser();
  user = { ...created, childId: await forge.install(created.userId, created.token, webhookParent) };
});
after(async () => {
  await forge.close();
  await sandbox.close();
});

// Generators -------------------------------------------------------------------------------

const text = (max = 200) => fc.string({ minLength: 1, maxLength: max }).filter((s) => s.trim() !== '');
const email = () => fc.stringMatching(/^[a-z0-9._+-]{1,20}$/).map((local) => `${local}.${++emails}@example.com`);
/** Any id-like or hostile path segment. */
const anySegment = fc.oneof(
  fc.string({ minLength: 1 }),
  fc.stringMatching(/^[0-9a-f]{24}$/),
  fc.constantFrom('..', '%', '%00', 'constructor', '__proto__', ' ', 'a/b'),
);
const unknownId = fc.stringMatching(/^[0-9a-f]{24}$/);
/** JSON that is not an object: a body every operation here refuses. */
const notAnObject = fc.oneof(fc.array(fc.jsonValue(), { maxLength: 3 }), fc.integer(), fc.string(), fc.boolean());
const badInteger = fc.oneof(
  fc.constantFrom('0', '-1', '1e1', '+5', '010', '1.5', 'x', '0x1', ' 1'),
  fc.string({ minLength: 1 }).filter((s) => !/^[1-9]\d*$/.test(s)),
);
const variableValue = fc.oneof(fc.string({ maxLength: 200 }), fc.double({ noNaN: true, noDefaultInfinity: true }));
const variableValues = fc
  .subarray(variables, { minLength: 1 })
  .chain((chosen) => fc.tuple(...chosen.map((v) => variableValue.map((value) => [v.name, value] as const))))
  .map((pairs) => Object.fromEntries(pairs));
const parameterValues = fc.record(
  Object.fromEntries(parametersIntegration.requiredParameters!.map((p) => [p.name, text(2000)])),
);

const now = (request: Request) => async () => request;
/** No query, a catalog integration or any string: what `?integration=` of the catalog reads takes. */
const integrationFilter = fc
  .option(fc.oneof(fc.constantFrom(...demoCatalog.integrations.map((i) => i.name)), fc.string()), { nil: undefined })
  .map((integration) => now({ params: {}, query: integration === undefined ? {} : { integration } }));

// State some valid requests need ------------------------------------------------------------

async function freshUser() {
  return forge.newUser();
}
async function freshChild() {
  const created = await forge.newUser();
  return { ...created, childId: await forge.install(created.userId, created.token, webhookParent) };
}
/** A flow started by the shared user, up to the page the popup shows after `step`. */
async function flowUpTo(step: 'authorize' | 'consent' | 'callback') {
  const started = await forge.request('POST', `/credentials/${oauthIntegration.name}/oauth`, {
    credential: user.token,
    headers: { Origin: APP_ORIGIN },
  });
  const url = new URL(started.body.url);
  if (step === 'authorize') return url;
  const consent = new URL((await forge.request('GET', url.toString())).headers.get('location')!);
  if (step === 'consent') return consent;
  const decided = await forge.request('POST', consent.toString(), {
    body: 'decision=allow',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  });
  return new URL(decided.headers.get('location')!);
}
const queryOf = (url: URL) => Object.fromEntries(url.searchParams);

const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };
/** The service's client at the local provider, as client_secret_basic. */
const localClientAuth = () => {
  const { FORGE_LOCAL_OAUTH_CLIENT_ID: id = '', FORGE_LOCAL_OAUTH_CLIENT_SECRET: secret = '' } = forge.service.env;
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
};
/** A code of the local provider for a PKCE verifier of this test's own, exchanged: its token answer. */
async function localTokens(): Promise<{ access_token: string; refresh_token: string }> {
  const verifier = 'v'.repeat(43);
  const consent = await flowUpTo('consent');
  consent.searchParams.set('code_challenge', createHash('sha256').update(verifier).digest('base64url'));
  const decided = await forge.request('POST', consent.toString(), { body: 'decision=allow', headers: FORM });
  const code = new URL(decided.headers.get('location')!).searchParams.get('code')!;
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: consent.searchParams.get('redirect_uri')!,
  });
  const answer = await forge.request('POST', `${forge.url}${LOCAL_PROVIDER_PREFIX}/${oauthIntegration.name}/token`, {
    body: body.toString(),
    headers: { ...FORM, Authorization: localClientAuth() },
  });
  return answer.body;
}

// One spec per operation ------------------------------------------------------------------

/** The shared user's child; '' stands for it (and for the user's id) until `send` fills it in. */
const child = () => ({ workflowId: '' });
const withUnknownChild = unknownId.map((workflowId) => ({ params: { workflowId } }));

const SPECS: Record<string, Spec> = {
  'GET /workflow': {
    queryKeys: ['integration'],
    valid: integrationFilter,
    invalid: fc.constant({ params: {}, credential: 'not-a-credential' }),
  },
  'GET /workflow-summary': {
    queryKeys: ['integration'],
    valid: integrationFilter,
    invalid: fc.constant({ params: {}, credential: '' }),
  },
  'GET /workflow/:workflowId': {
    valid: fc.constant(now({ params: child() })),
    invalid: withUnknownChild,
  },
  'DELETE /workflow/:workflowId': {
    valid: fc.constant(async () => {
      const fresh = await freshChild();
      return { params: { workflowId: fresh.childId }, credential: fresh.token };
    }),
    invalid: withUnknownChild,
  },
  'POST /workflow/:workflowId/install': {
    valid: fc.option(variableValues, { nil: undefined }).map((values) => async () => {
      const fresh = await freshUser();
      for (const name of webhookParent.integrations) await forge.connect(fresh.userId, name);
      const body =
        values && webhookParent === sample.parent ? { variables: { [sample.variablesBlock.id]: values } } : {};
      return { params: { workflowId: webhookParent.workflowId }, body, credential: fresh.token };
    }),
    invalid: fc.oneof(
      unknownId.map((workflowId) => ({ params: { workflowId }, body: {} })),
      notAnObject.map((body) => ({ params: { workflowId: sample.parent.workflowId }, body })),
      fc.dictionary(text(20), fc.jsonValue(), { minKeys: 1 }).map((variables) => ({
        params: { workflowId: sample.parent.workflowId },
        body: { variables: { 'not-a-block': variables } },
      })),
    ),
  },
  'PUT /workflow/:workflowId/activate': { valid: fc.constant(now({ params: child() })), invalid: withUnknownChild },
  'PUT /workflow/:workflowId/deactivate': { valid: fc.constant(now({ params: child() })), invalid: withUnknownChild },
  'POST /workflow/:workflowId/rotateWebhook': {
    valid: fc.constant(now({ params: child() })),
    invalid: withUnknownChild,
  },
  'PATCH /workflow/:workflowId/variables/:blockId': {
    valid: variableValues.map((values) => async () => {
      const fresh = await freshUser();
      const childId = await forge.install(fresh.userId, fresh.token, sample.parent);
      return {
        params: { workflowId: childId, blockId: sample.variablesBlock.id },
        body: values,
        credential: fresh.token,
      };
    }),
    invalid: fc.oneof(
      notAnObject.map((body) => ({ params: { ...child(), blockId: sample.variablesBlock.id }, body })),
      fc.constant({ params: { ...child(), blockId: sample.variablesBlock.id }, body: {} }),
      text(30)
        .filter((name) => !variables.some((v) => v.name === name))
        .map((name) => ({ params: { ...child(), blockId: sample.variablesBlock.id }, body: { [name]: 'x' } })),
      fc.oneof(fc.boolean(), fc.constant(null), fc.array(fc.integer()), fc.object()).map((value) => ({
        params: { ...child(), blockId: sample.variablesBlock.id },
        body: { [variables[0]!.name]: value },
      })),
    ),
  },
  'GET /workflow/:workflowId/logs': {
    queryKeys: ['page', 'limit', 'order'],
    valid: fc
      .record(
        {
          page: fc.oneof(fc.integer({ min: 1, max: 1_000_000 }).map(String), fc.constant('')),
          limit: fc.oneof(fc.integer({ min: 1, max: 30 }).map(String), fc.constant('')),
          order: fc.constantFrom('asc', 'desc', ''),
        },
        { requiredKeys: [] },
      )
      .map((query) => now({ params: child(), query })),
    invalid: fc.oneof(
      badInteger.map((page) => ({ params: child(), query: { page } })),
      fc.oneof(badInteger, fc.integer({ min: 31 }).map(String)).map((limit) => ({ params: child(), query: { limit } })),
      text(10)
        .filter((o) => o !== 'asc' && o !== 'desc')
        .map((order) => ({ params: child(), query: { order } })),
    ),
  },
  'GET /workflow/:workflowId/errors': { valid: fc.constant(now({ params: child() })), invalid: withUnknownChild },
  'GET /workflow/:workflowId/options': {
    queryKeys: ['blockId', 'variable', 'search', 'cursor'],
    valid: fc.option(text(30), { nil: undefined }).map((search) => async () => {
      // A user whose Slack connection the sandbox takes (an OAuth token it does not refuse).
      const fresh = await freshUser();
      await forge.store.credentials.save(
        fresh.userId,
        'slack',
        forge.service.secrets.seal({ kind: 'oauth2', accessToken: `test-${fresh.userId}` }),
      );
      const query = { blockId: sourceBlock.id, variable: 'channel', ...(search ? { search } : {}) };
      return { params: { workflowId: sourceParent.workflowId }, query, credential: fresh.token };
    }),
    invalid: fc.oneof(
      unknownId.map((workflowId) => ({
        params: { workflowId },
        query: { blockId: sourceBlock.id, variable: 'channel' },
      })),
      fc.constant({ params: { workflowId: sourceParent.workflowId }, query: { blockId: sourceBlock.id } }),
      text(30).map((variable) => ({
        params: { workflowId: sourceParent.workflowId },
        query: { blockId: sourceBlock.id, variable: `${variable}!` },
      })),
    ),
  },
  'POST /user': {
    valid: fc.tuple(text(), email()).map(([name, address]) => now({ params: {}, body: { name, email: address } })),
    invalid: fc.oneof(
      notAnObject.map((body) => ({ params: {}, body })),
      text().map((name) => ({ params: {}, body: { name, email: 'no-at-sign' } })),
      fc.constant({ params: {}, body: { name: ' ', email: 'a@example.com' } }),
      fc.constant({ params: {}, body: { name: 'Ada', email: 'a@example.com', extra: 1 } }),
    ),
  },
  'GET /user': { valid: fc.constant(now({ params: {} })), invalid: fc.constant({ params: {}, credential: 'x.y.z' }) },
  'GET /user/:userId': {
    valid: fc.constant(now({ params: { userId: '' }, credential: 'own-token' })),
    invalid: unknownId.map((userId) => ({ params: { userId } })),
  },
  'PATCH /user/:userId': {
    valid: fc
      .tuple(text(), email())
      .map(([fullName, address]) => now({ params: { userId: '' }, body: { fullName, email: address } })),
    invalid: fc.oneof(
      notAnObject.map((body) => ({ params: { userId: '' }, body })),
      fc.constant({ params: { userId: '' }, body: { fullName: 'Ada' } }),
      unknownId.map((userId) => ({ params: { userId }, body: { fullName: 'Ada', email: 'ada@example.com' } })),
    ),
  },
  'DELETE /user/:userId': {
    valid: fc.constant(async () => ({ params: { userId: (await freshUser()).userId } })),
    invalid: unknownId.map((userId) => ({ params: { userId } })),
  },
  'GET /user/:userId/token': {
    queryKeys: ['expiresIn'],
    valid: fc
      .option(fc.integer({ min: 1, max: 1800 }), { nil: undefined })
      .map((ttl) => now({ params: { userId: '' }, query: ttl === undefined ? {} : { expiresIn: String(ttl) } })),
    invalid: fc.oneof(
      unknownId.map((userId) => ({ params: { userId } })),
      fc
        .oneof(badInteger, fc.integer({ min: 1801 }).map(String))
        .map((expiresIn) => ({ params: { userId: '' }, query: { expiresIn } })),
    ),
  },
  'PATCH /user/:userId/disableWorkflows': {
    valid: fc.constant(now({ params: { userId: '' } })),
    invalid: unknownId.map((userId) => ({ params: { userId } })),
  },
  'GET /credentials': { valid: fc.constant(now({ params: {} })), invalid: fc.constant({ params: {}, credential: '' }) },
  'DELETE /credentials/:integration': {
    valid: fc.constant(async () => {
      const fresh = await freshUser();
      await forge.connect(fresh.userId, parametersIntegration.name);
      return { params: { integration: parametersIntegration.name }, credential: fresh.token };
    }),
    invalid: fc.oneof(
      text(30).map((integration) => ({ params: { integration: `no-${integration}` } })),
      // Known, but the shared user has no connection to it.
      fc.constant({ params: { integration: unconnectedIntegration.name } }),
    ),
  },
  'GET /user/:userId/credentials': {
    valid: fc.constant(now({ params: { userId: '' } })),
    invalid: unknownId.map((userId) => ({ params: { userId } })),
  },
  'DELETE /user/:userId/credentials/:integration': {
    valid: fc.constant(async () => {
      const fresh = await freshUser();
      await forge.connect(fresh.userId, parametersIntegration.name);
      return { params: { userId: fresh.userId, integration: parametersIntegration.name } };
    }),
    invalid: fc.oneof(
      unknownId.map((userId) => ({ params: { userId, integration: parametersIntegration.name } })),
      text(30).map((integration) => ({ params: { userId: '', integration: `no-${integration}` } })),
    ),
  },
  'GET /workflow-health': {
    valid: fc.constant(now({ params: {} })),
    invalid: fc.constant({ params: {}, credential: '' }),
  },
  'POST /credentials/:integration': {
    valid: parameterValues.map((body) => now({ params: { integration: parametersIntegration.name }, body })),
    invalid: fc.oneof(
      notAnObject.map((body) => ({ params: { integration: parametersIntegration.name }, body })),
      fc.constant({ params: { integration: parametersIntegration.name }, body: {} }),
      parameterValues.map((body) => ({ params: { integration: oauthIntegration.name }, body })),
      text(30).map((integration) => ({ params: { integration: `no-${integration}` }, body: {} })),
    ),
  },
  'POST /credentials/:integration/oauth': {
    valid: fc.constant(now({ params: { integration: oauthIntegration.name }, headers: { Origin: APP_ORIGIN } })),
    invalid: fc.oneof(
      fc.constant({ params: { integration: oauthIntegration.name } }),
      fc.constant({ params: { integration: parametersIntegration.name }, headers: { Origin: APP_ORIGIN } }),
    ),
  },
  'POST /credentials/:integration/oauth/confirm': {
    valid: fc.constant(async () => {
      const page = await forge.request('GET', (await flowUpTo('callback')).toString());
      const grant = /"grant":"([\w-]+)"/.exec(page.text)![1];
      return { params: { integration: oauthIntegration.name }, body: { grant }, headers: { Origin: APP_ORIGIN } };
    }),
    invalid: fc.oneof(
      text(100).map((grant) => ({ params: { integration: oauthIntegration.name }, body: { grant } })),
      notAnObject.map((body) => ({ params: { integration: oauthIntegration.name }, body })),
    ),
  },
  'GET /setup': {
    queryKeys: ['workflowId', 'integration'],
    valid: fc
      .oneof(
        fc.constantFrom(...demoCatalog.workflows.map((w) => ({ workflowId: w.workflowId }))),
        fc.oneof(fc.constantFrom(...demoCatalog.integrations.map((i) => i.name)), text(30)).map((integration) => ({
          integration,
        })),
      )
      .map((query) => now({ params: {}, query })),
    invalid: fc.oneof(
      fc.constant({ params: {}, query: {} }),
      fc.constant({ params: {}, query: { workflowId: sample.parent.workflowId, integration: 'slack' } }),
      unknownId.map((workflowId) => ({ params: {}, query: { workflowId } })),
    ),
  },
  'GET /settings': { valid: fc.constant(now({ params: {} })), invalid: fc.constant({ params: {}, credential: 'x' }) },
  'PUT /settings': {
    valid: fc
      .oneof(
        fc.constant(null),
        fc.webUrl({ validSchemes: ['https'] }).filter((u) => !/localhost/.test(u)),
      )
      .map((url) => now({ params: {}, body: { errorWebhookUrl: url } })),
    invalid: fc.oneof(
      notAnObject.map((body) => ({ params: {}, body })),
      text(20).map((colour) => ({ params: {}, body: { colour } })),
      fc.constantFrom('ftp://example.com', 'http://127.0.0.1/', 'not a url').map((url) => ({
        params: {},
        body: { errorWebhookUrl: url },
      })),
    ),
  },
  'POST /settings/rotateErrorWebhookSecret': { valid: fc.constant(now({ params: {} })) },
  'GET /deadLetters': {
    queryKeys: ['channel', 'page', 'limit'],
    valid: fc
      .record(
        {
          channel: fc.constantFrom('webhook', 'eventBus'),
          page: fc.oneof(fc.integer({ min: 1, max: 1_000_000 }).map(String), fc.constant('')),
          limit: fc.oneof(fc.integer({ min: 1, max: 100 }).map(String), fc.constant('')),
        },
        { requiredKeys: [] },
      )
      .map((query) => now({ params: {}, query })),
    invalid: fc.oneof(
      text(10)
        .filter((c) => c !== 'webhook' && c !== 'eventBus')
        .map((channel) => ({ params: {}, query: { channel } })),
      fc.oneof(badInteger, fc.integer({ min: 101 }).map(String)).map((limit) => ({ params: {}, query: { limit } })),
      fc.constant({ params: {}, credential: 'x' }),
    ),
  },
  'POST /deadLetters/resend': {
    valid: fc
      .constantFrom({}, { channel: 'webhook' }, { channel: 'eventBus' })
      .map((body) => now({ params: {}, body })),
    invalid: fc.oneof(
      notAnObject.map((body) => ({ params: {}, body })),
      // No dead letter has it: a 404 that names it.
      fc.array(unknownId, { minLength: 1, maxLength: 3 }).map((errorIds) => ({ params: {}, body: { errorIds } })),
      fc.constant({ params: {}, body: { errorIds: [] } }),
      text(30).map((id) => ({ params: {}, body: { errorIds: [id] } })),
      fc.constant({ params: {}, body: { channel: 'email' } }),
      fc.constant({ params: {}, body: { colour: 'red' } }),
    ),
  },
  'GET /.well-known/jwks.json': { valid: fc.constant(now({ params: {} })) },
  'GET /openapi.json': { valid: fc.constant(now({ params: {} })) },
  'GET /icons/:file': {
    valid: fc.constantFrom('slack.svg', 'stripe.svg').map((file) => now({ params: { file } })),
    invalid: text(30).map((file) => ({ params: { file: `${file}.exe` } })),
  },
  'GET /icons/blocks/:file': {
    valid: fc.constantFrom('http.svg', 'webhook.svg').map((file) => now({ params: { file } })),
    invalid: text(30).map((file) => ({ params: { file: `none-${file}` } })),
  },
  'GET /oauth/authorize': {
    queryKeys: ['state'],
    valid: fc.constant(async () => ({ params: {}, query: queryOf(await flowUpTo('authorize')) })),
    invalid: fc.string().map((state) => ({ params: {}, query: { state } })),
  },
  'GET /oauth/callback': {
    queryKeys: ['state', 'code', 'error'],
    valid: fc.constant(async () => ({ params: {}, query: queryOf(await flowUpTo('callback')) })),
    invalid: fc.record({ state: fc.string(), code: fc.string() }).map((query) => ({ params: {}, query })),
  },
  [`GET ${LOCAL_PROVIDER_PREFIX}/:integration/authorize`]: {
    queryKeys: ['state', 'redirect_uri'],
    valid: fc.constant(async () => ({
      params: { integration: oauthIntegration.name },
      query: queryOf(await flowUpTo('consent')),
    })),
    invalid: fc.string().map((state) => ({ params: { integration: oauthIntegration.name }, query: { state } })),
  },
  [`POST ${LOCAL_PROVIDER_PREFIX}/:integration/authorize`]: {
    queryKeys: ['state', 'redirect_uri'],
    valid: fc.constantFrom('allow', 'deny').map((decision) => async () => ({
      params: { integration: oauthIntegration.name },
      query: queryOf(await flowUpTo('consent')),
      raw: `decision=${decision}`,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    })),
    invalid: fc.string().map((state) => ({
      params: { integration: oauthIntegration.name },
      query: { state },
      raw: 'decision=allow',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    })),
  },
  [`POST ${LOCAL_PROVIDER_PREFIX}/:integration/token`]: {
    valid: fc.constant(async () => {
      const { refresh_token } = await localTokens();
      return {
        params: { integration: oauthIntegration.name },
        raw: new URLSearchParams({ grant_type: 'refresh_token', refresh_token }).toString(),
        headers: { ...FORM, Authorization: localClientAuth() },
      };
    }),
    invalid: fc.record({ grant_type: fc.string(), code: fc.string() }).map((fields) => ({
      params: { integration: oauthIntegration.name },
      raw: new URLSearchParams(fields).toString(),
      headers: FORM,
    })),
  },
  [`POST ${LOCAL_PROVIDER_PREFIX}/:integration/revoke`]: {
    valid: fc.string().map((token) => async () => ({
      params: { integration: oauthIntegration.name },
      raw: new URLSearchParams({ token }).toString(),
      headers: { ...FORM, Authorization: localClientAuth() },
    })),
    invalid: fc.string().map((token) => ({
      params: { integration: oauthIntegration.name },
      raw: new URLSearchParams({ token }).toString(),
      headers: FORM,
    })),
  },
  [`POST ${LOCAL_PROVIDER_PREFIX}/:integration/introspect`]: {
    valid: fc.string().map((token) => async () => ({
      params: { integration: oauthIntegration.name },
      raw: new URLSearchParams({ token }).toString(),
      headers: FORM,
    })),
  },
  [`POST ${LOCAL_PROVIDER_PREFIX}/:integration/remove-access`]: {
    valid: fc.constant(async () => ({
      params: { integration: oauthIntegration.name },
      headers: { Authorization: `Bearer ${(await localTokens()).access_token}` },
    })),
    invalid: fc.string().map((token) => ({
      params: { integration: oauthIntegration.name },
      headers: { Authorization: `Bearer ${token}x` },
    })),
  },
  'POST /hooks/:token': {
    valid: fc.dictionary(text(20), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 }).map((body) => async () => {
      // A child of its own: the shared one may have been switched off by another property.
      const { childId } = await freshChild();
      const hook = (await forge.asHost('GET', `/workflow/${childId}`)).body.webhookUrl as string;
      return { params: { token: hook.slice(hook.lastIndexOf('/') + 1) }, body };
    }),
    invalid: fc.oneof(
      fc.string({ minLength: 1 }).map((token) => ({ params: { token }, body: {} })),
      notAnObject.map((body) => ({ params: { token: 'unknown-token' }, body })),
    ),
  },
};

// Sending ---------------------------------------------------------------------------------

const name = (route: Route) => `${route.method} ${route.path}`;
/** Pages the OAuth popup shows: they answer HTML, errors included. */
const isPage = (route: Route) => route.path.startsWith('/oauth/') || route.path.startsWith(LOCAL_PROVIDER_PREFIX);

function send(route: Route, request: Request): Promise<Answer> {
  const path = route.path.replace(/:(\w+)/g, (_, key: string) => {
    const own: Record<string, string> = { userId: user.userId, workflowId: user.childId };
    const value = request.params[key] === '' && own[key] ? own[key] : request.params[key];
    return encodeURIComponent(value ?? '');
  });
  const query = new URLSearchParams(request.query ?? {}).toString();
  const prefix = route.path.startsWith(LOCAL_PROVIDER_PREFIX) ? '' : API;
  const url = `${forge.url}${prefix}${path}${query ? `?${query}` : ''}`;
  const credential =
    request.credential === 'own-token'
      ? user.token
      : (request.credential ??
        { apiKey: forge.apiKey, user: user.token, any: user.token, public: undefined }[route.access]);
  return forge.request(route.method, url, {
    credential: credential === '' ? undefined : credential,
    headers: request.headers,
    ...(request.raw !== undefined
      ? { body: request.raw }
      : request.body !== undefined && ['POST', 'PUT', 'PATCH'].includes(route.method)
        ? { json: request.body }
        : {}),
  });
}

function assertNoServerError(route: Route, answer: Answer, request: unknown): void {
  assert.ok(
    answer.status < 500,
    `${name(route)} answered ${answer.status} to ${JSON.stringify(request)}: ${answer.text}`,
  );
  if (answer.status >= 400) {
    const type = answer.headers.get('content-type') ?? '';
    if (isPage(route) && /^text\/html/.test(type)) return;
    // The local provider's protocol endpoints answer in OAuth's own error format (RFC 6749 §5.2).
    if (route.path.startsWith(LOCAL_PROVIDER_PREFIX) && /^application\/json/.test(type)) {
      assert.equal(typeof answer.body.error, 'string', `${name(route)} ${answer.status}: ${answer.text}`);
      return;
    }
    assert.match(type, /^application\/problem\+json/, `${name(route)} ${answer.status}: ${answer.text}`);
    assert.equal(answer.body.status, answer.status);
    assert.equal(typeof answer.body.detail, 'string');
  }
}

describe('every operation, with generated input', () => {
  test('every route of the table has a spec here', () => {
    const missing = routes.map(name).filter((route) => !SPECS[route]);
    assert.deepEqual(missing, [], 'add a spec for each new route');
  });

  test('anything: never a 5xx, and every 4xx is a problem document', async () => {
    for (const route of routes) {
      const keys = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
      const queryKeys = SPECS[name(route)]?.queryKeys ?? [];
      const anything = fc.record({
        params: fc.record(Object.fromEntries(keys.map((key) => [key, anySegment]))),
        query: fc.dictionary(fc.constantFrom('x', ...queryKeys), fc.string(), { maxKeys: 3 }),
        body: fc.option(fc.jsonValue({ maxDepth: 4 }), { nil: undefined }),
      });
      await fc.assert(
        fc.asyncProperty(anything, async (request) => assertNoServerError(route, await send(route, request), request)),
        { numRuns: RUNS },
      );
    }
  });

  test('invalid input is a 4xx', async () => {
    for (const route of routes) {
      const spec = SPECS[name(route)]!;
      if (!spec.invalid) continue;
      await fc.assert(
        fc.asyncProperty(spec.invalid, async (request) => {
          const answer = await send(route, request);
          assertNoServerError(route, answer, request);
          assert.ok(
            answer.status >= 400 && answer.status < 500,
            `${name(route)} ${answer.status} to ${JSON.stringify(request)}`,
          );
        }),
        { numRuns: RUNS },
      );
    }
  });

  test('valid input is a 2xx (a redirect on the popup’s redirects)', async () => {
    for (const route of routes) {
      const spec = SPECS[name(route)]!;
      await fc.assert(
        fc.asyncProperty(spec.valid, async (build) => {
          const request = await build();
          const answer = await send(route, request);
          const ok = answer.status >= 200 && answer.status < (isPage(route) ? 400 : 300);
          assert.ok(ok, `${name(route)} ${answer.status} to ${JSON.stringify(request)}: ${answer.text}`);
        }),
        { numRuns: RUNS },
      );
    }
  });
});
