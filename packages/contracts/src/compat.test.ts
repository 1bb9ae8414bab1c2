/**
 * The compatibility guard (service spec, Versioning 2–3): the public documents against the last released
 * snapshot in packages/contracts/released, with CHANGELOG.md's deprecation entries. The same check runs as
 * `pnpm contracts:compat`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

interface Change {
  document: string;
  action: string;
  where: string;
  description: string;
  deprecation?: { date: string; subject: string };
  allowed: boolean;
}
interface Result {
  ok: boolean;
  release: string;
  changes: Change[];
}
// An OpenAPI document edited freely by the tests.
type Doc = any; // eslint-disable-line @typescript-eslint/no-explicit-any
interface Release {
  version: string;
  documents: Record<string, Doc>;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const compat = require('../scripts/compat.cjs') as {
  NOTICE_DAYS: number;
  currentDocuments(): Record<string, Doc>;
  latestRelease(): Release | undefined;
  readDeprecations(text: string): { date: string; text: string }[];
  checkCompatibility(input: {
    released: Release;
    current: Record<string, Doc>;
    changelog: string;
    now?: Date;
  }): Result;
  formatReport(result: Result): string;
};

jest.setTimeout(120_000);

const changelog = readFileSync(path.resolve(__dirname, '../../../CHANGELOG.md'), 'utf8');
const release = compat.latestRelease();
const NOW = new Date('2026-11-24T12:00:00Z');
const INVOCATIONS = '/api/v1/projects/{projectId}/workflow/invocations';
const RESOLVE = '/api/v1/projects/{projectId}/workflow/resolve-intent';

/** The released workflow document, changed by `edit`, checked alone against the released one. */
function checkWorkflow(edit: (doc: Doc) => void, changelogText = '', now = NOW): Result {
  if (!release) throw new Error('no released snapshot');
  const before = release.documents.workflow;
  const after = structuredClone(before);
  edit(after);
  return compat.checkCompatibility({
    released: { version: release.version, documents: { workflow: before } },
    current: { workflow: after },
    changelog: changelogText,
    now,
  });
}

