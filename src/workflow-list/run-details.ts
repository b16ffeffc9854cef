import { adoptStyles, css, html, nothing, type ReactiveControllerHost } from 'lit';
import type { ForgeEmbedClient } from '../api/embed-client.js';
import type { Block, ErrorLogEntry, ExecutionLogEntry } from '../api/types.js';
import type { Plural } from '../internal/plural.js';
import { timeTag } from '../internal/time.js';
import type { RunDetailsStrings } from './run-details-strings.js';
import type { WorkflowListStrings } from './strings.js';

/**
 * A workflow's details view, loaded by `<forge-workflow-list>` with `import()` when one first
 * opens, so a list nobody looks into does not pay for it: the recent runs, newest first, a page
 * at a time, each with the blocks it went through and, when it failed, what went wrong in words
 * for the user (the raw entry behind a "technical details" disclosure).
 */

/** Runs per page (the service allows 1 to 30). */
const PAGE = 10;

export const defaultRunDetailsStrings: RunDetailsStrings = {
  runsLabel: (name) => `Runs of ${name}`,
  loadingRuns: 'Loading runs…',
  noRuns: 'No runs yet.',
  runsFailed: (reason) => `The runs could not be loaded. ${reason}`,
  runSucceeded: 'Succeeded',
  runFailed: 'Failed',
  runSteps: (steps) => `Steps: ${steps}`,
  runError: {
    connection: (block) => `“${block}” could not sign in: the app refused the connection. Reconnect it.`,
    settings: (block) => `“${block}” stopped at a setting that is missing or not valid. Check the settings.`,
    app: (block) => `The app did not accept what “${block}” sent. If it keeps happening, check the settings.`,
    internal: (block) => `“${block}” could not finish. If it keeps happening, contact support.`,
  },
  technicalDetails: 'Technical details',
  loadMore: 'Load more',
  duration: (seconds, plural) => plural(seconds, { one: '# second', other: '# seconds' }),
};

/**
 * The view's own styles, carried with it rather than in the list's (whose module loads with the
 * page). A constructable stylesheet the list's shadow root adopts when the first view opens, not a
 * `<style>` element: a page whose Content-Security-Policy says `style-src 'self'` blocks those.
 */
const styles = css`
  .details {
    grid-column: 1 / -1;
    display: grid;
    gap: 0.5rem;
    padding: 0.75rem;
    border-radius: calc(var(--_radius) * 0.8);
    background: var(--_raised);
  }
  .runs {
    display: grid;
    gap: 0.75rem;
    margin: 0;
    padding: 0;
    list-style: none;
  }
  .run {
    display: grid;
    grid-template-columns: auto minmax(0, 1fr);
    gap: 0.5rem;
    align-items: start;
  }
  .run-text {
    display: grid;
    gap: 0.125rem;
    overflow-wrap: anywhere;
  }
  summary {
    cursor: pointer;
    width: fit-content;
    border-radius: 0.25rem;
  }
  pre {
    margin: 0.25rem 0 0;
    padding: 0.5rem;
    white-space: pre-wrap;
    font-size: 0.8125rem;
    background: var(--_surface);
    border: 1px solid var(--_border);
    border-radius: 0.375rem;
  }
  .details .button {
    justify-self: start;
  }
`;

/** Adds the view's stylesheet to `root`'s, once; Lit's own stay first. */
function adoptInto(root: ShadowRoot): void {
  const sheet = styles.styleSheet;
  if (!sheet) {
    // No constructable stylesheets (Lit's fallback then adds `<style>` elements).
    adoptStyles(root, [styles]);
    return;
  }
  if (!root.adoptedStyleSheets.includes(sheet)) root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
}

export class RunDetails {
  readonly #host: ReactiveControllerHost;
  readonly #client: ForgeEmbedClient;
  readonly #workflowId: string;
  readonly #signal: AbortSignal;
  /** Fires `forge-error` and answers the message to show. */
  readonly #report: (error: unknown) => string;
  #runs: ExecutionLogEntry[] = [];
  /** The workflow's error entries by execution. */
  #errors = new Map<string, ErrorLogEntry>();
  #pages = 0;
  #more = true;
  #loading = false;
  #failure?: string | undefined;

  constructor(
    host: ReactiveControllerHost & { renderRoot: HTMLElement | DocumentFragment },
    client: ForgeEmbedClient,
    workflowId: string,
    signal: AbortSignal,
    report: (error: unknown) => string,
  ) {
    this.#host = host;
    if (host.renderRoot instanceof ShadowRoot) adoptInto(host.renderRoot);
    this.#client = client;
    this.#workflowId = workflowId;
    this.#signal = signal;
    this.#report = report;
  }

