/** Checks of an artifact envelope before a consumer trusts it (Web Crypto, no Node.js modules). */
import { EnvelopeVerificationError } from './errors.js';
import { canonicalJson } from './generated/wire/canonical-json.js';
import type { ArtifactEnvelope } from './types.js';
import { sha256Hex } from './web-crypto.js';

export interface ExpectedEnvelope {
  projectId: string;
  invocationId: string;
  workspaceId?: string;
  runId?: string;
  artifactId?: string;
  /** The schema the consumer understands: its name and the versions it supports. */
  schema?: { name: string; versions: string[] };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

const IDENTITY_FIELDS = [
  'artifact_id',
  'workspace_id',
  'project_id',
  'invocation_id',
  'run_id',
  'payload_sha256',
  'created_at',
] as const;

function malformed(message: string, field?: string): EnvelopeVerificationError {
  return new EnvelopeVerificationError('envelope_malformed', message, field);
}

function checkShape(envelope: unknown): asserts envelope is ArtifactEnvelope {
  if (!isRecord(envelope)) throw malformed('artifact envelope is not an object');
  if (envelope.envelope_version !== '1')
    throw malformed('artifact envelope_version is not "1"', 'envelope_version');
  for (const field of IDENTITY_FIELDS) {
    if (!isNonEmptyString(envelope[field])) throw malformed(`artifact envelope lacks ${field}`, field);
  }
  if (!/^[0-9a-f]{64}$/i.test(envelope.payload_sha256 as string)) {
    throw malformed('payload_sha256 is not a hex SHA-256 digest', 'payload_sha256');
  }
  const schema = envelope.schema;
  if (!isRecord(schema)) throw malformed('artifact envelope lacks schema', 'schema');
  for (const field of ['schema_id', 'name', 'version'] as const) {
    if (!isNonEmptyString(schema[field]))
      throw malformed(`artifact envelope lacks schema.${field}`, `schema.${field}`);
  }
  if (!Number.isInteger(envelope.version) || (envelope.version as number) < 1) {
    throw malformed('artifact envelope lacks a positive integer version', 'version');
  }
  const createdBy = envelope.created_by;
  if (!isRecord(createdBy) || !isNonEmptyString(createdBy.kind)) {
    throw malformed('artifact envelope lacks created_by', 'created_by');
  }
  if (!('payload' in envelope) || envelope.payload === undefined) {
    throw malformed('artifact envelope lacks payload', 'payload');
  }
}

/**
 * Checks an artifact envelope and returns it typed: its shape (`envelope_malformed`), that it belongs to what
 * was asked for (`envelope_identity_mismatch`), that its schema is one the consumer supports
 * (`envelope_schema_unsupported`) and that the payload still hashes to `payload_sha256`
 * (`envelope_payload_tampered`). Unknown extra fields are accepted.
 */
export async function verifyEnvelope<T = unknown>(
  envelope: unknown,
  expected: ExpectedEnvelope,
): Promise<ArtifactEnvelope<T>> {
  checkShape(envelope);
  const identities: [keyof ArtifactEnvelope & string, string | undefined][] = [
    ['project_id', expected.projectId],
    ['invocation_id', expected.invocationId],
    ['workspace_id', expected.workspaceId],
    ['run_id', expected.runId],
    ['artifact_id', expected.artifactId],
  ];
  for (const [field, want] of identities) {
    if (want !== undefined && envelope[field] !== want) {
      throw new EnvelopeVerificationError(
        'envelope_identity_mismatch',
        `artifact envelope ${field} is ${String(envelope[field])}, expected ${want}`,
        field,
      );
    }
  }
  if (expected.schema) {
    if (envelope.schema.name !== expected.schema.name) {
      throw new EnvelopeVerificationError(
        'envelope_schema_unsupported',
        `artifact schema ${envelope.schema.name} is not ${expected.schema.name}`,
        'schema.name',
      );
    }
    if (!expected.schema.versions.includes(envelope.schema.version)) {
      throw new EnvelopeVerificationError(
        'envelope_schema_unsupported',
        `artifact schema ${envelope.schema.name} version ${envelope.schema.version} is not supported`,
        'schema.version',
      );
    }
  }
  const digest = await sha256Hex(canonicalJson(envelope.payload));
  if (digest !== envelope.payload_sha256.toLowerCase()) {
    throw new EnvelopeVerificationError(
      'envelope_payload_tampered',
      'artifact payload does not match payload_sha256',
      'payload_sha256',
    );
  }
  // The caller names the payload type the schema describes; the hash and schema checks above hold for it.
  return envelope as ArtifactEnvelope<T>;
}
