/// <reference types="jest" />
import { workflowDocument } from '@svc/contracts/documents';
import { bodyFromForm, EMPTY_FORM, fieldOf, validateContract } from './contracts/contract-form';
import type { ContractForm } from './contracts/contract-form';
import { checkSchema } from './schema-check';
import type { JsonSchema } from './schema-check';

const components = workflowDocument.components as { schemas: Record<string, JsonSchema> };

const good: ContractForm = {
  ...EMPTY_FORM,
  name: 'Weekly report',
  phrases: 'weekly report\nstatus, please',
  templateKey: 'weekly-report',
  templateVersion: '1.0.0',
  schemaName: 'report',
  schemaVersion: '1.0.0',
  stages: [
    { key: 'collect', title: 'Collect', capabilities: 'report' },
    { key: 'write', title: 'Write', capabilities: 'report, writing' },
  ],
};

describe('checkSchema', () => {
  test('when a value follows the schema, then there is no error', () => {
    const schema = { type: 'object', required: ['a'], properties: { a: { type: 'integer', minimum: 1 } } };
    expect(checkSchema({ a: 2 }, schema)).toEqual([]);
  });

  test('when values break type, length, pattern, range, items and unknown-field rules, then each is named by its pointer', () => {
    const schema = {
      type: 'object',
      required: ['name', 'n', 'list'],
      additionalProperties: false,
      properties: {
        name: { type: 'string', minLength: 2, maxLength: 3, pattern: '^[a-z]+$' },
        n: { type: 'integer', maximum: 5 },
        list: { type: 'array', maxItems: 1, items: { type: 'string' } },
        'a/b': { type: 'string' },
      },
    };
    expect(checkSchema({ name: 'ABCD', n: 6.5, list: [1, 'x'], extra: 1, 'a/b': 1 }, schema)).toEqual([
      { path: '/name', message: 'must have at most 3 characters' },
      { path: '/name', message: 'must use only lowercase letters' },
      { path: '/n', message: 'must be integer' },
      { path: '/list', message: 'must have at most 1 items' },
      { path: '/list/0', message: 'must be string' },
      { path: '/extra', message: 'is not a known field' },
      { path: '/a~1b', message: 'must be string' },
    ]);
  });

  test('when a schema refers to the document, then the reference is followed; oneOf needs exactly one match', () => {
    const schema = { oneOf: [{ $ref: '#/components/schemas/ContractsKey' }, { type: 'null' }] };
    expect(checkSchema('ok-key', schema, components)).toEqual([]);
    expect(checkSchema(null, schema, components)).toEqual([]);
    expect(checkSchema('bad key', schema, components)).toEqual([
      { path: '', message: 'must match exactly one of the allowed forms' },
    ]);
  });
});

describe('the contract form', () => {
  test('when the form is complete, then its body passes the contract schema and keeps the phrases whole', () => {
    const body = bodyFromForm(good);
    expect(validateContract(body)).toEqual([]);
    expect(body.classifier?.intentContains).toEqual(['weekly report', 'status, please']);
    expect(body.template.stages?.[1]?.required_capabilities).toEqual(['report', 'writing']);
  });

  test('when fields break the schema or the stated rules, then each error lands on its field', () => {
    const errors = validateContract(
      bodyFromForm({
        ...good,
        priority: 'ten',
        phrases: '',
        templateVersion: '1 0',
        schemaVersion: '',
        stages: [good.stages[0]!, { key: 'collect', title: '', capabilities: '' }],
      }),
    );
    expect(new Set(errors.map((e) => fieldOf(e.path)))).toEqual(
      new Set(['priority', 'templateVersion', 'schemaVersion', 'stage-1-title', 'stage-1-key', 'phrases']),
    );
    expect(errors.find((e) => e.path === '/priority')?.message).toBe('must be a whole number');
  });

  test('when the contract is the fallback, then it needs no criterion', () => {
    expect(validateContract(bodyFromForm({ ...good, fallback: true, phrases: '' }))).toEqual([]);
  });
});
