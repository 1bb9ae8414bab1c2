import fc from 'fast-check';
import type { Arbitrary } from 'fast-check';
import type { OpenApiDocument } from '@svc/contracts';

/**
 * JSON Schema (the OpenAPI 3.1 dialect our documents use) to fast-check arbitraries. `validArbitrary` draws
 * values the schema accepts; `invalidArbitrary` draws values it refuses, each broken in one place (a wrong
 * type, a missing required field, an unknown field, a bound or pattern crossed, a value outside an enum).
 * Both work on a schema cut out of a document: `$ref`s resolve against that document's components.
 *
 * What a schema cannot say is left to the caller's filter (the suite checks every drawn value with ajv
 * before sending it): `oneOf` branches that overlap, `not`, formats fast-check has no arbitrary for.
 * Strings never hold NUL or an unpaired surrogate: the documents' text rule refuses them everywhere.
 */

export type Schema = Record<string, unknown>;

export interface ArbitraryOptions {
  /** How deep objects and arrays nest before optional parts are left out (default 4). */
  maxDepth?: number;
  /** Longest string drawn where the schema sets no `maxLength` (default 24). */
  maxStringLength?: number;
  /** Most items drawn where the schema sets no `maxItems` (default 3). */
  maxItems?: number;
}

const DEFAULTS: Required<ArbitraryOptions> = { maxDepth: 4, maxStringLength: 24, maxItems: 3 };

/** Follows local `#/…` references until a schema that is not a reference. */
export function resolveSchema(doc: OpenApiDocument, schema: unknown): Schema {
  let node = (schema ?? {}) as Schema;
  for (let hops = 0; typeof node.$ref === 'string'; hops += 1) {
    const ref = node.$ref as string;
    if (!ref.startsWith('#/') || hops > 32) throw new Error(`unsupported reference ${ref}`);
    let target: unknown = doc;
    for (const part of ref.slice(2).split('/'))
      target = (target as Record<string, unknown> | undefined)?.[part];
    if (target === undefined) throw new Error(`unresolved reference ${ref}`);
    const { $ref: _ref, ...siblings } = node;
    node = { ...(target as Schema), ...siblings };
  }
  return node;
}

/** One schema for an `allOf`: properties and required lists joined, the other keywords of later parts win. */
function mergeAllOf(doc: OpenApiDocument, schema: Schema): Schema {
  const { allOf, ...rest } = schema;
  let merged: Schema = { ...rest };
  for (const part of allOf as unknown[]) {
    const p = flatten(doc, part);
    merged = {
      ...merged,
      ...p,
      properties: { ...(merged.properties as object), ...(p.properties as object) },
      required: [...((merged.required as string[]) ?? []), ...((p.required as string[]) ?? [])],
    };
  }
  return merged;
}

function flatten(doc: OpenApiDocument, schema: unknown): Schema {
  const resolved = resolveSchema(doc, schema);
  return Array.isArray(resolved.allOf) ? mergeAllOf(doc, resolved) : resolved;
}

function types(schema: Schema): string[] {
  if (Array.isArray(schema.type)) return schema.type as string[];
  if (typeof schema.type === 'string') return [schema.type];
  if (schema.properties || schema.additionalProperties !== undefined || schema.required) return ['object'];
  if (schema.items) return ['array'];
  return [];
}

const codePoints = (text: string) => [...text].length;

