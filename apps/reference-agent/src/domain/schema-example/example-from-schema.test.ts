import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { exampleFromSchema } from './example-from-schema';
import { samplePattern } from './sample-pattern';

const INTENT = 'Compare the Q3 revenue of our three EU subsidiaries and explain the largest gap.';
const NOW = new Date('2026-11-21T10:00:00.000Z');

function validator() {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv;
}

function expectValid(schema: object, value: unknown) {
  const validate = validator().compile(schema);
  const ok = validate(value);
  if (!ok) throw new Error(`invalid: ${JSON.stringify(validate.errors)}\nvalue: ${JSON.stringify(value)}`);
  expect(ok).toBe(true);
}

/** Artifact schemas as a team would register them. */
const REALISTIC_SCHEMAS: Record<string, object> = {
  'research report': {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    additionalProperties: false,
    required: ['report_id', 'title', 'summary', 'findings', 'generated_at', 'status'],
    properties: {
      report_id: { type: 'string', format: 'uuid' },
      title: { type: 'string', minLength: 5, maxLength: 120 },
      summary: { type: 'string', minLength: 40, maxLength: 2000 },
      status: { type: 'string', enum: ['draft', 'final'] },
      generated_at: { type: 'string', format: 'date-time' },
      findings: {
        type: 'array',
        minItems: 2,
        maxItems: 10,
        uniqueItems: true,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['claim', 'confidence', 'sources'],
          properties: {
            claim: { type: 'string', minLength: 1 },
            confidence: { type: 'number', minimum: 0, maximum: 1 },
            sources: { type: 'array', minItems: 1, items: { type: 'string', format: 'uri' } },
            contact: { type: 'string', format: 'email' },
          },
        },
      },
      tags: { type: 'array', items: { type: 'string', pattern: '^[a-z][a-z0-9-]*$' }, uniqueItems: true },
    },
  },
  'change plan with $defs': {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $defs: {
      step: {
        type: 'object',
        required: ['id', 'description', 'effort_minutes', 'risk'],
        additionalProperties: false,
        properties: {
          id: { type: 'string', pattern: '^STEP-[0-9]{3}$' },
          description: { type: 'string', maxLength: 60 },
          effort_minutes: { type: 'integer', minimum: 5, maximum: 60, multipleOf: 5 },
          risk: { $ref: '#/$defs/risk' },
          depends_on: { type: 'array', items: { type: 'string', pattern: '^STEP-[0-9]{3}$' } },
        },
      },
      risk: { type: 'string', enum: ['low', 'medium', 'high'] },
    },
    type: 'object',
    required: ['intent', 'steps', 'repository'],
    properties: {
      intent: { type: 'string' },
      repository: { type: 'string', format: 'uri', pattern: '^https://' },
      steps: { type: 'array', items: { $ref: '#/$defs/step' }, minItems: 3, uniqueItems: true },
      rollback: { $ref: '#/$defs/step' },
    },
  },
  'incident with allOf, oneOf, anyOf and nullable types': {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    allOf: [
      {
        type: 'object',
        required: ['incident_id', 'opened_at'],
        properties: {
          incident_id: { type: 'string', pattern: '^INC-\\d{4,6}$' },
          opened_at: { type: 'string', format: 'date-time' },
        },
      },
      {
        type: 'object',
        required: ['impact', 'resolution', 'owner'],
        properties: {
          impact: {
            oneOf: [
              {
                type: 'object',
                required: ['kind', 'customers'],
                additionalProperties: false,
                properties: { kind: { const: 'customer' }, customers: { type: 'integer', minimum: 1 } },
              },
              {
                type: 'object',
                required: ['kind'],
                additionalProperties: false,
                properties: { kind: { const: 'internal' } },
              },
            ],
          },
          resolution: { anyOf: [{ type: 'null' }, { type: 'string', minLength: 10 }] },
          owner: { type: ['string', 'null'], format: 'email' },
          closed_at: { type: ['null', 'string'], format: 'date' },
        },
      },
    ],
    unevaluatedProperties: false,
  },
  'ticket triage with patterns and fallbacks': {
    type: 'object',
    required: ['ticket', 'queue', 'version', 'hash', 'code'],
    properties: {
      ticket: { type: 'string', pattern: '^[A-Z]{2,5}-[1-9][0-9]*$' },
      queue: { type: 'string', pattern: '^(support|billing|security)$' },
      version: { type: 'string', pattern: '^v\\d+\\.\\d+\\.\\d+(-[a-z]+)?$' },
      // A look-ahead the sampler skips: the `examples` fallback is used.
      hash: { type: 'string', pattern: '^(?=.*[A-F])[0-9A-F]{8}$', examples: ['DEADBEEF'] },
      // Only `default` satisfies it.
      code: { type: 'string', pattern: '^(?=x)(?!xx)x[0-9]{2}$', default: 'x42' },
      word: { type: 'string', pattern: '^\\w+$', minLength: 3 },
    },
  },
  'metrics with numeric constraints': {
    type: 'object',
    required: ['ratio', 'temperature', 'step', 'negative', 'exclusive', 'count', 'score', 'flag', 'nothing'],
    properties: {
      ratio: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
      // 0.3 is not a multiple of 0.1 in binary floating point (ajv refuses it); 0.4 is.
      temperature: { type: 'number', multipleOf: 0.1, minimum: 0.25, maximum: 0.45 },
      step: { type: 'number', multipleOf: 0.01, minimum: 10 },
      negative: { type: 'integer', maximum: -10 },
      exclusive: { type: 'integer', exclusiveMinimum: 7, exclusiveMaximum: 9 },
      count: { type: 'integer', minimum: 0, multipleOf: 3 },
      score: { type: 'integer', multipleOf: 2.5 },
      flag: { type: 'boolean' },
      nothing: { type: 'null' },
    },
  },
  'text lengths and formats': {
    type: 'object',
    required: [
      'title',
      'summary',
      'description',
      'short_code',
      'homepage',
      'day',
      'at',
      'host',
      'ip',
      'ip6',
      'pointer',
      'period',
    ],
    properties: {
      title: { type: 'string', maxLength: 12 },
      summary: { type: 'string', minLength: 300 },
      description: { type: 'string', minLength: 10, maxLength: 40 },
      short_code: { type: 'string', minLength: 4, maxLength: 4 },
      homepage: { type: 'string', format: 'uri', minLength: 40 },
      day: { type: 'string', format: 'date' },
      at: { type: 'string', format: 'time' },
      host: { type: 'string', format: 'hostname' },
      ip: { type: 'string', format: 'ipv4' },
      ip6: { type: 'string', format: 'ipv6' },
      pointer: { type: 'string', format: 'json-pointer' },
      period: { type: 'string', format: 'duration' },
    },
  },
  'recursive outline': {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $defs: {
      node: {
        type: 'object',
        required: ['heading', 'children'],
        properties: {
          heading: { type: 'string', minLength: 1 },
          children: { type: 'array', items: { $ref: '#/$defs/node' } },
        },
      },
    },
    type: 'object',
    required: ['outline'],
    properties: { outline: { $ref: '#/$defs/node' } },
  },
  'open maps, tuples and contains': {
    type: 'object',
    required: ['labels', 'scores', 'point', 'checks'],
    properties: {
      labels: { type: 'object', minProperties: 2, additionalProperties: { type: 'string', maxLength: 30 } },
      scores: {
        type: 'object',
        additionalProperties: false,
        minProperties: 1,
        patternProperties: { '^s_[a-z]+$': { type: 'integer', minimum: 1, maximum: 5 } },
      },
      point: {
        type: 'array',
        prefixItems: [{ type: 'number' }, { type: 'number' }, { type: 'string', enum: ['EPSG:4326'] }],
        items: false,
      },
      checks: {
        type: 'array',
        items: {
          type: 'object',
          required: ['name', 'passed'],
          properties: { name: { type: 'string' }, passed: { type: 'boolean' } },
        },
        contains: { type: 'object', properties: { passed: { const: true } }, required: ['passed'] },
        minContains: 2,
      },
    },
    dependentRequired: { labels: ['owner'] },
  },
  'anchors and pointer references': {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    required: ['author', 'reviewers', 'meta'],
    properties: {
      author: { $ref: '#person' },
      reviewers: { type: 'array', minItems: 2, items: { $ref: '#/$defs/person' } },
      meta: { $ref: '#/properties/author' },
    },
    $defs: {
      person: {
        $anchor: 'person',
        type: 'object',
        required: ['name', 'email', 'id'],
        properties: {
          name: { type: 'string' },
          email: { type: 'string', format: 'email' },
          id: { type: 'string', format: 'uuid' },
        },
      },
    },
  },
};