const daysBefore = (days: number) => new Date(NOW.getTime() - days * 86_400_000).toISOString().slice(0, 10);
const deprecated = (date: string, ...subjects: string[]) =>
  `# Changelog\n\n## Unreleased\n\n### Deprecated\n\n- ${date}: ${subjects.map((s) => `\`${s}\``).join(', ')} — replaced; removal after 90 days.\n`;

const schemas = (doc: Doc): Doc => doc.components.schemas;

const BREAKING: [string, (doc: Doc) => void][] = [
  ['an operation is removed', (doc) => delete doc.paths[INVOCATIONS].get],
  [
    'a response field is removed',
    (doc) => {
      const s = schemas(doc).InvocationsInvocation;
      delete s.properties.intent_normalized;
      s.required = s.required.filter((f: string) => f !== 'intent_normalized');
    },
  ],
  ['a request field is removed', (doc) => delete schemas(doc).ContractsResolveRequest.properties.metadata],
  [
    'an enum value is removed',
    (doc) => {
      const s = schemas(doc).InvocationsState;
      s.enum = s.enum.filter((v: string) => v !== 'blocked');
    },
  ],
  [
    'a request field becomes required',
    (doc) => schemas(doc).ContractsResolveRequest.required.push('required_capabilities'),
  ],
  [
    'a type is narrowed (shorter maximum length)',
    (doc) => (schemas(doc).ContractsResolveRequest.properties.intent.maxLength = 100),
  ],
  [
    'a request value is narrowed to an enum',
    (doc) => (schemas(doc).ContractsResolveRequest.properties.intent.enum = ['only this']),
  ],
  [
    'a type is changed (string to integer)',
    (doc) => (schemas(doc).ContractsResolveRequest.properties.intent.type = 'integer'),
  ],
];

describe('contracts compatibility guard', () => {
  test('when the current public documents are compared with the last release, then nothing breaks', () => {
    expect(release).toBeDefined();
    const result = compat.checkCompatibility({
      released: release!,
      current: compat.currentDocuments(),
      changelog,
    });
    expect(compat.formatReport(result)).toMatch(/^contracts compatible with release/);
    expect(result.changes.filter((c) => !c.allowed)).toEqual([]);
    expect(result.ok).toBe(true);
  });

  test.each(BREAKING)(
    'when %s without a deprecation entry, then the check fails naming it',
    (_name, edit) => {
      const result = checkWorkflow(edit);
      expect(result.ok).toBe(false);
      const blocked = result.changes.filter((c) => !c.allowed);
      expect(blocked.length).toBeGreaterThan(0);
      expect(blocked.every((c) => c.deprecation === undefined)).toBe(true);
      expect(compat.formatReport(result)).toMatch(
        /breaking change\(s\) since release .*no deprecation entry/s,
      );
    },
  );

  test('when only additive changes are made, then the check passes', () => {
    const result = checkWorkflow((doc) => {
      doc.paths['/api/v1/projects/{projectId}/workflow/things'] = {
        get: {
          operationId: 'listThings',
          summary: 'A new operation.',
          responses: {
            '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } },
          },
        },
      };
      schemas(doc).InvocationsInvocation.properties.new_field = { type: 'string' };
      schemas(doc).ContractsResolveRequest.properties.locale = { type: 'string' };
      schemas(doc).InvocationsState.enum.push('archived');
      // An answer's field given an enum is narrower, which no client can be hurt by.
      schemas(doc).InvocationsInvocation.properties.intent_normalized.enum = ['x'];
      doc.paths[INVOCATIONS].get.description = 'Now with a longer description.';
    });
    expect(result.changes.filter((c) => !c.allowed)).toEqual([]);
    expect(result.ok).toBe(true);
  });

  const removeOperation = (doc: Doc) => delete doc.paths[INVOCATIONS].get;
  const removeField = (doc: Doc) => {
    const s = schemas(doc).InvocationsInvocation;
    delete s.properties.intent_normalized;
    s.required = s.required.filter((f: string) => f !== 'intent_normalized');
  };
  const removeEnumValue = (doc: Doc) => {
    const s = schemas(doc).InvocationsState;
    s.enum = s.enum.filter((v: string) => v !== 'blocked');
  };

  test.each([
    ['an operation', removeOperation, `GET ${INVOCATIONS}`],
    ['a field', removeField, 'InvocationsInvocation.intent_normalized'],
    ['an enum value', removeEnumValue, 'InvocationsState=blocked'],
  ])(
    'when %s is removed with a deprecation entry at least 90 days old, then the check passes',
    (_name, edit, subject) => {
      const result = checkWorkflow(edit, deprecated(daysBefore(compat.NOTICE_DAYS), subject));
      expect(result.changes.length).toBeGreaterThan(0);
      expect(result.changes.filter((c) => !c.allowed)).toEqual([]);
      expect(result.ok).toBe(true);
    },
  );

  test.each([
    ['an operation', removeOperation, `GET ${INVOCATIONS}`],
    ['a field', removeField, 'InvocationsInvocation.intent_normalized'],
    ['an enum value', removeEnumValue, 'InvocationsState=blocked'],
  ])(
    'when %s is removed with a deprecation entry younger than 90 days, then the check fails and says when',
    (_name, edit, subject) => {
      const date = daysBefore(compat.NOTICE_DAYS - 1);
      const result = checkWorkflow(edit, deprecated(date, subject));
      expect(result.ok).toBe(false);
      const blocked = result.changes.filter((c) => !c.allowed);
      expect(blocked.every((c) => c.deprecation?.date === date)).toBe(true);
      expect(compat.formatReport(result)).toContain(`deprecated on ${date}`);
    },
  );

  test('when the deprecation names something else, then it does not cover the change', () => {
    const result = checkWorkflow(
      removeField,
      deprecated(daysBefore(200), 'InvocationsInvocation.intent', `GET ${RESOLVE}`),
    );
    expect(result.ok).toBe(false);
  });

  test('when a deprecation is written outside a "Deprecated" section, then it does not count', () => {
    const text = `## Unreleased\n\n### Removed\n\n- ${daysBefore(200)}: \`GET ${INVOCATIONS}\`\n`;
    expect(compat.readDeprecations(text)).toEqual([]);
    expect(checkWorkflow(removeOperation, text).ok).toBe(false);
  });
});