/** Text the documents accept anywhere: any Unicode scalar value except NUL. */
function textUnit(): Arbitrary<string> {
  return fc
    .oneof(
      { weight: 3, arbitrary: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-_. '.split('')) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
    )
    .filter((c) => c !== '\u0000');
}

function isoDate(min = Date.UTC(2000, 0, 1), max = Date.UTC(2099, 11, 31)): Arbitrary<Date> {
  return fc.date({ min: new Date(min), max: new Date(max), noInvalidDate: true });
}

function formatString(format: string): Arbitrary<string> | undefined {
  switch (format) {
    case 'date-time':
      return isoDate().map((d) => d.toISOString());
    case 'date':
      return isoDate().map((d) => d.toISOString().slice(0, 10));
    case 'email':
      return fc
        .tuple(
          fc.stringMatching(/^[a-z][a-z0-9.]{0,10}[a-z0-9]$/),
          fc.constantFrom('example.test', 'mail.test'),
        )
        .filter(([local]) => !local.includes('..'))
        .map(([local, domain]) => `${local}@${domain}`);
    case 'uri':
      return fc.webUrl({ withQueryParameters: false, withFragments: false });
    case 'uuid':
      return fc.uuid();
    default:
      return undefined;
  }
}

function stringArbitrary(schema: Schema, options: Required<ArbitraryOptions>): Arbitrary<string> {
  const minLength = (schema.minLength as number | undefined) ?? 0;
  const maxLength = (schema.maxLength as number | undefined) ?? Math.max(minLength, options.maxStringLength);
  const fits = (s: string) =>
    codePoints(s) >= minLength && codePoints(s) <= maxLength && !s.includes('\u0000');
  const byFormat = typeof schema.format === 'string' ? formatString(schema.format) : undefined;
  if (typeof schema.pattern === 'string') {
    const pattern = new RegExp(schema.pattern as string, 'u');
    const base = byFormat ? byFormat.filter((s) => pattern.test(s)) : fc.stringMatching(pattern);
    return base.filter(fits);
  }
  if (byFormat) return byFormat.filter(fits);
  return fc
    .array(textUnit(), { minLength, maxLength: Math.min(maxLength, minLength + options.maxStringLength) })
    .map((units) => units.join(''))
    .filter(fits);
}

function numberArbitrary(schema: Schema, integer: boolean): Arbitrary<number> {
  const exclusiveMin = schema.exclusiveMinimum as number | undefined;
  const exclusiveMax = schema.exclusiveMaximum as number | undefined;
  let min = (schema.minimum as number | undefined) ?? (exclusiveMin !== undefined ? exclusiveMin : -1e6);
  let max = (schema.maximum as number | undefined) ?? (exclusiveMax !== undefined ? exclusiveMax : 1e6);
  if (integer) {
    if (exclusiveMin !== undefined && min === exclusiveMin) min = Math.floor(exclusiveMin) + 1;
    if (exclusiveMax !== undefined && max === exclusiveMax) max = Math.ceil(exclusiveMax) - 1;
    const multiple = schema.multipleOf as number | undefined;
    const ints = fc.integer({ min: Math.ceil(min), max: Math.floor(max) });
    return multiple
      ? ints.map((n) => Math.round(n / multiple) * multiple).filter((n) => n >= min && n <= max)
      : ints;
  }
  return fc
    .double({ min, max, noNaN: true, noDefaultInfinity: true })
    .filter(
      (n) =>
        (exclusiveMin === undefined || n > exclusiveMin) && (exclusiveMax === undefined || n < exclusiveMax),
    );
}

function objectArbitrary(
  doc: OpenApiDocument,
  schema: Schema,
  options: Required<ArbitraryOptions>,
  depth: number,
): Arbitrary<Record<string, unknown>> {
  const properties = (schema.properties as Record<string, unknown> | undefined) ?? {};
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const deep = depth >= options.maxDepth;
  const keys = Object.keys(properties).filter((k) => required.has(k) || !deep);
  const record = fc.record(
    Object.fromEntries(keys.map((k) => [k, build(doc, properties[k], options, depth + 1)])),
    { requiredKeys: keys.filter((k) => required.has(k)) },
  ) as Arbitrary<Record<string, unknown>>;
  const extra = schema.additionalProperties;
  const minProperties = (schema.minProperties as number | undefined) ?? 0;
  const maxProperties = (schema.maxProperties as number | undefined) ?? Infinity;
  const count = (o: object) => Object.keys(o).length;
  if (extra === undefined || extra === false || extra === true || deep) {
    // Open objects get no invented fields: a field the schema does not name is not what a client sends.
    return record.filter((o) => count(o) >= minProperties && count(o) <= maxProperties);
  }
  const valueSchema = extra as Schema;
  const keySchema = (schema.propertyNames as Schema | undefined) ?? {
    type: 'string',
    minLength: 1,
    maxLength: 16,
  };
  const maxKeys = Math.min(maxProperties, Math.max(minProperties, options.maxItems));
  const map = fc.dictionary(
    stringArbitrary({ ...flatten(doc, keySchema), type: 'string' }, options).filter(
      (k) => !(k in properties),
    ),
    build(doc, valueSchema, options, depth + 1),
    { minKeys: Math.max(0, minProperties - Object.keys(properties).length), maxKeys },
  );
  return fc
    .tuple(record, map)
    .map(([named, free]) => ({ ...free, ...named }))
    .filter((o) => count(o) >= minProperties && count(o) <= maxProperties);
}

function arrayArbitrary(
  doc: OpenApiDocument,
  schema: Schema,
  options: Required<ArbitraryOptions>,
  depth: number,
): Arbitrary<unknown[]> {
  const minLength = (schema.minItems as number | undefined) ?? 0;
  const cap = depth >= options.maxDepth ? minLength : minLength + options.maxItems;
  const maxLength = Math.min((schema.maxItems as number | undefined) ?? cap, cap);
  const item = build(doc, schema.items ?? {}, options, depth + 1);
  return schema.uniqueItems
    ? fc.uniqueArray(item, { minLength, maxLength, selector: (v) => JSON.stringify(v) })
    : fc.array(item, { minLength, maxLength });
}

function build(
  doc: OpenApiDocument,
  raw: unknown,
  options: Required<ArbitraryOptions>,
  depth: number,
): Arbitrary<unknown> {
  const schema = flatten(doc, raw);
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const branches = (schema.oneOf ?? schema.anyOf) as unknown[] | undefined;
  if (Array.isArray(branches) && branches.length > 0) {
    const { oneOf: _o, anyOf: _a, ...shared } = schema;
    return fc.oneof(...branches.map((b) => build(doc, { ...shared, ...flatten(doc, b) }, options, depth)));
  }
  const kinds = types(schema);
  if (kinds.length === 0) return fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean());
  return fc.oneof(
    ...kinds.map((kind): Arbitrary<unknown> => {
      switch (kind) {
        case 'string':
          return stringArbitrary(schema, options);
        case 'integer':
          return numberArbitrary(schema, true);
        case 'number':
          return numberArbitrary(schema, false);
        case 'boolean':
          return fc.boolean();
        case 'null':
          return fc.constant(null);
        case 'array':
          return arrayArbitrary(doc, schema, options, depth);
        case 'object':
          return objectArbitrary(doc, schema, options, depth);
        default:
          throw new Error(`unsupported type ${kind}`);
      }
    }),
  );
}