describe('exampleFromSchema', () => {
  it.each(Object.entries(REALISTIC_SCHEMAS))(
    'when the schema is a %s, then the value validates',
    (_name, schema) => {
      const value = exampleFromSchema(schema, { intent: INTENT, now: NOW });
      expectValid(schema, value);
    },
  );

  it('when fields name the request, then they carry the intent', () => {
    const value = exampleFromSchema(REALISTIC_SCHEMAS['research report'] as object, {
      intent: INTENT,
      now: NOW,
    }) as Record<string, unknown>;
    expect(value.title).toBe(
      'Compare the Q3 revenue of our three EU subsidiaries and explain the largest gap',
    );
    expect(value.summary).toContain(INTENT);
    expect(value.generated_at).toBe(NOW.toISOString());
    const plan = exampleFromSchema(REALISTIC_SCHEMAS['change plan with $defs'] as object, {
      intent: INTENT,
      now: NOW,
    }) as Record<string, unknown>;
    expect(plan.intent).toBe(INTENT);
  });

  it('when the same inputs are given twice, then the output is identical (stable identifiers too)', () => {
    for (const schema of Object.values(REALISTIC_SCHEMAS)) {
      expect(exampleFromSchema(schema, { intent: INTENT, now: NOW })).toEqual(
        exampleFromSchema(schema, { intent: INTENT, now: NOW }),
      );
    }
  });

  it('when the intent is long or has astral characters, then lengths are counted in code points', () => {
    const intent = `${'🚀 launch review '.repeat(30)}.`;
    const schema = {
      type: 'object',
      required: ['title', 'summary', 'intent'],
      properties: {
        title: { type: 'string', maxLength: 20 },
        summary: { type: 'string', minLength: 5, maxLength: 50 },
        intent: { type: 'string', maxLength: 100 },
      },
    };
    const value = exampleFromSchema(schema, { intent, now: NOW });
    expectValid(schema, value);
  });

  it('when the intent is empty, then text fields still get a short text', () => {
    const schema = {
      type: 'object',
      required: ['summary'],
      properties: { summary: { type: 'string', minLength: 1 } },
    };
    const value = exampleFromSchema(schema, { intent: '   ', now: NOW }) as { summary: string };
    expectValid(schema, value);
    expect(value.summary).toBe('Example summary');
  });

  it('when the root is a const, an enum, a boolean schema or has no type, then the value fits', () => {
    expect(exampleFromSchema({ const: { a: 1 } }, { intent: INTENT })).toEqual({ a: 1 });
    expect(exampleFromSchema({ enum: ['x', 'y'] }, { intent: INTENT })).toBe('x');
    expect(typeof exampleFromSchema(true, { intent: INTENT })).toBe('string');
    expect(exampleFromSchema({ type: ['null'] }, { intent: INTENT })).toBeNull();
    const untyped = { required: ['a'], properties: { a: { minimum: 3 } } };
    expectValid(untyped, exampleFromSchema(untyped, { intent: INTENT }));
  });

  it('when a required member refers to itself, then generation stops instead of looping', () => {
    const schema = { type: 'object', required: ['next'], properties: { next: { $ref: '#' } } };
    expect(() => exampleFromSchema(schema, { intent: INTENT })).not.toThrow();
  });

  it('when optional members exist beyond maxDepth, then they are left out', () => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'object', properties: { b: { type: 'string' } } } },
    };
    expect(exampleFromSchema(schema, { intent: INTENT, maxDepth: 1 })).toEqual({ a: {} });
    expect(exampleFromSchema(schema, { intent: INTENT, maxDepth: 0 })).toEqual({});
  });
});

