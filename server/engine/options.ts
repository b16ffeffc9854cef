import { STATUS_CODES } from 'node:http';
import { Agent, type Dispatcher, request } from 'undici';
import type { CatalogOptionsSource } from '../catalog/schema.js';
import { BlockFailure } from './blocks.js';
import type { Connections } from './connections.js';
import { type AppAccess, absoluteUrl, mayCarryCredential } from './placement.js';

/**
 * The choices of a `select` variable whose `source` reads them from the user's own app
 * (issue 26): one request to the app with the user's credential, placed and confined to the
 * app's origin as for a block (placement.ts), its answer mapped by the source's `items`,
 * `value`, `label` and `next`. Pages are kept briefly per user, so opening the modal again or
 * paging back does not call the app each time.
 */

export interface OptionsPage {
  options: Array<{ value: string | number; label: string }>;
  next?: string;
}

/** Why the app gave no choices: it refused the credential (connect again), or it failed otherwise. */
export class OptionsFailure extends Error {
  constructor(
    message: string,
    readonly kind: 'refused' | 'not-connected' | 'app',
  ) {
    super(message);
  }
}

/** How long a page is kept, and how many are kept at most. */
export const OPTIONS_TTL_MS = 30_000;
const MAX_KEPT_PAGES = 2_000;
const TIMEOUT_MS = 10_000;
const MAX_ANSWER_BYTES = 2 * 1024 * 1024;
/** The most choices one page answers, whatever the app sends. */
const MAX_OPTIONS = 1_000;
/**
 * A local search filters the app's pages one at a time: pages without a match are read past,
 * this many at most, so typing finds a choice the app lists further down.
 */
const LOCAL_SEARCH_PAGES = 10;

export interface OptionsRequest {
  userId: string;
  /** What the cache tells apart besides the user: the parent, block and variable. */
  key: string;
  source: CatalogOptionsSource;
  /** The integration's display name, for messages. */
  appName: string;
  search: string | undefined;
  cursor: string | undefined;
}

export class OptionsReader {
  private readonly kept = new Map<string, { page: OptionsPage; until: number }>();
  /**
   * The connections to the apps, kept alive between reads. undici's `request` rather than
   * `fetch`: the same client without the WHATWG Request, Headers and stream objects fetch makes
   * around each call, which were most of a read's cost (docs/design-notes.md, issue 26).
   */
  private readonly apps = new Agent();

  constructor(
    private readonly connections: Connections,
    /** What `{{env.X}}` in a source's URL stands for (SANDBOX_URL). */
    private readonly env: Record<string, string>,
    private readonly now: () => number = Date.now,
  ) {}

  async read(request: OptionsRequest): Promise<OptionsPage> {
    const { userId, key, search, cursor } = request;
    const cacheKey = JSON.stringify([userId, key, search ?? '', cursor ?? '']);
    const known = this.kept.get(cacheKey);
    if (known && known.until > this.now()) return known.page;
    this.kept.delete(cacheKey);
    let page = await this.fetchPage(request);
    for (let pages = 1; pages < LOCAL_SEARCH_PAGES && page.next && !page.options[0] && search; pages++) {
      if (request.source.search !== 'local') break;
      page = await this.fetchPage({ ...request, cursor: page.next });
    }
    this.kept.set(cacheKey, { page, until: this.now() + OPTIONS_TTL_MS });
    // The oldest go first: a Map keeps insertion order.
    for (const oldest of this.kept.keys()) {
      if (this.kept.size <= MAX_KEPT_PAGES) break;
      this.kept.delete(oldest);
    }
    return page;
  }