/** Values the schema accepts (as far as its keywords go; see the module comment). */
export function validArbitrary(
  doc: OpenApiDocument,
  schema: unknown,
  options: ArbitraryOptions = {},
): Arbitrary<unknown> {
  return build(doc, schema, { ...DEFAULTS, ...options }, 0);
}

/** A value of another JSON type than every type the schema allows. */
function wrongType(schema: Schema): Arbitrary<unknown> | undefined {
  const allowed = new Set(types(schema));
  if (allowed.has('number')) allowed.add('integer');
  const candidates: [string, Arbitrary<unknown>][] = [
    ['string', fc.constantFrom('x', 'not-a-number', '12abc')],
    ['integer', fc.integer({ min: -5, max: 5 })],
    ['boolean', fc.boolean()],
    ['null', fc.constant(null)],
    ['array', fc.constant([])],
    ['object', fc.constant({})],
  ];
  if (allowed.size === 0) return undefined;
  const others = candidates.filter(([kind]) => !allowed.has(kind)).map(([, arb]) => arb);
  return others.length > 0 ? fc.oneof(...others) : undefined;
}

/** Ways to break a value of this schema at its top level (not inside its properties). */
function breakHere(
  doc: OpenApiDocument,
  schema: Schema,
  options: Required<ArbitraryOptions>,
): Arbitrary<unknown>[] {
  const out: Arbitrary<unknown>[] = [];
  const wrong = wrongType(schema);
  if (wrong) out.push(wrong);
  if (Array.isArray(schema.enum) || 'const' in schema) {
    const allowed = (schema.enum as unknown[] | undefined) ?? [schema.const];
    if (allowed.every((v) => typeof v === 'string')) {
      const misses = ['not_a_listed_value', 'UNLISTED'].filter((v) => !allowed.includes(v));
      out.push(fc.constantFrom(...misses));
    }
  }
  const kinds = types(schema);
  if (kinds.includes('string') && !schema.enum) {
    if (typeof schema.maxLength === 'number') {
      out.push(fc.constant('a'.repeat((schema.maxLength as number) + 1)));
    }
    if (typeof schema.minLength === 'number' && (schema.minLength as number) > 0) {
      out.push(fc.constant('a'.repeat((schema.minLength as number) - 1)));
    }
    if (typeof schema.pattern === 'string') {
      const pattern = new RegExp(schema.pattern as string, 'u');
      const misses = ['', ' ', '!', ' spaced out ', 'UPPER&lower', '..', '\u00e9'].filter(
        (s) => !pattern.test(s),
      );
      if (misses.length > 0) out.push(fc.constantFrom(...misses));
    }
    if (schema.format === 'date-time' || schema.format === 'date') out.push(fc.constant('not-a-date'));
    if (schema.format === 'email') out.push(fc.constant('not-an-email'));
  }
  if ((kinds.includes('integer') || kinds.includes('number')) && !kinds.includes('string')) {
    if (typeof schema.maximum === 'number') out.push(fc.constant((schema.maximum as number) + 1));
    if (typeof schema.minimum === 'number') out.push(fc.constant((schema.minimum as number) - 1));
    if (kinds.includes('integer') && !kinds.includes('number')) out.push(fc.constant(1.5));
  }
  if (kinds.includes('array')) {
    const item = build(doc, schema.items ?? {}, options, options.maxDepth);
    if (typeof schema.maxItems === 'number') {
      out.push(
        fc.array(item, {
          minLength: (schema.maxItems as number) + 1,
          maxLength: (schema.maxItems as number) + 1,
        }),
      );
    }
    if (typeof schema.minItems === 'number' && (schema.minItems as number) > 0) out.push(fc.constant([]));
  }
  return out;
}

