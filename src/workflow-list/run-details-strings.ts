import type { Plural } from '../internal/plural.js';

/**
 * The texts of a workflow's details view, part of `WorkflowListStrings` (register them under
 * `workflowList`). Their English defaults load with the view (run-details.ts), not with the list.
 */
export interface RunDetailsStrings {
  /** Accessible name of the details view; `name` is the workflow's. */
  runsLabel: (name: string) => string;
  loadingRuns: string;
  noRuns: string;
  runsFailed: (reason: string) => string;
  /** A run's outcome, said beside its icon. */
  runSucceeded: string;
  runFailed: string;
  /** The blocks a run went through, by their names. */
  runSteps: (steps: string) => string;
  /** What failed, for an end user; `block` is the block's name. */
  runError: Record<'connection' | 'settings' | 'app' | 'internal', (block: string) => string>;
  technicalDetails: string;
  loadMore: string;
  /** How long a run took. */
  duration: (seconds: number, plural: Plural) => string;
}
