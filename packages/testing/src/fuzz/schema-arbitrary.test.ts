import fc from 'fast-check';
import { hubDocument, workflowDocument } from '@svc/contracts';
import type { OpenApiDocument } from '@svc/contracts';
import { invalidArbitrary, resolveSchema, validArbitrary } from './schema-arbitrary';
import { documentValidator } from './validator';

const doc: OpenApiDocument = {
  openapi: '3.1.0',
  info: { title: 'Sample', version: '1' },
  components: {
    schemas: {
      Id: { type: 'string', pattern: '^[a-z]+_[0-9a-z]{6}$' },
      Kind: { type: 'string', enum: ['a', 'b'] },
      Thing: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'count'],
        properties: {
          id: { $ref: '#/components/schemas/Id' },
          count: { type: 'integer', minimum: 1, maximum: 10 },
          kind: { $ref: '#/components/schemas/Kind' },
          tags: {
            type: 'array',
            items: { type: 'string', minLength: 1, maxLength: 5 },
            maxItems: 2,
            uniqueItems: true,
          },
          at: { type: ['string', 'null'], format: 'date-time' },
          email: { type: 'string', format: 'email' },
          labels: {
            type: 'object',
            additionalProperties: { type: 'string', maxLength: 3 },
            maxProperties: 2,
          },
          either: {
            oneOf: [
              { type: 'integer', minimum: 0 },
              { type: 'string', const: 'none' },
            ],
          },
          both: { allOf: [{ type: 'object', properties: { x: { type: 'boolean' } }, required: ['x'] }] },
        },
      },
    },
  },
};
const thing = { $ref: '#/components/schemas/Thing' };
const validator = documentValidator(doc);

describe('validArbitrary', () => {
  it('draws values the schema accepts', () => {
    const validate = validator(thing);
    fc.assert(
      fc.property(validArbitrary(doc, thing), (value) => {
        expect(validate(value) ? [] : validate.errors).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('draws optional fields sometimes and required fields always', () => {
    const seen = fc.sample(validArbitrary(doc, thing), { numRuns: 200, seed: 7 }) as Record<
      string,
      unknown
    >[];
    expect(seen.every((v) => 'id' in v && 'count' in v)).toBe(true);
    expect(seen.some((v) => 'kind' in v)).toBe(true);
    expect(seen.some((v) => !('kind' in v))).toBe(true);
  });

  it('never draws NUL or an unpaired surrogate', () => {
    fc.assert(
      fc.property(validArbitrary(doc, { type: 'string', maxLength: 40 }), (value) => {
        const text = value as string;
        expect(text.includes(String.fromCharCode(0))).toBe(false);
        // Every UTF-16 unit sits in a pair or outside the surrogate range: encoding round-trips exactly.
        expect(Buffer.from(text, 'utf8').toString('utf8')).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses references it cannot resolve instead of drawing nothing', () => {
    expect(() => resolveSchema(doc, { $ref: '#/components/schemas/Missing' })).toThrow(/unresolved/);
  });
});

describe('invalidArbitrary', () => {
  it('draws values the schema refuses', () => {
    const validate = validator(thing);
    const broken = invalidArbitrary(doc, thing);
    if (!broken) throw new Error('no way to break Thing');
    const values = fc.sample(broken, { numRuns: 300, seed: 3 });
    expect(values.filter((v) => validate(v))).toEqual([]);
  });

  it('breaks nested fields, required fields and closed objects', () => {
    const broken = invalidArbitrary(doc, thing);
    if (!broken) throw new Error('no way to break Thing');
    const values = fc.sample(broken, { numRuns: 500, seed: 11 }) as Record<string, unknown>[];
    const objects = values.filter((v) => typeof v === 'object' && v !== null && !Array.isArray(v));
    expect(objects.some((v) => !('id' in v) || !('count' in v))).toBe(true);
    expect(objects.some((v) => 'unexpected_field_x' in v)).toBe(true);
    expect(objects.some((v) => typeof v.count === 'number' && (v.count > 10 || v.count < 1))).toBe(true);
  });

  it('has nothing to break in a schema that accepts anything', () => {
    expect(invalidArbitrary(doc, {})).toBeUndefined();
  });
});

/** Every request schema of the fuzzed documents: bodies and parameters. */
function requestSchemas(d: OpenApiDocument): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const [path, item] of Object.entries(d.paths ?? {})) {
    for (const [method, op] of Object.entries(item)) {
      if (typeof op !== 'object' || op === null || !('responses' in op)) continue;
      const o = op as { requestBody?: unknown; parameters?: unknown[] };
      const body = resolveSchema(d, o.requestBody) as { content?: Record<string, { schema?: unknown }> };
      const schema = body.content?.['application/json']?.schema;
      if (schema) out.push([`${method} ${path} body`, schema]);
      for (const p of [...((item.parameters as unknown[]) ?? []), ...(o.parameters ?? [])]) {
        const param = resolveSchema(d, p) as { name: string; schema?: unknown };
        if (param.schema) out.push([`${method} ${path} ${param.name}`, param.schema]);
      }
    }
  }
  return out;
}

describe.each([
  ['hub', hubDocument],
  ['workflow', workflowDocument],
])('the %s document', (_name, d) => {
  const validate = documentValidator(d);
  it.each(requestSchemas(d))(
    '%s: drawn values mostly validate and broken ones never do',
    (_where, schema) => {
      const check = validate(schema);
      const good = fc.sample(validArbitrary(d, schema), { numRuns: 20, seed: 5 });
      // Overlapping alternatives may make a few draws ambiguous; the suite filters those out.
      expect(good.filter((v) => check(v)).length).toBeGreaterThanOrEqual(15);
      const broken = invalidArbitrary(d, schema);
      if (broken) {
        const bad = fc.sample(broken, { numRuns: 20, seed: 5 });
        expect(bad.filter((v) => !check(v)).length).toBeGreaterThanOrEqual(15);
      }
    },
  );
});
