/**
 * `verifyEnvelope`, the one check of an artifact envelope. Payload hashes come from the platform's own
 * `canonicalHash` (`@svc/service-kit`, what the Workflow API stores as `payload_sha256`), so a payload the server
 * hashed always passes here.
 */
import { canonicalHash } from '@svc/service-kit';
import { EnvelopeVerificationError, verifyEnvelope } from './index';
import type { ArtifactEnvelope, EnvelopeVerificationCode, ExpectedEnvelope } from './index';

const PROJECT = 'prj_one';
const INVOCATION = 'inv_one';
const PAYLOAD = { title: 'Weekly', items: [{ b: 2, a: 1 }], meta: { z: null, y: 'ü' } };

function envelope(overrides: Record<string, unknown> = {}): ArtifactEnvelope {
  return {
    envelope_version: '1',
    artifact_id: 'art_one',
    workspace_id: 'ws_one',
    project_id: PROJECT,
    invocation_id: INVOCATION,
    run_id: 'run_one',
    schema: { schema_id: 'sch_one', name: 'weekly-report', version: '1.0.0' },
    version: 1,
    summary: 'The weekly report.',
    payload: PAYLOAD,
    payload_sha256: canonicalHash(PAYLOAD),
    provenance: {
      contract_id: 'wfc_one',
      template: { key: 'weekly-report', version: '1.0.0' },
      stages: [],
      correlation_id: null,
      producer: {},
    },
    limitations: [],
    created_by: { kind: 'agent', id: 'agt_one' },
    created_at: '2026-01-01T00:05:00.000Z',
    ...overrides,
  } as ArtifactEnvelope;
}

const expected: ExpectedEnvelope = {
  projectId: PROJECT,
  invocationId: INVOCATION,
  workspaceId: 'ws_one',
  runId: 'run_one',
  artifactId: 'art_one',
  schema: { name: 'weekly-report', versions: ['1.0.0', '1.1.0'] },
};

/** The code of the refusal, or undefined when the envelope is accepted. */
async function codeOf(
  value: unknown,
  want: ExpectedEnvelope = expected,
): Promise<EnvelopeVerificationCode | undefined> {
  try {
    await verifyEnvelope(value, want);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(EnvelopeVerificationError);
    return (error as EnvelopeVerificationError).code;
  }
}

describe('verifyEnvelope', () => {
  it('when the envelope is good and carries unknown extra fields, then it is returned', async () => {
    const good = { ...envelope(), future_field: { anything: true } };
    expect(await verifyEnvelope(good, expected)).toBe(good);
    expect(await verifyEnvelope(envelope(), { projectId: PROJECT, invocationId: INVOCATION })).toEqual(
      envelope(),
    );
  });

  it('when the payload hash is checked, then it is the SHA-256 of the canonical JSON (keys sorted at every depth)', async () => {
    const reordered = { meta: { y: 'ü', z: null }, items: [{ a: 1, b: 2 }], title: 'Weekly' };
    expect((await verifyEnvelope(envelope({ payload: reordered }), expected)).payload).toEqual(reordered);
    const upper = envelope({ payload_sha256: canonicalHash(PAYLOAD).toUpperCase() });
    expect(await codeOf(upper)).toBeUndefined();
    for (const payload of ['plain text', null, 42, [{ b: 1, a: 2 }]]) {
      expect(await codeOf(envelope({ payload, payload_sha256: canonicalHash(payload) }))).toBeUndefined();
    }
  });

  it.each([
    ['a string', 'not an envelope'],
    ['null', null],
    ['an array', [envelope()]],
  ])('when the envelope is %s, then it is envelope_malformed', async (_, value) => {
    expect(await codeOf(value)).toBe('envelope_malformed');
  });

  it.each([
    ['envelope_version is 2', { envelope_version: '2' }],
    ['envelope_version is missing', { envelope_version: undefined }],
    ...[
      'artifact_id',
      'workspace_id',
      'project_id',
      'invocation_id',
      'run_id',
      'payload_sha256',
      'created_by',
      'created_at',
    ].map((field) => [`${field} is missing`, { [field]: undefined }] as [string, Record<string, unknown>]),
    ['artifact_id is empty', { artifact_id: '' }],
    ['run_id is null', { run_id: null }],
    ['schema is missing', { schema: undefined }],
    ['schema.schema_id is missing', { schema: { name: 'weekly-report', version: '1.0.0' } }],
    ['schema.name is missing', { schema: { schema_id: 'sch_one', version: '1.0.0' } }],
    ['schema.version is missing', { schema: { schema_id: 'sch_one', name: 'weekly-report' } }],
    ['version is missing', { version: undefined }],
    ['version is not an integer', { version: '1' }],
    ['payload_sha256 is not a digest', { payload_sha256: 'abc' }],
    ['created_by has no kind', { created_by: { id: 'agt_one' } }],
    ['payload is missing', { payload: undefined }],
  ])('when %s, then it is envelope_malformed', async (_, overrides) => {
    expect(await codeOf(envelope(overrides))).toBe('envelope_malformed');
  });

  it.each([
    ['project_id', { project_id: 'prj_other' }],
    ['invocation_id', { invocation_id: 'inv_other' }],
    ['workspace_id', { workspace_id: 'ws_other' }],
    ['run_id', { run_id: 'run_other' }],
    ['artifact_id', { artifact_id: 'art_other' }],
  ])(
    'when %s differs from what was asked for, then it is envelope_identity_mismatch',
    async (field, overrides) => {
      await expect(verifyEnvelope(envelope(overrides), expected)).rejects.toMatchObject({
        code: 'envelope_identity_mismatch',
        field,
      });
    },
  );

  it('when optional identities are not expected, then they are not compared', async () => {
    const others = envelope({ workspace_id: 'ws_other', run_id: 'run_other', artifact_id: 'art_other' });
    expect(await codeOf(others, { projectId: PROJECT, invocationId: INVOCATION })).toBeUndefined();
  });

  it('when the schema name differs or its version is not supported, then it is envelope_schema_unsupported', async () => {
    const schema = (name: string, version: string) => envelope({ schema: { schema_id: 's', name, version } });
    expect(await codeOf(schema('other-report', '1.0.0'))).toBe('envelope_schema_unsupported');
    expect(await codeOf(schema('weekly-report', '2.0.0'))).toBe('envelope_schema_unsupported');
    expect(await codeOf(schema('weekly-report', '1.1.0'))).toBeUndefined();
  });

  it('when the payload was changed after hashing, then it is envelope_payload_tampered', async () => {
    expect(await codeOf(envelope({ payload: { ...PAYLOAD, title: 'Forged' } }))).toBe(
      'envelope_payload_tampered',
    );
    expect(await codeOf(envelope({ payload_sha256: canonicalHash({}) }))).toBe('envelope_payload_tampered');
    // Array order is part of the content.
    expect(await codeOf(envelope({ payload: { ...PAYLOAD, items: [{ a: 2, b: 1 }] } }))).toBe(
      'envelope_payload_tampered',
    );
  });

  it('when checks fail in several ways, then malformed comes before identity, schema and tampering', async () => {
    const unsupported = { schema_id: 's', name: 'x', version: '9' };
    expect(await codeOf(envelope({ project_id: 'prj_other', run_id: undefined }))).toBe('envelope_malformed');
    expect(await codeOf(envelope({ project_id: 'prj_other', schema: unsupported, payload: 'forged' }))).toBe(
      'envelope_identity_mismatch',
    );
    expect(await codeOf(envelope({ schema: unsupported, payload: 'forged' }))).toBe(
      'envelope_schema_unsupported',
    );
  });
});
