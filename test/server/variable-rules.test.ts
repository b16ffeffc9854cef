/**
 * Typed variables (issue 26): the rules of server/shared/variable-rules.ts as the service keeps
 * them on install and set-variable (a 400 whose errors[].path names the variable), the seed's
 * shapes and string-for-number values as before, the catalog checked at start, and a property
 * that the modal's check and the service's decision agree on generated texts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { startService } from '../../server/app.js';
import type { ParentWorkflow } from '../../src/api/types.js';
import { fieldValue, settingFields } from '../../src/config-modal/settings.js';
import { assertKeys, assertProblem, demoCatalog, TestService } from './support.js';
import { TYPED_BLOCK, typedCatalogFile, typedWorkflow, validTypedValues } from './typed-catalog.js';

const catalog = typedCatalogFile();
let forge: TestService;
before(async () => {
  forge = await TestService.start({ catalog: catalog.path });
});
after(async () => {
  await forge.close();
  catalog.remove();
});

const variablesOf = (parent: { blocks: Array<{ id: string; parameters: { variables?: unknown[] } }> }) =>
  parent.blocks.find((b) => b.id === TYPED_BLOCK)!.parameters.variables as Array<Record<string, unknown>>;

/** A user with the typed workflow installed (with `values`, else the valid ones). */
async function typedChild(values: Record<string, unknown> = validTypedValues) {
  const { userId, token } = await forge.newUser();
  await forge.connect(userId, 'slack');
  const answer = await forge.asUser(token, 'POST', `/workflow/${typedWorkflow.workflowId}/install`, {
    variables: { [TYPED_BLOCK]: values },
  });
  assert.equal(answer.status, 201, answer.text);
  return { userId, token, childId: answer.body.workflowId as string };
}

const patch = (token: string, childId: string, values: Record<string, unknown>) =>
  forge.asUser(token, 'PATCH', `/workflow/${childId}/variables/${TYPED_BLOCK}`, values);

const storedOf = (answer: { body: { variables: Array<{ name: string; value: unknown }> } }, name: string) =>
  answer.body.variables.find((v) => v.name === name)!.value;

describe('the elements read what a variable holds', () => {
  test('GET /workflow lists each variable’s type and rules; a source only by its integration', async () => {
    const answer = await forge.asHost('GET', '/workflow');
    const listed = answer.body.data.find((w: { workflowId: string }) => w.workflowId === typedWorkflow.workflowId);
    const variables = variablesOf(listed);
    const expected = variablesOf(typedWorkflow as never);
    assert.equal(variables.length, expected.length);
    for (const [i, variable] of variables.entries()) {
      const { source, ...rest } = expected[i]!;
      assert.deepEqual(
        variable,
        source ? { ...rest, source: { integration: (source as { integration: string }).integration } } : rest,
      );
    }
  });

  test('the seed’s variables keep exactly their shape', async () => {
    const answer = await forge.asHost('GET', '/workflow');
    for (const workflow of demoCatalog.workflows) {
      const listed = answer.body.data.find((w: { workflowId: string }) => w.workflowId === workflow.workflowId);
      for (const block of listed.blocks.filter((b: { type: string }) => b.type === 'variables')) {
        for (const variable of block.parameters.variables) {
          const written = workflow.blocks
            .find((b) => b.id === block.id)!
            .parameters.variables!.find((v) => v.name === variable.name)!;
          assert.deepEqual(variable, written);
          assertKeys(variable, Object.keys(written), variable.name);
        }
      }
    }
  });

  test('a child workflow carries its values with the same rules', async () => {
    const { token, childId } = await typedChild();
    const child = (await forge.asUser(token, 'GET', `/workflow/${childId}`)).body;
    const variables = variablesOf(child);
    assert.equal(variables.find((v) => v.name === 'channel')!.value, 'C0001');
    assert.deepEqual(variables.find((v) => v.name === 'channel')!.source, { integration: 'slack' });
    assert.equal(variables.find((v) => v.name === 'threshold')!.max, 100);
    assert.equal(variables.find((v) => v.name === 'weekends')!.value, false);
  });
});

