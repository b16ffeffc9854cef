import type {
  ContextConfigDefault,
  FastifyBaseLogger,
  FastifyContextConfig,
  FastifyInstance,
  FastifyRequest,
  FastifyTypeProvider,
  FastifyTypeProviderDefault,
  RawRequestDefaultExpression,
  RawServerBase,
  RawServerDefault,
  RouteGenericInterface,
} from 'fastify';
import type { FastifyRequestType, ResolveFastifyRequestType } from 'fastify/types/type-provider.js';
import fp from 'fastify-plugin';
import type { User } from 'forge-embed/client';
import type { ApiKeyPrincipal, AuthKeys, Principal } from '../auth.js';
import { forbidden, unauthorized } from '../http.js';
import type { Store } from '../store/store.js';
import type { Access } from './route-table.js';

/**
 * Who calls a route of this access: a `user` route is called with a user token (so its handler
 * reads `principal.userId` as is), an `apiKey` route with the API key; `any` and public routes
 * (and code that does not know the route) get the union.
 */
export type PrincipalOf<Config> = Config extends { access: 'user' }
  ? Extract<Principal, { kind: 'user' }>
  : Config extends { access: 'apiKey' }
    ? Extract<Principal, { kind: 'apiKey' }>
    : Principal;

declare module 'fastify' {
  // The type parameters must repeat Fastify's own; `ContextConfig` is the route's `config`.
  interface FastifyRequest<
    RouteGeneric extends RouteGenericInterface = RouteGenericInterface,
    RawServer extends RawServerBase = RawServerDefault,
    RawRequest extends RawRequestDefaultExpression<RawServer> = RawRequestDefaultExpression<RawServer>,
    SchemaCompiler extends import('fastify').FastifySchema = import('fastify').FastifySchema,
    TypeProvider extends FastifyTypeProvider = FastifyTypeProviderDefault,
    ContextConfig = ContextConfigDefault,
    Logger extends FastifyBaseLogger = FastifyBaseLogger,
    RequestType extends FastifyRequestType = ResolveFastifyRequestType<TypeProvider, SchemaCompiler, RouteGeneric>,
  > {
    /** Who is calling; set before the handler runs on every route that is not public. */
    principal: PrincipalOf<ContextConfig>;
    /** The user a user token names, as the credential check read it; undefined for the API key. */
    tokenUser: User | undefined;
    /**
     * The version of the token user's workflows and connections (`users.own_version`), read with
     * the user on a route whose config asks for it (`withTokenUser`); undefined elsewhere.
     */
    tokenUserOwnVersion: number | undefined;
    /**
     * The route's config (its `url` the pattern, undefined on a 404) as the credential check read
     * it: Fastify's `request.routeOptions` makes a twelve-field object at each read, and the
     * request metrics take the route from here rather than read it again (issue 29). Undefined
     * on a request answered before the check (a preflight, a refused URL).
     */
    routeConfig: FastifyRequest['routeOptions']['config'] | undefined;
  }
  interface FastifyContextConfig {
    /**
     * What a user-token route needs with the token user, read by the credential check in the one
     * statement that reads the user (issue 29): the version its kept answers are keyed by.
     */
    withTokenUser?: 'ownVersion';
  }
}

export interface AuthOptions {
  authKeys: AuthKeys;
  store: Store;
}

/** The request decorations the credential check fills in. */
async function auth(app: FastifyInstance): Promise<void> {
  app.decorateRequest('principal', null as never);
  app.decorateRequest('tokenUser', undefined);
  app.decorateRequest('tokenUserOwnVersion', undefined);
  app.decorateRequest('routeConfig', undefined);
}

/**
 * The credential check: every route that is not public gets `request.principal` before its
 * handler (and its rate limit) runs, or the request is refused with a 401 or 403. The request
 * checks' one `onRequest` hook runs it after CORS and the URL guards (request-checks.ts). It
 * returns undefined where the caller is known at once (a public route: a probe, a webhook, an
 * icon; or the API key), the refusal where it is refused at once, and otherwise (a user token)
 * a promise settled once the principal is set or the request is refused: nothing is made or
 * awaited that the request does not need (issue 29).
 */
export function callerIdentifier(options: AuthOptions): (request: FastifyRequest) => Promise<void> | Error | undefined {
  return function identifyCaller(request) {
    // A getter that makes an object at each read: read once.
    const { config } = request.routeOptions;
    request.routeConfig = config;
    const access = config.access ?? 'public';
    if (access === 'public') return undefined;
    let identified: ReturnType<AuthKeys['identify']>;
    try {
      identified = options.authKeys.identify(request.headers.authorization);
      // The API key needs nothing read or awaited: its request goes on at once, without a
      // promise made and awaited for it (issue 29).
      if (!(identified instanceof Promise)) {
        request.principal = allowedApiKey(request, access, identified);
        return undefined;
      }
    } catch (error) {
      return error as Error;
    }
    return allowedUser(options.store, request, access, config.withTokenUser, identified).then((principal) => {
      request.principal = principal;
    });
  };
}

/** The API key's principal if a route of `access` takes it from this request; else the 403. */
function allowedApiKey(request: FastifyRequest, access: Access, principal: ApiKeyPrincipal): Principal {
  // An API key never belongs in a browser: a request that a page sent is refused.
  if (sentByBrowser(request)) {
    throw forbidden(
      'API keys must stay on your backend; this request came from a browser page. Use a user token there.',
    );
  }
  return allowed(access, principal);
}

/** A user token's principal once it is verified, its user read (a 401 if it is gone) and a route of `access` takes it. */
async function allowedUser(
  store: Store,
  request: FastifyRequest,
  access: Access,
  withTokenUser: FastifyContextConfig['withTokenUser'],
  verified: Promise<Principal>,
): Promise<Principal> {
  const principal = await verified;
  if (principal.kind === 'user') {
    if (withTokenUser === 'ownVersion') {
      const read = await store.users.getWithOwnVersion(principal.userId);
      request.tokenUser = read?.user;
      request.tokenUserOwnVersion = read?.ownVersion;
    } else {
      request.tokenUser = await store.users.get(principal.userId);
    }
    if (!request.tokenUser) {
      throw unauthorized('The user of this token no longer exists. Create the user again and fetch a new token.');
    }
  }
  return allowed(access, principal);
}

/** `principal` if a route of `access` takes its kind of credential; else the 403 that says which it needs. */
function allowed(access: Access, principal: Principal): Principal {
  if (access === 'apiKey' && principal.kind !== 'apiKey') {
    throw forbidden('This operation needs the host API key. Call it from your backend, never from a browser.');
  }
  if (access === 'user' && principal.kind !== 'user') {
    throw forbidden(
      "This operation acts for one end user and needs that user's token (GET /user/:userId/token), not the API key.",
    );
  }
  return principal;
}

/**
 * Browsers send Origin with every cross-origin request and every same-origin one that can
 * change data, and Sec-Fetch-Site / Sec-Fetch-Dest with every request (same-origin GETs too).
 * Sec-Fetch-Mode alone proves nothing: Node's fetch sends it from a backend.
 */
function sentByBrowser(request: FastifyRequest): boolean {
  return ['origin', 'sec-fetch-site', 'sec-fetch-dest', 'sec-fetch-user'].some(
    (name) => request.headers[name] !== undefined,
  );
}

export default fp(auth, { name: 'forge-auth', fastify: '5.x' });