describe('samplePattern', () => {
  it.each([
    '^[A-Z]{3}-[0-9]{4}$',
    '^[a-z0-9]+(?:-[a-z0-9]+)*$',
    '^(alpha|beta)_\\d{2}$',
    '^[^\\s@]+@[^\\s@]+\\.[a-z]{2,}$',
    '^https?://[\\w.-]+/\\S*$',
    '^\\p{Lu}\\p{Ll}+$',
    '^\\u0041\\x42[\\u{1F600}]?$',
    '^[\\d\\-]{3}\\b',
    'contains-this',
    '^.{5,8}$',
  ])('when the pattern is %s, then the sample matches it', (pattern) => {
    const value = samplePattern(pattern);
    expect(value).toBeDefined();
    expect(new RegExp(pattern, 'u').test(value as string)).toBe(true);
  });

  it('when variants differ, then samples differ where the pattern allows it', () => {
    expect(samplePattern('^[A-Z]{2}\\d$', 0)).not.toBe(samplePattern('^[A-Z]{2}\\d$', 1));
  });

  it('when the pattern does not compile or cannot be sampled, then the answer is undefined', () => {
    expect(samplePattern('([a-z')).toBeUndefined();
    expect(samplePattern('^(?=.*\\d)[a-z]+$')).toBeUndefined();
  });
});
