import type { ForgeApiError, ForgeEmbedClient } from '../api/embed-client.js';
import type { VariableValue } from '../api/types.js';
import type { ForgeEventDetails } from '../events.js';
import { byBlock, type SettingField, settingFields } from './settings.js';
import type { Installed, Loaded } from './state.js';

/** The events a save fires, each as soon as the service confirmed what it reports. */
type SaveEvent = 'forge-install' | 'forge-update' | 'forge-toggle';

export interface SaveRequest {
  client: ForgeEmbedClient;
  /** The open: its copies and saved values are brought up to date as each step succeeds. */
  loaded: Loaded;
  /** Parent ids of the workflows switched on. */
  selected: ReadonlySet<string>;
  /** A field's value as the service wants it (numbers for numeric fields). */
  valueFor: (field: SettingField) => VariableValue;
  emit: <K extends SaveEvent>(name: K, detail: ForgeEventDetails[K]) => void;
  /** Where the service's field errors go, by field key. */
  errors: Map<string, string>;
  signal: AbortSignal;
}

/**
 * Puts each of the service's field errors in `error` under the key of the field it belongs to;
 * `keys` maps error paths to field keys.
 */
export function placeFieldErrors(
  error: unknown,
  keys: Array<[path: string, key: string]>,
  errors: Map<string, string>,
): void {
  const byPath = new Map(keys);
  for (const { path, message } of (error as ForgeApiError).errors ?? []) {
    const key = byPath.get(path);
    if (key) errors.set(key, message);
  }
}

/**
 * Saves an open, one workflow after another: installs what is new (and, when another tab
 * installed it meanwhile, writes into that copy), PATCHes only the variable blocks that changed
 * and, in the integration view, switches installed workflows on or off. Each success is recorded
 * in `loaded` as it happens (and its event fires), so a retry after a failure repeats only what
 * did not go through. Rejects with the first failure.
 */
export async function saveSettings({
  client,
  loaded,
  selected,
  valueFor,
  emit,
  errors,
  signal,
}: SaveRequest): Promise<void> {
  const options = { signal };
  const switchOnOff = loaded.mode === 'integration';
  const { installed, saved } = loaded;
  const toggle = async (copy: Installed, active: boolean) => {
    await client[active ? 'activateWorkflow' : 'deactivateWorkflow'](copy.workflowId, options);
    copy.active = active;
    emit('forge-toggle', { workflowId: copy.workflowId, active });
  };
  for (const parent of loaded.workflows) {
    const parentId = parent.workflowId;
    const fields = settingFields(parent);
    let copy = installed.get(parentId);
    if (!selected.has(parentId)) {
      if (switchOnOff && copy?.active) await toggle(copy, false);
      continue;
    }
    if (!copy) {
      try {
        const body = { variables: byBlock(fields, valueFor) };
        const { workflowId } = await client.installWorkflow(parentId, body, options);
        installed.set(parentId, { workflowId, active: true });
        for (const field of fields) saved.set(field.key, valueFor(field));
        emit('forge-install', { parentId, workflowId });
        continue;
      } catch (error) {
        const { status, problem } = error as ForgeApiError;
        const existing = status === 409 && problem?.workflowId;
        if (typeof existing !== 'string') {
          placeFieldErrors(
            error,
            fields.map((f) => [`body.variables.${f.block}.${f.name}`, f.key]),
            errors,
          );
          throw error;
        }
        // Installed meanwhile (another tab): save the values into that copy. What it holds is
        // unknown, so every block is written.
        installed.set(parentId, (copy = { workflowId: existing, active: true }));
        for (const field of fields) saved.delete(field.key);
      }
    }
    if (switchOnOff && !copy.active) await toggle(copy, true);
    const changed = fields.filter((field) => saved.get(field.key) !== valueFor(field));
    const blockIds: string[] = [];
    try {
      for (const [blockId, values] of Object.entries(byBlock(changed, valueFor))) {
        const inBlock = fields.filter((field) => field.block === blockId);
        try {
          await client.setVariables(copy.workflowId, blockId, values, options);
        } catch (error) {
          placeFieldErrors(
            error,
            inBlock.map((f) => [`body.${f.name}`, f.key]),
            errors,
          );
          throw error;
        }
        for (const field of inBlock) saved.set(field.key, valueFor(field));
        blockIds.push(blockId);
      }
    } finally {
      if (blockIds[0]) emit('forge-update', { workflowId: copy.workflowId, blockIds });
    }
  }
}
