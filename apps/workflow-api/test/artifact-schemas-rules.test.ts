import { createHash } from 'node:crypto';
import { AppError } from '@svc/service-kit';
import { canonicalJson } from '@svc/contracts';
import {
  checkPayload,
  compileArtifactSchema,
  createArtifactValidatorCache,
  schemaHash,
} from '../src/domain/artifact-schema-rules';

function refusal(schema: unknown): { code: string; errors: { location: string; message: string }[] } {
  try {
    compileArtifactSchema(schema);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    const e = error as AppError & { extra?: { errors: { location: string; message: string }[] } };
    return { code: e.code, errors: e.extra?.errors ?? [] };
  }
  throw new Error('the schema was accepted');
}

describe('artifact schema rules', () => {
  test('when keys are ordered differently, then the canonical JSON and hash are the same', () => {
    const a = { b: [1, { y: 2, x: null }], a: 'é' };
    const b = { a: 'é', b: [1, { x: null, y: 2 }] };
    expect(canonicalJson(a)).toBe('{"a":"é","b":[1,{"x":null,"y":2}]}');
    expect(schemaHash(a)).toBe(schemaHash(b));
    expect(schemaHash(a)).toBe(createHash('sha256').update(canonicalJson(b)).digest('hex'));
    expect(schemaHash({ a: [1, 2] })).not.toBe(schemaHash({ a: [2, 1] }));
  });

  test('when a schema uses union types, local refs and known formats, then it compiles', () => {
    const validate = compileArtifactSchema({
      type: 'object',
      properties: { at: { type: ['string', 'null'], format: 'date-time' }, t: { $ref: '#/$defs/t' } },
      $defs: { t: { type: 'string' } },
    });
    expect(checkPayload(validate, { at: null, t: 'x' })).toEqual({ valid: true, errors: [] });
    expect(
      checkPayload(validate, { at: 'nope', t: 1 })
        .errors.map((e) => e.path)
        .sort(),
    ).toEqual(['/at', '/t']);
  });

  test.each([
    [{ type: 'object', propertees: {} }, /unknown keyword/],
    [{ type: 'strng' }, /allowed values/],
    [{ type: 'string', minimum: 1 }, /strict mode/],
    [{ type: 'string', format: 'nope' }, /unknown format/],
    [{ $ref: 'https://example.com/x.json' }, /only local references/],
    [{ $ref: '#/$defs/missing' }, /resolve/],
    [{ $schema: 'http://json-schema.org/draft-07/schema#' }, /draft-07/],
    [{ type: 'string', pattern: '(' }, /pattern|Invalid regular expression/i],
  ])('when the schema is %j, then it is refused with a reason', (schema, reason) => {
    const { code, errors } = refusal(schema);
    expect(code).toBe('artifact_schema_invalid');
    expect(errors.map((e) => e.message).join(' | ')).toMatch(reason);
    for (const e of errors) expect(e.location.startsWith('body/json_schema')).toBe(true);
  });

  test('when a message would be huge, then it is cut', () => {
    const { errors } = refusal({ $ref: `https://example.com/${'x'.repeat(5000)}` });
    expect(errors[0]!.message.length).toBeLessThanOrEqual(301);
  });

  test('when a schema has many problems, then at most 50 are reported', () => {
    const properties = Object.fromEntries(
      Array.from({ length: 80 }, (_, i) => [`p${i}`, { $ref: `http://x/${i}` }]),
    );
    expect(refusal({ properties }).errors).toHaveLength(50);
  });

  test('when two schemas share an $id, then each compiles on its own instance', () => {
    expect(() =>
      compileArtifactSchema({ $id: 'https://example.com/same.json', type: 'string' }),
    ).not.toThrow();
    expect(() =>
      compileArtifactSchema({ $id: 'https://example.com/same.json', type: 'number' }),
    ).not.toThrow();
  });

  test('when the validator cache is asked twice for one id, then it compiles once and evicts the oldest beyond max', () => {
    const cache = createArtifactValidatorCache({ max: 2 });
    const a = { id: 'asc_a', jsonSchema: { type: 'string' } };
    const first = cache.get(a);
    expect(cache.get(a)).toBe(first);
    cache.get({ id: 'asc_b', jsonSchema: { type: 'number' } });
    cache.get({ id: 'asc_c', jsonSchema: { type: 'boolean' } });
    expect(cache.get(a)).not.toBe(first);
  });
});
