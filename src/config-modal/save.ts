import { ForgeApiError, type ForgeClient } from '../api/client.js';
import type { VariableValue } from '../api/types.js';
import type { ForgeEventDetails } from '../events.js';
import { byBlock, fieldKey, placeErrors, type SettingField, settingFields } from './settings.js';
import type { Installed, Mode, Setup } from './setup.js';

type SaveEvent = 'forge-install' | 'forge-update' | 'forge-toggle';

export interface SaveOptions {
  client: ForgeClient;
  setup: Setup;
  mode: Mode;
  /** Parent ids of the workflows switched on. */
  selected: ReadonlySet<string>;
  /** The user's copies by parent id; updated as each write succeeds. */
  installed: Map<string, Installed>;
  /** The parsed form values by field key. */
  values: ReadonlyMap<string, VariableValue>;
  signal: AbortSignal;
  /** Told of each write as it succeeds, so its event fires even if a later one fails. */
  notify: <K extends SaveEvent>(name: K, detail: ForgeEventDetails[K]) => void;
}

/** A failed write; `fieldErrors` holds the service's field errors that belong next to a field. */
export class SaveError extends Error {
  override readonly name = 'SaveError';
  constructor(
    override readonly cause: unknown,
    readonly fieldErrors: Map<string, string>,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

/**
 * Installs what is new, PATCHes only the variable blocks that changed and, in the integration
 * view, switches installed workflows on or off, one workflow after another. Each success is
 * recorded in `installed` as it happens, so a retry after a failure repeats only what did not
 * go through.
 */
export async function saveWorkflows(options: SaveOptions): Promise<void> {
  const { client, setup, mode, selected, installed, values, signal, notify } = options;
  for (const { parent } of setup.workflows) {
    const parentId = parent.workflowId;
    const fields = settingFields(parent);
    let copy = installed.get(parentId);
    if (!selected.has(parentId)) {
      if (mode === 'integration' && copy?.active) {
        await client.deactivateWorkflow(copy.workflowId, { signal });
        copy.active = false;
        notify('forge-toggle', { workflowId: copy.workflowId, active: false });
      }
      continue;
    }
    if (!copy) {
      const mine = new Map(fields.map((f) => [f.key, values.get(f.key)!]));
      try {
        const body = { variables: byBlock(fields, mine) };
        const { workflowId } = await client.installWorkflow(parentId, body, { signal });
        installed.set(parentId, { workflowId, active: true, saved: mine });
        notify('forge-install', { parentId, workflowId });
        continue;
      } catch (error) {
        const existing = error instanceof ForgeApiError && error.status === 409 ? error.problem.workflowId : undefined;
        if (typeof existing !== 'string') throw saveError(error, fields);
        // Installed meanwhile (another tab): save the values into that copy. What it holds is
        // unknown, so every block is written.
        copy = { workflowId: existing, active: true, saved: new Map() };
        installed.set(parentId, copy);
      }
    }
    if (mode === 'integration' && !copy.active) {
      await client.activateWorkflow(copy.workflowId, { signal });
      copy.active = true;
      notify('forge-toggle', { workflowId: copy.workflowId, active: true });
    }
    await saveChangedBlocks(options, copy, fields);
  }
}

async function saveChangedBlocks(
  { client, values, signal, notify }: SaveOptions,
  copy: Installed,
  fields: SettingField[],
) {
  const changed = fields.filter((f) => copy.saved.get(f.key) !== values.get(f.key));
  const blockIds: string[] = [];
  try {
    for (const [blockId, blockValues] of Object.entries(byBlock(changed, values))) {
      try {
        await client.setVariables(copy.workflowId, blockId, blockValues, { signal });
      } catch (error) {
        throw saveError(error, fields, blockId);
      }
      for (const [name, value] of Object.entries(blockValues)) {
        copy.saved.set(fieldKey(fields[0]!.parentId, blockId, name), value);
      }
      blockIds.push(blockId);
    }
  } finally {
    if (blockIds.length > 0) notify('forge-update', { workflowId: copy.workflowId, blockIds });
  }
}

function saveError(error: unknown, fields: SettingField[], patchedBlockId?: string): SaveError {
  const errors = error instanceof ForgeApiError ? error.errors : [];
  return new SaveError(error, placeErrors(errors, fields, patchedBlockId));
}
