import { expect } from '@open-wc/testing';
import type { Block, ParentWorkflow } from '../../src/api/types.js';
import { byBlock, humanise, settingFields, valueIn, variableBlocks } from '../../src/config-modal/settings.js';

const block = (
  id: string,
  variables: Array<{ name: string; value: string | number; description?: string }>,
): Block => ({
  id,
  name: `Block ${id}`,
  type: 'variables',
  parameters: { variables: variables.map((v, i) => ({ uuid: `${id}-${i}`, ...v })) },
});

const parent: ParentWorkflow = {
  workflowId: 'p1',
  name: 'Payments to Slack',
  integrations: [],
  blocks: [
    { id: 'hook', name: 'Webhook', type: 'webhook', parameters: {} },
    block('b1', [
      { name: 'channel', value: '#payments', description: 'Where to post' },
      { name: 'minimumAmount', value: 50 },
    ]),
    block('empty', []),
    block('b2', [{ name: 'sheet_name', value: 'Sales' }]),
  ],
};

describe('settings', () => {
  it('names variables the way people write them', () => {
    expect(humanise('minimumAmount')).to.equal('Minimum amount');
    expect(humanise('sheet_name')).to.equal('Sheet name');
    expect(humanise('spreadsheetId')).to.equal('Spreadsheet ID');
    expect(humanise('api-url')).to.equal('API URL');
  });

  it('makes a field of each variable of the variable blocks, in block order; numbers stay numbers', () => {
    expect(variableBlocks(parent.blocks).map((b) => b.id)).to.deep.equal(['b1', 'b2']);
    const fields = settingFields(parent);
    expect(fields.map((f) => [f.block, f.name, f.label, f.numeric])).to.deep.equal([
      ['b1', 'channel', 'Channel', false],
      ['b1', 'minimumAmount', 'Minimum amount', true],
      ['b2', 'sheet_name', 'Sheet name', false],
    ]);
    expect(fields[0]!.description).to.equal('Where to post');
    expect(new Set(fields.map((f) => f.key)).size, 'keys are unique').to.equal(3);
  });

  it('reads a field value out of blocks, and groups values by block for the service', () => {
    const [channel, minimum, sheet] = settingFields(parent);
    expect(valueIn(parent.blocks, minimum!)).to.equal(50);
    expect(valueIn([], channel!)).to.equal(undefined);
    const values = new Map<string, string | number>([
      [channel!.key, '#sales'],
      [minimum!.key, 125],
      [sheet!.key, 'Q3'],
    ]);
    expect(byBlock(settingFields(parent), (f) => values.get(f.key)!)).to.deep.equal({
      b1: { channel: '#sales', minimumAmount: 125 },
      b2: { sheet_name: 'Q3' },
    });
  });
});