describe('install checks every rule', () => {
  test('required variables left empty are named, each by its path, and nothing is installed', async () => {
    const { userId, token } = await forge.newUser();
    await forge.connect(userId, 'slack');
    const install = (body: unknown) =>
      forge.asUser(token, 'POST', `/workflow/${typedWorkflow.workflowId}/install`, body);
    assertProblem(await install({}), 400, {
      errors: [`body.variables.${TYPED_BLOCK}.channel`, `body.variables.${TYPED_BLOCK}.spreadsheetId`],
      detail: /Slack channel \(channel\) is required.*Spreadsheet ID \(spreadsheetId\) is required/,
    });
    assertProblem(await install({ variables: { [TYPED_BLOCK]: { channel: ' ', spreadsheetId: 'short' } } }), 400, {
      errors: [`body.variables.${TYPED_BLOCK}.channel`, `body.variables.${TYPED_BLOCK}.spreadsheetId`],
      detail: /is required.*Paste the id from the sheet’s address/,
    });
    assert.deepEqual((await forge.asHost('GET', `/user/${userId}`)).body.workflows, []);
  });

  test('texts become what the variable holds: a number, a boolean, a numeric choice', async () => {
    const { token, childId } = await typedChild({
      ...validTypedValues,
      threshold: '42',
      weekends: 'true',
      priority: '2',
      owner: ' ada@example.com ',
    });
    const variables = variablesOf((await forge.asUser(token, 'GET', `/workflow/${childId}`)).body);
    const value = (name: string) => variables.find((v) => v.name === name)!.value;
    assert.equal(value('threshold'), 42);
    assert.equal(value('weekends'), true);
    assert.equal(value('priority'), 2);
    assert.equal(value('owner'), 'ada@example.com');
    assert.equal(value('pipeline'), 'sales', 'a default stays');
  });
});

