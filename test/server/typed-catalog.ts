/**
 * A catalog for the tests of typed variables (issue 26): the demo catalog plus one workflow whose
 * variable block holds a variable of every type and rule, and one without `type` of each kind
 * (catalogs written before types). Written to a temporary file for a service to start with.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DemoWorkflow, demoCatalog } from './support.js';

export const TYPED_BLOCK = '3f2b8e4c-5a1d-4c7e-9b6a-0d4e8f1a2b3c';

export const typedWorkflow = {
  workflowId: 'typed-settings',
  name: 'Typed settings',
  description: 'Every kind of setting, for the tests.',
  integrations: ['slack'],
  blocks: [
    {
      id: TYPED_BLOCK,
      name: 'Settings',
      type: 'variables',
      parameters: {
        variables: [
          {
            uuid: '6c1f0d5e-2b7a-4e3c-8d9f-1a2b3c4d5e6f',
            name: 'channel',
            value: '',
            displayName: 'Slack channel',
            description: 'Where the announcement goes.',
            type: 'select',
            required: true,
            source: {
              integration: 'slack',
              request: {
                method: 'GET',
                url: '{{env.SANDBOX_URL}}/slack/conversations.list',
                query: { types: 'public_channel', limit: '3', cursor: '{{cursor}}' },
              },
              items: 'channels',
              value: 'id',
              label: 'name',
              next: 'response_metadata.next_cursor',
              search: 'local',
            },
          },
          {
            uuid: '7d2e1f6a-3c8b-4f4d-9e0a-2b3c4d5e6f70',
            name: 'pipeline',
            value: 'sales',
            displayName: 'Pipeline',
            type: 'select',
            options: [
              { value: 'sales', label: 'Sales' },
              { value: 'renewals', label: 'Renewals' },
            ],
          },
          {
            uuid: '8e3f2a7b-4d9c-4a5e-8f1b-3c4d5e6f7081',
            name: 'priority',
            value: 1,
            type: 'select',
            options: [
              { value: 1, label: 'Low' },
              { value: 2, label: 'High' },
            ],
          },
          {
            uuid: '9f4a3b8c-5e0d-4b6f-9a2c-4d5e6f708192',
            name: 'weekends',
            value: false,
            displayName: 'Notify on weekends',
            type: 'boolean',
          },
          {
            uuid: 'a05b4c9d-6f1e-4c7a-8b3d-5e6f708192a3',
            name: 'spreadsheetId',
            value: '',
            displayName: 'Spreadsheet ID',
            type: 'string',
            required: true,
            pattern: '^[A-Za-z0-9_-]{20,}$',
            patternMessage: 'Paste the id from the sheet’s address: 20 or more letters, digits, - or _.',
          },
          {
            uuid: 'b16c5d0e-7a2f-4d8b-9c4e-6f708192a3b4',
            name: 'threshold',
            value: 50,
            type: 'number',
            min: 0,
            max: 100,
          },
          { uuid: 'c27d6e1f-8b3a-4e9c-8d5f-708192a3b4c5', name: 'notes', value: '', type: 'text' },
          { uuid: 'd38e7f2a-9c4b-4fad-9e6a-8192a3b4c5d6', name: 'owner', value: '', type: 'email' },
          { uuid: 'e49f8a3b-ad5c-4abe-8f7b-92a3b4c5d6e7', name: 'link', value: '', type: 'url' },
          { uuid: 'f5a09b4c-be6d-4bcf-9a8c-a3b4c5d6e7f8', name: 'count', value: 5 },
          { uuid: '06b1ac5d-cf7e-4cd0-8b9d-b4c5d6e7f809', name: 'label', value: 'x' },
        ],
      },
    },
    {
      id: '17c2bd6e-d08f-4de1-9cae-c5d6e7f8091a',
      name: 'Post',
      type: 'http',
      integration: 'slack',
      parameters: {
        method: 'POST',
        url: '{{env.SANDBOX_URL}}/slack/chat.postMessage',
        body: { channel: '{{vars.channel}}' },
      },
    },
  ],
};

/** Values that keep every rule of the typed workflow. */
export const validTypedValues = { channel: 'C0001', spreadsheetId: 'a'.repeat(24) };

/** Writes the catalog (`change` may alter a copy first) and answers its path and a removal. */
export function typedCatalogFile(change?: (catalog: typeof demoCatalog) => void): {
  path: string;
  remove: () => void;
} {
  const catalog = structuredClone(demoCatalog);
  catalog.workflows.push(structuredClone(typedWorkflow) as unknown as DemoWorkflow);
  change?.(catalog);
  const dir = mkdtempSync(join(tmpdir(), 'forge-typed-'));
  const path = join(dir, 'catalog.json');
  writeFileSync(path, JSON.stringify(catalog));
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