  /** Reads the next page of runs (with the first, the workflow's error entries). */
  async loadMore(): Promise<void> {
    if (this.#loading) return;
    this.#loading = true;
    this.#failure = undefined;
    this.#host.requestUpdate();
    const path = `/workflow/${encodeURIComponent(this.#workflowId)}`;
    const signal = this.#signal;
    try {
      const [page, errors] = await Promise.all([
        this.#client.request<{ data: ExecutionLogEntry[] }>(
          'GET',
          `${path}/logs?page=${this.#pages + 1}&limit=${PAGE}`,
          undefined,
          { signal },
        ),
        this.#pages
          ? undefined
          : this.#client.request<{ errors: ErrorLogEntry[] }>('GET', `${path}/errors`, undefined, { signal }),
      ]);
      for (const entry of errors?.errors ?? []) this.#errors.set(entry.executionId, entry);
      // A run that started since the first page pushes the pages down by one: skip what is shown.
      const shown = new Set(this.#runs.map((run) => run.executionId));
      this.#runs.push(...page.data.filter((run) => !shown.has(run.executionId)));
      this.#pages++;
      this.#more = page.data.length === PAGE;
    } catch (error) {
      if (signal.aborted) return;
      this.#failure = this.#report(error);
    }
    this.#loading = false;
    this.#host.requestUpdate();
  }

  /** Starts again from the newest run: the workflow ran since the view opened. */
  reload(): Promise<void> {
    this.#runs = [];
    this.#errors.clear();
    this.#pages = 0;
    this.#more = true;
    return this.loadMore();
  }

  /** `texts`: the list's, which hold any replacements of this view's texts over the English defaults here. */
  render(
    texts: Omit<WorkflowListStrings, keyof RunDetailsStrings>,
    { id, name, blocks }: { id: string; name: string; blocks: Pick<Block, 'id' | 'name'>[] },
    locale: string,
    plural: Plural,
  ) {
    const t: WorkflowListStrings = { ...defaultRunDetailsStrings, ...texts };
    const names = new Map(blocks.map((block) => [block.id, block.name]));
    const runs = this.#runs;
    let state: unknown = nothing;
    if (this.#failure) state = html`<p class="small danger" role="alert">${t.runsFailed(this.#failure)}</p>`;
    else if (!runs[0])
      state = html`<p class="small muted" role="status">${this.#loading ? t.loadingRuns : t.noRuns}</p>`;
    return html`<div class="details" part="details" id=${id} role="region" aria-label=${t.runsLabel(name)} aria-busy=${this.#loading}>
        ${
          runs[0]
            ? html`<ol class="runs">
                ${runs.map((run) => {
                  const error = this.#errors.get(run.executionId);
                  const failed = !run.finished;
                  const seconds = Math.round((Date.parse(run.stoppedAt) - Date.parse(run.startedAt)) / 1000);
                  const steps = run.results.map((result) => names.get(result.blockId) ?? result.blockId);
                  return html`<li class="run ${failed ? 'failed' : 'ok'}" part="run">
                    <span class="glyph" aria-hidden="true">${failed ? '!' : '✓'}</span>
                    <span class="run-text">
                      <span>
                        <strong>${failed ? t.runFailed : t.runSucceeded}</strong>
                        · ${timeTag(run.startedAt, locale, (when) => when)}
                        ${seconds ? html`· ${t.duration(seconds, plural)}` : nothing}
                      </span>
                      <span class="small muted">${t.runSteps(steps.join(' → '))}</span>
                      ${
                        error
                          ? html`<span class="small">${t.runError[error.kind](names.get(error.blockId) ?? error.blockType)}</span>
                              <details class="small">
                                <summary>${t.technicalDetails}</summary>
                                <pre><bdi>${error.error}</bdi>\n\n${error.blockType} · ${error.blockId}\n${error.createdAt} · ${error._id}</pre>
                              </details>`
                          : nothing
                      }
                    </span>
                  </li>`;
                })}
              </ol>`
            : nothing
        }
        ${state}
        ${
          this.#more && (this.#pages || this.#failure)
            ? html`<button
                type="button"
                class="button"
                part="load-more-button"
                aria-disabled=${this.#loading}
                @click=${() => this.loadMore()}
              >
                ${this.#failure ? t.retry : t.loadMore}
              </button>`
            : nothing
        }
      </div>`;
  }
}
