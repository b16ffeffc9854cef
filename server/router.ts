import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Principal } from './auth.js';
import { forbidden, HttpProblem, readJsonBody } from './http.js';

/**
 * Who may call a route: `apiKey` the host's backend only, `user` a user token only (the embed
 * surface's own operations), `any` either (the embed surface, scoped to the token's user),
 * `public` no credential (pages the OAuth popup visits, icons, the JWKS, webhooks).
 */
export type Access = 'apiKey' | 'user' | 'any' | 'public';

export interface Context {
  req: IncomingMessage;
  res: ServerResponse;
  params: Record<string, string>;
  query: URLSearchParams;
  /** The origin the caller reached the service at, for URLs the service hands out. */
  base: string;
  principal: Principal;
  body(): Promise<unknown>;
}

export type Reply = { status?: number; body: unknown } | undefined;
export type Handler = (ctx: Context) => Reply | Promise<Reply>;

interface Route {
  method: string;
  path: string;
  pattern: RegExp;
  keys: string[];
  access: Access;
  handler: Handler;
}

export interface Match {
  route: Route;
  params: Record<string, string>;
}

export class Router {
  private readonly routes: Route[] = [];

  add(method: string, path: string, access: Access, handler: Handler): void {
    const keys: string[] = [];
    const source = path.replace(/:(\w+)/g, (_, key: string) => {
      keys.push(key);
      return '([^/]+)';
    });
    this.routes.push({ method, path, pattern: new RegExp(`^${source}$`), keys, access, handler });
  }

  /** Every route: method, path pattern and who may call it. */
  get table(): Array<{ method: string; path: string; access: Access }> {
    return this.routes.map(({ method, path, access }) => ({ method, path, access }));
  }

  /** The route for a method and path; `allowed` lists the methods the path has when none fits. */
  match(method: string, path: string): { found?: Match; allowed: string[] } {
    const allowed: string[] = [];
    for (const route of this.routes) {
      const m = route.pattern.exec(path);
      if (!m) continue;
      if (route.method !== method) {
        allowed.push(route.method);
        continue;
      }
      const params: Record<string, string> = {};
      try {
        route.keys.forEach((key, i) => {
          params[key] = decodeURIComponent(m[i + 1]!);
        });
      } catch {
        throw new HttpProblem(400, 'bad-request', 'Bad request', `The path ${path} is not correctly URL-encoded.`);
      }
      return { found: { route, params }, allowed };
    }
    return { allowed };
  }
}

/** The 403 for a valid credential of the wrong kind; it says which kind the operation needs. */
export function checkAccess(access: Access, principal: Principal): void {
  if (access === 'apiKey' && principal.kind !== 'apiKey') {
    throw forbidden('This operation needs the host API key. Call it from your backend, never from a browser.');
  }
  if (access === 'user' && principal.kind !== 'user') {
    throw forbidden(
      "This operation acts for one end user and needs that user's token (GET /user/:userId/token), not the API key.",
    );
  }
}

export const bodyOf = (req: IncomingMessage) => {
  let cached: Promise<unknown> | undefined;
  return () => {
    cached ??= readJsonBody(req);
    return cached;
  };
};