  private async fetchPage({ userId, source, appName, search, cursor }: OptionsRequest): Promise<OptionsPage> {
    let access: AppAccess | undefined;
    let renew: (() => Promise<AppAccess | undefined>) | undefined;
    try {
      ({ access, renew } = await this.connections.forBlock(userId, source.integration));
    } catch (error) {
      if (error instanceof BlockFailure && error.kind === 'connection')
        throw new OptionsFailure(error.message, 'refused');
      if (error instanceof BlockFailure) throw new OptionsFailure(error.message, 'app');
      throw error;
    }
    const url = this.urlOf(source, access, search, cursor);
    if (!url) {
      throw new OptionsFailure(`The catalog's source for these ${appName} choices has no address to call.`, 'app');
    }
    const shown = `${appName} (${url.origin}${url.pathname})`;
    const send = (credential: AppAccess | undefined) => {
      const sent = new URL(url);
      const headers: Record<string, string> = { accept: 'application/json' };
      // Only to the app's own origin (placement.ts): a source pointing elsewhere gets no credential.
      if (credential && mayCarryCredential(credential, url)) {
        for (const [name, value] of Object.entries(credential.headers)) headers[name.toLowerCase()] = value;
        for (const [name, value] of Object.entries(credential.query)) sent.searchParams.set(name, value);
      }
      // No redirect is followed (undici's request follows none): a credential never goes on to another URL.
      return request(sent, {
        dispatcher: this.apps,
        method: (source.request.method ?? 'GET') as Dispatcher.HttpMethod,
        headers,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    };
    let response: Dispatcher.ResponseData;
    try {
      response = await send(access);
      // A token the app refuses may have expired early: refreshed once, asked once more.
      if (response.statusCode === 401 && renew) {
        const renewed = await renew();
        if (renewed) {
          await response.body.dump();
          response = await send(renewed);
        }
      }
    } catch (error) {
      if (error instanceof BlockFailure) {
        throw new OptionsFailure(error.message, error.kind === 'connection' ? 'refused' : 'app');
      }
      throw this.unreachable(error, shown);
    }
    const status = response.statusCode;
    if (status === 401 || status === 403) {
      await response.body.dump();
      if (!access || Object.keys(access.headers).length + Object.keys(access.query).length === 0) {
        throw new OptionsFailure(`${appName} is not connected; connect it to choose from it.`, 'not-connected');
      }
      throw new OptionsFailure(`${appName} refused the connection (${status}); connect ${appName} again.`, 'refused');
    }
    if (status < 200 || status > 299) {
      await response.body.dump();
      throw new OptionsFailure(`${shown} answered ${status} ${STATUS_CODES[status] ?? ''}.`.replace(' .', '.'), 'app');
    }
    let text: string;
    try {
      text = await readText(response.body);
    } catch (error) {
      throw error instanceof OptionsFailure
        ? new OptionsFailure(`${shown} ${error.message}`, 'app')
        : this.unreachable(error, shown);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new OptionsFailure(`${shown} did not answer with JSON the choices can be read from.`, 'app');
    }
    return mapPage(body, source, search, shown);
  }

  /** Why no answer came: the timeout, or the connection's error code. */
  private unreachable(error: unknown, shown: string): OptionsFailure {
    const e = error as Error & { code?: string };
    return new OptionsFailure(
      e.name === 'TimeoutError'
        ? `${shown} did not answer within ${TIMEOUT_MS / 1000} s.`
        : `${shown} could not be reached (${e.code ?? e.message}).`,
      'app',
    );
  }

  /** Lets go of the kept-alive connections to the apps (when the service stops). */
  close(): Promise<void> {
    return this.apps.close();
  }

  /** The source's URL with `{{env.X}}`, `{{cursor}}` and `{{search}}` filled in; parameters left empty are dropped. */
  private urlOf(
    source: CatalogOptionsSource,
    access: AppAccess | undefined,
    search: string | undefined,
    cursor: string | undefined,
  ): URL | undefined {
    const written = source.request.url.replace(
      /\{\{\s*env\.(\w+)\s*\}\}/g,
      (_all, name: string) => this.env[name] ?? '',
    );
    const absolute = absoluteUrl(written, access?.baseUrl);
    if (!absolute || !URL.canParse(absolute)) return undefined;
    const url = new URL(absolute);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
    const fill = (text: string) =>
      text.replace(
        /\{\{\s*(cursor|search)\s*\}\}/g,
        (_all, name: string) => (name === 'cursor' ? cursor : search) ?? '',
      );
    for (const [name, value] of Object.entries(source.request.query ?? {})) {
      const filled = fill(value);
      if (filled !== '') url.searchParams.set(name, filled);
    }
    const searchBy = source.search;
    if (search && searchBy && searchBy !== 'local') url.searchParams.set(searchBy, search);
    return url;
  }
}

/**
 * The answer's text, UTF-8 (a byte order mark dropped, as `Response.text()` does); past
 * MAX_ANSWER_BYTES the read stops and the connection is let go.
 */
async function readText(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) {
      body.destroy();
      throw new OptionsFailure(
        `answered more than ${MAX_ANSWER_BYTES / 1024 / 1024} MB, too much to read choices from.`,
        'app',
      );
    }
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks, size).toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** A value at a dotted path (`response_metadata.next_cursor`); own properties only. */
export function at(value: unknown, path: string | undefined): unknown {
  if (path === undefined) return value;
  let current = value;
  for (const key of path.split('.')) {
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function mapPage(body: unknown, source: CatalogOptionsSource, search: string | undefined, shown: string): OptionsPage {
  const items = at(body, source.items);
  if (!Array.isArray(items)) {
    throw new OptionsFailure(
      `${shown} answered without a list at "${source.items ?? '(the answer itself)'}", where the catalog says the choices are.`,
      'app',
    );
  }
  const words = source.search === 'local' && search ? search.toLocaleLowerCase() : undefined;
  const options: OptionsPage['options'] = [];
  for (const item of items) {
    const value = at(item, source.value);
    const label = at(item, source.label);
    // Items without a usable value are skipped rather than failing the whole page.
    if (!(typeof value === 'string' && value !== '') && !(typeof value === 'number' && Number.isFinite(value)))
      continue;
    const text = typeof label === 'string' && label.trim() ? label : String(value);
    if (words && !text.toLocaleLowerCase().includes(words)) continue;
    options.push({ value, label: text });
    if (options.length === MAX_OPTIONS) break;
  }
  const next = at(body, source.next);
  return { options, ...(source.next && typeof next === 'string' && next !== '' ? { next } : {}) };
}