describe('set-variable checks every rule', () => {
  let child: { token: string; childId: string };
  before(async () => {
    child = await typedChild();
  });

  const refused: Array<[string, Record<string, unknown>, RegExp]> = [
    ['a required text emptied', { spreadsheetId: '' }, /Spreadsheet ID \(spreadsheetId\) is required/],
    ['a required choice emptied', { channel: '   ' }, /Slack channel \(channel\) is required/],
    ['a text that does not match the pattern', { spreadsheetId: 'short' }, /Paste the id from the sheet’s address/],
    ['a number above max', { threshold: '101' }, /threshold must be at most 100/],
    ['a number below min', { threshold: -1 }, /threshold must be at least 0/],
    ['a text that is no number', { threshold: 'ten' }, /threshold must be a number/],
    ['hexadecimal for a number', { threshold: '0x10' }, /threshold must be a number/],
    ['an exponent for a number', { threshold: '1e3' }, /threshold must be a number/],
    ['a leading plus for a number', { threshold: '+5' }, /threshold must be a number/],
    ['yes for a boolean', { weekends: 'yes' }, /Notify on weekends \(weekends\) must be true or false/],
    ['1 for a boolean', { weekends: 1 }, /must be true or false/],
    ['a choice that is not offered', { pipeline: 'other' }, /Pipeline \(pipeline\) must be one of "sales", "renewals"/],
    ['a number that is not offered', { priority: 3 }, /priority must be one of 1, 2/],
    ['an e-mail address without @', { owner: 'ada.example.com' }, /owner must be an e-mail address/],
    ['a URL that is not http(s)', { link: 'ftp://example.com/file' }, /link must be an http or https address/],
    ['a URL without a scheme', { link: 'example.com' }, /link must be an http or https address/],
    ['a text too long', { notes: 'x'.repeat(10_001) }, /notes must be at most 10000 characters/],
    ['an object for a choice', { channel: { id: 'C1' } }, /must be a string or a number/],
    ['null for a number', { threshold: null }, /threshold must be a number/],
  ];
  for (const [what, values, detail] of refused) {
    test(`${what} is a 400 naming the variable, and changes nothing`, async () => {
      const before = variablesOf((await forge.asUser(child.token, 'GET', `/workflow/${child.childId}`)).body);
      assertProblem(await patch(child.token, child.childId, values), 400, {
        errors: Object.keys(values).map((name) => `body.${name}`),
        detail,
      });
      const after = variablesOf((await forge.asUser(child.token, 'GET', `/workflow/${child.childId}`)).body);
      assert.deepEqual(after, before);
    });
  }

  test('every problem of one save is named at once', async () => {
    const answer = await patch(child.token, child.childId, { threshold: 500, owner: 'x', weekends: 'maybe' });
    assertProblem(answer, 400, { errors: ['body.threshold', 'body.owner', 'body.weekends'] });
  });

  const accepted: Array<[string, Record<string, unknown>, string, unknown]> = [
    ['a numeric text for a number', { threshold: '12.5' }, 'threshold', 12.5],
    ['a number at its bound', { threshold: 100 }, 'threshold', 100],
    ['"false" for a boolean', { weekends: 'false' }, 'weekends', false],
    ['true for a boolean', { weekends: true }, 'weekends', true],
    ['a text for a numeric choice', { priority: '1' }, 'priority', 1],
    ['a matching text', { spreadsheetId: 'abcdefghij_klmnop-1234' }, 'spreadsheetId', 'abcdefghij_klmnop-1234'],
    ['an e-mail address, trimmed', { owner: ' grace@example.com' }, 'owner', 'grace@example.com'],
    ['an https URL', { link: 'https://example.com/a?b=c' }, 'link', 'https://example.com/a?b=c'],
    ['a number for a text', { notes: 7 }, 'notes', '7'],
    ['an empty optional text', { notes: '' }, 'notes', ''],
    ['a choice read from the app (the app checks it)', { channel: 'C0042' }, 'channel', 'C0042'],
    // The seed's rule for variables without a type: string values for numbers, text kept as text.
    ['the seed’s numeric text for a numeric default', { count: '12' }, 'count', 12],
    ['a text that is no number, for a numeric default without type', { count: '0x10' }, 'count', '0x10'],
    ['a number for a text default without type', { label: 7 }, 'label', 7],
  ];
  for (const [what, values, name, stored] of accepted) {
    test(`${what} is stored as ${JSON.stringify(stored)}`, async () => {
      const answer = await patch(child.token, child.childId, values);
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(storedOf(answer, name), stored);
      // The seed's answer shape: {blockId, variables: [{uuid, name, value}]}.
      assertKeys(answer.body, ['blockId', 'variables']);
      for (const variable of answer.body.variables) assertKeys(variable, ['uuid', 'name', 'value']);
    });
  }
});

