import type { Block, FieldError, ParentWorkflow, VariableValue, VariableValues } from '../api/types.js';

/** One variable of a variable block, as a field of the settings form. */
export interface SettingField {
  /** Unique within the modal (a parent id, a block id and a variable name). */
  key: string;
  parentId: string;
  blockId: string;
  name: string;
  label: string;
  description?: string;
  /** A variable whose default is a number stays a number (the service insists). */
  numeric: boolean;
}

export const fieldKey = (parentId: string, blockId: string, name: string) => `${parentId}\n${blockId}\n${name}`;

const ACRONYMS = new Set(['id', 'url', 'api', 'uri', 'ip']);

/** `minimumAmount`, `sheet_name`, `spreadsheetId` → "Minimum amount", "Sheet name", "Spreadsheet ID". */
export function humanise(name: string): string {
  const words = name
    .replace(/([a-z\d])([A-Z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .filter(Boolean)
    .map((word) => (ACRONYMS.has(word.toLowerCase()) ? word.toUpperCase() : word.toLowerCase()));
  const sentence = words.join(' ');
  return sentence.charAt(0).toUpperCase() + sentence.slice(1);
}

export function variableBlocks(blocks: readonly Block[]): Block[] {
  return blocks.filter((block) => block.type === 'variables' && (block.parameters.variables?.length ?? 0) > 0);
}

/** The fields of a parent workflow's variable blocks, in block order. */
export function settingFields(parent: ParentWorkflow): SettingField[] {
  return variableBlocks(parent.blocks).flatMap((block) =>
    (block.parameters.variables ?? []).map((variable) => ({
      key: fieldKey(parent.workflowId, block.id, variable.name),
      parentId: parent.workflowId,
      blockId: block.id,
      name: variable.name,
      label: humanise(variable.name),
      ...(variable.description ? { description: variable.description } : {}),
      numeric: typeof variable.value === 'number',
    })),
  );
}

/** The variable values of `blocks` (a child's current ones, or a parent's defaults) by field key. */
export function valuesOf(parentId: string, blocks: readonly Block[]): Map<string, VariableValue> {
  const values = new Map<string, VariableValue>();
  for (const block of variableBlocks(blocks)) {
    for (const variable of block.parameters.variables ?? []) {
      values.set(fieldKey(parentId, block.id, variable.name), variable.value);
    }
  }
  return values;
}

/** What the user typed, as the service wants it: numbers for numeric fields, else the text. */
export function parseField(field: SettingField, text: string): VariableValue | undefined {
  if (!field.numeric) return text;
  const number = Number(text);
  return text.trim() === '' || !Number.isFinite(number) ? undefined : number;
}

/** Groups field values by block, for an install body or one PATCH per block. */
export function byBlock(fields: readonly SettingField[], values: ReadonlyMap<string, VariableValue>) {
  const blocks: Record<string, VariableValues> = {};
  for (const field of fields) {
    const value = values.get(field.key);
    if (value === undefined) continue;
    blocks[field.blockId] ??= {};
    blocks[field.blockId]![field.name] = value;
  }
  return blocks;
}

/**
 * Finds the field each of the service's field errors belongs to. An install names fields
 * `body.variables.<blockId>.<name>`; a PATCH of one block names them `body.<name>`. Errors
 * that name no field are left to the message about the whole save.
 */
export function placeErrors(
  errors: readonly FieldError[],
  fields: readonly SettingField[],
  patchedBlockId?: string,
): Map<string, string> {
  const byField = new Map<string, string>();
  for (const error of errors) {
    const field = fields.find((f) =>
      patchedBlockId
        ? f.blockId === patchedBlockId && error.path === `body.${f.name}`
        : error.path === `body.variables.${f.blockId}.${f.name}`,
    );
    if (field) byField.set(field.key, error.message);
  }
  return byField;
}
