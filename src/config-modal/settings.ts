// The service's own rules for values, compiled into this package too (see the file): the
// modal refuses exactly what the service would.
import { checkValue, typeOf, type ValueCheck, type ValueProblem } from '../../server/shared/variable-rules.js';
import type { Block, ParentWorkflow, Variable, VariableValue, VariableValues } from '../api/types.js';
import type { ConfigModalStrings } from './strings.js';

/** One variable of a variable block, as a field of the settings form. */
export interface SettingField {
  /** Unique within the modal: the parent id, the block id and the variable name. */
  key: string;
  block: string;
  name: string;
  label: string;
  description: string | undefined;
  /** The variable as the catalog defines it: its type and rules. */
  variable: Variable;
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
    block.parameters.variables!.map((variable) => ({
      key: `${parent.workflowId}\n${block.id}\n${variable.name}`,
      block: block.id,
      name: variable.name,
      label: variable.displayName ?? humanise(variable.name),
      description: variable.description,
      // A numeric default without a type makes a field that needs a number: the service keeps a
      // text sent for it as text (the seed's rule), but a person typing into it means a number.
      variable:
        variable.type || typeof variable.value !== 'number'
          ? variable
          : { ...variable, type: 'number', required: true },
      numeric: typeOf(variable) === 'number',
    })),
  );

/**
 * What the service is sent for a field's text (a switch's is `true` or `false`), or the rule the
 * text breaks: the service's own check, so what the modal sends is what the service stores.
 */
export const fieldValue = (field: SettingField, text: string): ValueCheck => checkValue(field.variable, text);

/** A field's value in `blocks`: a child's current one, or a parent's default. */
export const valueIn = (blocks: readonly Block[], { block, name }: SettingField): VariableValue | undefined =>
  blocks.find((b) => b.id === block)?.parameters.variables?.find((v) => v.name === name)?.value;

/** Groups field values by block, for an install body or one PATCH per block. */
export function byBlock(fields: readonly SettingField[], value: (field: SettingField) => VariableValue) {
  const blocks: Record<string, VariableValues> = {};
  for (const field of fields) (blocks[field.block] ??= {})[field.name] = value(field);
  return blocks;
}

/** Why a field's value is refused, in the element's words (a catalog's `patternMessage` as written). */
export function problemText(t: ConfigModalStrings, { label, numeric }: SettingField, problem: ValueProblem): string {
  switch (problem.rule) {
    case 'required':
      return numeric ? t.numberRequired(label) : t.valueRequired(label);
    case 'type':
      return problem.expected === 'number' || problem.expected === 'string or number'
        ? t.numberRequired(label)
        : t.valueRequired(label);
    case 'min':
      return t.numberAtLeast(label, problem.min);
    case 'max':
      return t.numberAtMost(label, problem.max);
    case 'email':
      return t.emailRequired(label);
    case 'url':
      return t.urlRequired(label);
    case 'pattern':
      return problem.message ?? t.patternMismatch(label);
    case 'option':
      return t.optionRequired(label);
    case 'tooLong':
      return t.textTooLong(label, problem.max);
  }
}