describe('the catalog is checked at start', () => {
  const starts = async (change: (variables: Array<Record<string, unknown>>) => void) => {
    const file = typedCatalogFile((c) => change(variablesOf(c.workflows.at(-1)! as never)));
    try {
      await startService({ port: 0, db: ':memory:', catalog: file.path, scheduler: false });
      assert.fail('the service started');
    } catch (error) {
      return (error as Error).message;
    } finally {
      file.remove();
    }
  };
  const where = (k: number, name: string) =>
    `blocks[0].parameters.variables[${k}]`.replace(/[[\].]/g, '\\$&') +
    `.* \\(workflow "typed-settings", block "Settings", variable "${name}"\\)`;

  const broken: Array<[string, (variables: Array<Record<string, unknown>>) => void, RegExp]> = [
    [
      'an unknown type',
      (v) => (v[5]!.type = 'integer'),
      new RegExp(`${where(5, 'threshold')}: must be one of string, number`),
    ],
    [
      'a pattern that is no regular expression',
      (v) => (v[4]!.pattern = '(['),
      new RegExp(`${where(4, 'spreadsheetId')}: must be a regular expression`),
    ],
    ['min above max', (v) => (v[5]!.min = 200), new RegExp(`${where(5, 'threshold')}: must not be below min`)],
    [
      'a select without choices',
      (v) => delete v[1]!.options,
      new RegExp(`${where(1, 'pipeline')}: a select needs its choices`),
    ],
    [
      'options on a number',
      (v) => (v[5]!.options = [{ value: 1, label: 'One' }]),
      new RegExp(`${where(5, 'threshold')}: applies to a select`),
    ],
    [
      'a source of an integration the workflow does not use',
      (v) => ((v[0]!.source as { integration: string }).integration = 'hubspot'),
      new RegExp(`${where(0, 'channel')}: must be one of this workflow's integrations`),
    ],
    [
      'a default its own rules refuse',
      (v) => (v[5]!.value = 500),
      new RegExp(`${where(5, 'threshold')}: the default must be at most 100`),
    ],
    [
      'a default that is not one of the options',
      (v) => (v[1]!.value = 'other'),
      new RegExp(`${where(1, 'pipeline')}: the default must be one of`),
    ],
    [
      'a boolean default without type boolean',
      (v) => delete v[3]!.type,
      new RegExp(`${where(3, 'weekends')}: a boolean default needs type "boolean"`),
    ],
  ];
  for (const [what, change, message] of broken) {
    test(`${what} stops the start, naming the workflow, block and variable`, async () => {
      assert.match(await starts(change), message);
    });
  }
});

describe('the modal and the service agree on generated values', () => {
  // The modal checks the variables as the service lists them to it. Those without a type are
  // left out: the service keeps the seed's rule for them, which number-rule.test.ts covers.
  let fields: ReturnType<typeof settingFields> = [];
  before(async () => {
    const listed = (await forge.asHost('GET', '/workflow')).body.data as ParentWorkflow[];
    const parent = listed.find((w) => w.workflowId === typedWorkflow.workflowId)!;
    fields = settingFields(parent).filter(
      (f) => parent.blocks[0]!.parameters.variables!.find((v) => v.name === f.name)!.type,
    );
  });

  /** Texts a person might type or paste: near each rule's edges, and anything at all. */
  const texts = fc.oneof(
    fc.constantFrom('', ' ', 'true', 'false', 'TRUE', '1', '0', 'yes', 'sales', 'renewals', '2', '3'),
    fc.constantFrom('ada@example.com', 'ada@', 'a@b', 'https://example.com/', 'http://x', 'ftp://x', 'example.com'),
    fc.tuple(fc.constantFrom('', '-', '+'), fc.nat(150), fc.constantFrom('', '.5', 'e1', 'x')).map((p) => p.join('')),
    fc.stringMatching(/^[A-Za-z0-9_-]{15,25}$/),
    fc.string({ maxLength: 30 }),
  );

  test('a text the modal accepts is stored as the value it sends; a text it refuses the service refuses', async () => {
    const { token, childId } = await typedChild();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...fields), texts, async (field, text) => {
        const modal = fieldValue(field, text);
        const answer = await patch(token, childId, { [field.name]: text });
        if ('problem' in modal) {
          assert.equal(
            answer.status,
            400,
            `the modal refuses ${JSON.stringify(text)} for ${field.name}: ${answer.text}`,
          );
          assert.equal(answer.body.errors[0].path, `body.${field.name}`);
        } else {
          assert.equal(
            answer.status,
            200,
            `the modal accepts ${JSON.stringify(text)} for ${field.name}: ${answer.text}`,
          );
          assert.deepEqual(storedOf(answer, field.name), modal.value);
          // And what the modal sends (a number, a boolean) is stored as itself.
          const again = await patch(token, childId, { [field.name]: modal.value });
          assert.deepEqual(storedOf(again, field.name), modal.value);
        }
      }),
      { numRuns: 200 },
    );
  });
});