function invalid(
  doc: OpenApiDocument,
  raw: unknown,
  options: Required<ArbitraryOptions>,
  depth: number,
): Arbitrary<unknown> | undefined {
  const schema = flatten(doc, raw);
  const ways = breakHere(doc, schema, options);
  const kinds = types(schema);
  const properties = (schema.properties as Record<string, unknown> | undefined) ?? {};
  const branches = schema.oneOf ?? schema.anyOf;
  if (kinds.includes('object') && !branches && depth < options.maxDepth) {
    const valid = objectArbitrary(doc, schema, options, depth);
    const required = (schema.required as string[] | undefined) ?? [];
    if (required.length > 0) {
      ways.push(
        fc.tuple(valid, fc.constantFrom(...required)).map(([o, key]) => {
          const { [key]: _dropped, ...rest } = o;
          return rest;
        }),
      );
    }
    if (schema.additionalProperties === false) {
      ways.push(valid.map((o) => ({ ...o, unexpected_field_x: 'x' })));
    }
    for (const [key, sub] of Object.entries(properties)) {
      const broken = invalid(doc, sub, options, depth + 1);
      if (broken) ways.push(fc.tuple(valid, broken).map(([o, b]) => ({ ...o, [key]: b })));
    }
  }
  if (kinds.includes('array') && schema.items && !branches && depth < options.maxDepth) {
    const broken = invalid(doc, schema.items, options, depth + 1);
    if (broken) ways.push(broken.map((b) => [b]));
  }
  return ways.length > 0 ? fc.oneof(...ways) : undefined;
}

/**
 * Values the schema refuses, each broken in one place, or `undefined` when the schema accepts anything.
 * Overlapping alternatives can make a drawn value valid after all: callers keep only what their validator
 * refuses.
 */
export function invalidArbitrary(
  doc: OpenApiDocument,
  schema: unknown,
  options: ArbitraryOptions = {},
): Arbitrary<unknown> | undefined {
  return invalid(doc, schema, { ...DEFAULTS, ...options }, 0);
}
