import Ajv2020 from 'ajv/dist/2020';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { canonicalJson } from '@svc/contracts';
import type { WorkflowApi } from '@svc/contracts';
import { AppError, canonicalHash } from '@svc/service-kit';

/** Largest accepted schema, measured as canonical JSON. */
export const MAX_SCHEMA_BYTES = 256 * 1024;
/** Deepest accepted nesting of objects and arrays in a schema. */
export const MAX_SCHEMA_DEPTH = 64;
/** At most this many reasons are reported for a refused schema or an invalid payload. */
export const MAX_REPORTED_ERRORS = 50;
const MAX_MESSAGE_LENGTH = 300;

/** Keywords whose values are data, not schemas: a `$ref` inside them is not a reference. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);

/** Hex SHA-256 of the canonical JSON of a schema: the identity of its content. */
export function schemaHash(jsonSchema: unknown): string {
  return canonicalHash(jsonSchema);
}

function bounded(message: string): string {
  return message.length > MAX_MESSAGE_LENGTH ? `${message.slice(0, MAX_MESSAGE_LENGTH)}…` : message;
}

/** True when the value nests objects/arrays deeper than `max` (stops descending as soon as it knows). */
function deeperThan(value: unknown, max: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (max === 0) return true;
  const children = Array.isArray(value) ? value : Object.values(value as Record<string, unknown>);
  return children.some((child) => deeperThan(child, max - 1));
}

/** Every `$ref` / `$dynamicRef` that is not a local `#…` reference, with its JSON Pointer location. */
function remoteReferences(value: unknown, pointer = ''): { location: string; ref: string }[] {
  if (value === null || typeof value !== 'object') return [];
  if (Array.isArray(value)) return value.flatMap((item, i) => remoteReferences(item, `${pointer}/${i}`));
  const found: { location: string; ref: string }[] = [];
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const here = `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if ((key === '$ref' || key === '$dynamicRef') && typeof child === 'string') {
      if (!child.startsWith('#')) found.push({ location: here, ref: child });
    } else if (!DATA_KEYWORDS.has(key)) {
      found.push(...remoteReferences(child, here));
    }
  }
  return found;
}

/**
 * A fresh strict draft 2020-12 validator. One instance per schema: a schema's own `$id` then never collides
 * with another schema's, and nothing registered by one caller is visible to another.
 */
function strictAjv(): Ajv2020 {
  const ajv = new Ajv2020({
    strict: true,
    allErrors: true,
    // `type: [string, null]` is ordinary JSON Schema; strict mode refuses it unless allowed explicitly.
    allowUnionTypes: true,
    logger: false,
  });
  addFormats(ajv);
  return ajv;
}

function invalid(errors: { location: string; message: string }[]): AppError {
  const reported = errors.slice(0, MAX_REPORTED_ERRORS);
  const first = reported[0];
  return new AppError({
    status: 400,
    code: 'artifact_schema_invalid',
    detail: first
      ? `json_schema is not a valid strict JSON Schema (draft 2020-12): ${first.location} ${first.message}`
      : 'json_schema is not a valid strict JSON Schema (draft 2020-12).',
    extra: { errors: reported },
  });
}

const at = (pointer: string) => `body/json_schema${pointer}`;

/**
 * Checks a schema before registration and returns its compiled validator: size and depth caps, local
 * references only, valid against the draft 2020-12 meta-schema, and compilable in ajv's strict mode.
 * Throws 400 `artifact_schema_invalid` with the reasons otherwise.
 */
export function compileArtifactSchema(jsonSchema: unknown): ValidateFunction {
  if (deeperThan(jsonSchema, MAX_SCHEMA_DEPTH)) {
    throw invalid([{ location: at(''), message: `nests deeper than ${MAX_SCHEMA_DEPTH} levels` }]);
  }
  if (Buffer.byteLength(canonicalJson(jsonSchema), 'utf8') > MAX_SCHEMA_BYTES) {
    throw invalid([{ location: at(''), message: `is larger than ${MAX_SCHEMA_BYTES} bytes` }]);
  }
  const remote = remoteReferences(jsonSchema);
  if (remote.length > 0) {
    throw invalid(
      remote.map(({ location, ref }) => ({
        location: at(location),
        message: bounded(`refers to '${ref}'; only local references ('#…') are allowed`),
      })),
    );
  }
  const ajv = strictAjv();
  let metaValid: boolean;
  try {
    metaValid = ajv.validateSchema(jsonSchema as object) as boolean;
  } catch (error) {
    throw invalid([{ location: at(''), message: bounded((error as Error).message) }]);
  }
  if (!metaValid) {
    throw invalid(
      (ajv.errors ?? []).map((e) => ({
        location: at(e.instancePath),
        message: bounded(e.message ?? 'is invalid'),
      })),
    );
  }
  try {
    return ajv.compile(jsonSchema as object);
  } catch (error) {
    throw invalid([{ location: at(''), message: bounded((error as Error).message) }]);
  }
}

/** The verdict on a payload, as `validateArtifactPayload` answers it. */
export type PayloadVerdict = WorkflowApi.components['schemas']['ArtifactPayloadValidation'];
export type PayloadError = PayloadVerdict['errors'][number];

function describePayloadError(error: ErrorObject): PayloadError {
  const params = error.params as Record<string, unknown>;
  let message = error.message ?? 'is invalid';
  if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    message = `must NOT have additional property '${params.additionalProperty}'`;
  }
  return { path: error.instancePath, message: bounded(message) };
}

/** Runs a compiled validator; at most MAX_REPORTED_ERRORS failures are reported. */
export function checkPayload(validate: ValidateFunction, payload: unknown): PayloadVerdict {
  const valid = validate(payload) as boolean;
  return {
    valid,
    errors: valid ? [] : (validate.errors ?? []).slice(0, MAX_REPORTED_ERRORS).map(describePayloadError),
  };
}

export interface ArtifactValidatorCache {
  /** The compiled validator of a registered schema version, compiled on first use. */
  get(schema: { id: string; jsonSchema: unknown }): ValidateFunction;
}

/**
 * Compiled validators by schema id. A registered version never changes, so an entry never goes stale;
 * the cache only forgets the least recently used entries beyond `max` to bound memory.
 */
export function createArtifactValidatorCache(options: { max?: number } = {}): ArtifactValidatorCache {
  const max = options.max ?? 500;
  const entries = new Map<string, ValidateFunction>();
  return {
    get(schema) {
      const hit = entries.get(schema.id);
      if (hit) {
        entries.delete(schema.id);
        entries.set(schema.id, hit);
        return hit;
      }
      const compiled = compileArtifactSchema(schema.jsonSchema);
      entries.set(schema.id, compiled);
      if (entries.size > max) {
        const oldest = entries.keys().next().value;
        if (oldest !== undefined) entries.delete(oldest);
      }
      return compiled;
    },
  };
}
