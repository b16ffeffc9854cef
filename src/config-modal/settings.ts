// The service's own number rule, compiled into this package too (see the file).
import { numberFrom } from '../../server/shared/number.js';
import type { Block, ParentWorkflow, VariableValue, VariableValues } from '../api/types.js';

/** One variable of a variable block, as a field of the settings form. */
export interface SettingField {
  /** Unique within the modal: the parent id, the block id and the variable name. */
  key: string;
  block: string;
  name: string;
  label: string;
  description: string | undefined;
  /** A variable whose default is a number stays a number (the service insists). */
  numeric: boolean;
}

/** `minimumAmount`, `sheet_name`, `spreadsheetId` → "Minimum amount", "Sheet name", "Spreadsheet ID". */
export function humanise(name: string): string {
  const sentence = name
    .replace(/([a-z\d])([A-Z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .filter(Boolean)
    .map((word) => (/^(id|url|api|uri|ip)$/i.test(word) ? word.toUpperCase() : word.toLowerCase()))
    .join(' ');
  return sentence.charAt(0).toUpperCase() + sentence.slice(1);
}

export const variableBlocks = (blocks: readonly Block[]): Block[] =>
  blocks.filter((block) => block.type === 'variables' && block.parameters.variables?.length);

/** The fields of a parent workflow's variable blocks, in block order. */
export const settingFields = (parent: ParentWorkflow): SettingField[] =>
  variableBlocks(parent.blocks).flatMap((block) =>
    block.parameters.variables!.map(({ name, description, value }) => ({
      key: `${parent.workflowId}\n${block.id}\n${name}`,
      block: block.id,
      name,
      label: humanise(name),
      description,
      numeric: typeof value === 'number',
    })),
  );

/**
 * What the service is sent for a field's text: the text, or for a numeric field the number it
 * stands for by the service's number rule; undefined when a numeric field's text is no number.
 */
export const fieldValue = (field: SettingField, text: string): VariableValue | undefined =>
  field.numeric ? numberFrom(text) : text;

/** A field's value in `blocks`: a child's current one, or a parent's default. */
export const valueIn = (blocks: readonly Block[], { block, name }: SettingField): VariableValue | undefined =>
  blocks.find((b) => b.id === block)?.parameters.variables?.find((v) => v.name === name)?.value;

/** Groups field values by block, for an install body or one PATCH per block. */
export function byBlock(fields: readonly SettingField[], value: (field: SettingField) => VariableValue) {
  const blocks: Record<string, VariableValues> = {};
  for (const field of fields) (blocks[field.block] ??= {})[field.name] = value(field);
  return blocks;
}
