import { UseOrderedMap } from '../use-order.js';
import { parentView, workflowSummariesView } from '../views.js';
import type { Catalog, CatalogWorkflow } from './catalog.js';

/**
 * All the answers kept take at most this many characters (or bytes, for those kept encoded)
 * together: a catalog of 10,000 workflows makes GET /workflow 12 MB of JSON, and every origin
 * the service is reached at (the Host header) has answers of its own.
 */
const KEPT_CHARACTERS = 64 * 1024 * 1024;

/** What GET /setup offers: one parent, or the parents that use an integration. */
export type SetupFilter = { workflowId: string } | { integration: string };

/**
 * The parts of answers that only change with the catalog, as JSON text, made once per origin and
 * filter rather than per request: the catalog does not change while the service runs, and
 * `JSON.stringify` of GET /workflow's answer was a sixth of a request's CPU (issue 29). Each text
 * is exactly what `JSON.stringify` of the answer gives, so the bytes sent are those of an answer
 * made afresh. The least recently used go first once KEPT_CHARACTERS are kept.
 */
export class CatalogAnswers {
  private readonly texts = new UseOrderedMap<string, string | Buffer>();
  private characters = 0;

  constructor(private readonly catalog: Catalog) {}

  /**
   * GET /workflow's answer, `{"data": [parents]}`, in UTF-8: sent whole, it is encoded once
   * rather than at every send (11 KB for the demo catalog).
   */
  workflowList(base: string, integration: string | undefined): Buffer {
    return this.kept(['list', base, this.filter(integration)], () =>
      Buffer.from(JSON.stringify({ data: this.catalog.list(integration).map((w) => parentView(w, base)) })),
    );
  }

  /** GET /workflow-summary's answer, in UTF-8 as the list's. */
  workflowSummaries(base: string, integration: string | undefined): Buffer {
    return this.kept(['summary', base, this.filter(integration)], () =>
      Buffer.from(JSON.stringify(workflowSummariesView(this.catalog.list(integration), base, this.catalog.about))),
    );
  }

  /**
   * The parents GET /setup offers, a JSON array of GET /workflow's entries: `parents` are the
   * catalog's, those of `workflowId` (one active parent) or `integration`.
   */
  setupParents(base: string, by: SetupFilter, parents: CatalogWorkflow[]): string {
    return this.kept(['setup', base, this.setupFilter(by)], () =>
      JSON.stringify(parents.map((parent) => parentView(parent, base))),
    );
  }

  /**
   * GET /setup's filter as a key: one parent's id (an active one: others are refused first), or an
   * integration as `filter` keys it. Requests with the same key offer the same parents.
   */
  setupFilter(by: SetupFilter): string {
    return 'workflowId' in by ? `id:${by.workflowId}` : `integration:${this.filter(by.integration)}`;
  }

  /**
   * An integration filter as a key: the names the catalog knows, and one key for every other
   * (all answer no workflows), so that requests naming made-up integrations do not fill the cache.
   */
  private filter(integration: string | undefined): string {
    if (integration === undefined) return '';
    return this.catalog.integrations.has(integration) ? `=${integration}` : '?';
  }

  private kept<Answer extends string | Buffer>(parts: string[], make: () => Answer): Answer {
    const key = parts.join('\n');
    const known = this.texts.get(key);
    if (known !== undefined) return known as Answer;
    const text = make();
    if (text.length > KEPT_CHARACTERS) return text;
    this.texts.set(key, text);
    this.characters += text.length;
    for (const [oldKey, old] of this.texts.leastRecentFirst()) {
      if (this.characters <= KEPT_CHARACTERS) break;
      this.texts.delete(oldKey);
      this.characters -= old.length;
    }
    return text;
  }
}
