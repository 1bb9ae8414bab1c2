/**
 * Checks a value against a JSON Schema of a contract document by walking the schema: no code is generated,
 * so it runs under the page's policy (no 'unsafe-eval', which compiling validators need). It knows the
 * keywords the Workflow API's request schemas use (type, enum, const, properties, required,
 * additionalProperties, items, min/maxItems, min/maxLength, pattern, minimum, maximum, min/maxProperties,
 * propertyNames, allOf, anyOf, oneOf and local `$ref`s); any other keyword is ignored, so the server has the
 * last word and its field errors are shown too.
 */

import { describePattern } from './pattern-words';

export type JsonSchema = boolean | { [keyword: string]: unknown };

export interface SchemaError {
  /** JSON Pointer of the offending value (`/template/version`); `''` is the value itself. */
  path: string;
  message: string;
}

type Components = { schemas?: Record<string, JsonSchema> };

export function checkSchema(
  value: unknown,
  schema: JsonSchema,
  components: Components = {},
  maxErrors = 50,
): SchemaError[] {
  const errors: SchemaError[] = [];
  walk(value, schema, '', { components, errors, maxErrors });
  return errors;
}

interface Walk {
  components: Components;
  errors: SchemaError[];
  maxErrors: number;
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typeMatches(value: unknown, type: string): boolean {
  const actual = typeOf(value);
  return actual === type || (type === 'number' && actual === 'integer');
}

function resolve(ref: string, components: Components): JsonSchema {
  const match = /^#\/components\/schemas\/([^/]+)$/.exec(ref);
  const target = match ? components.schemas?.[match[1]!] : undefined;
  if (target === undefined) throw new Error(`unresolved schema reference ${ref}`);
  return target;
}

const pointer = (path: string, key: string | number) =>
  `${path}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;

const characters = (text: string) => Array.from(text).length;

function walk(value: unknown, schema: JsonSchema, path: string, w: Walk): void {
  const fail = (message: string) => {
    if (w.errors.length < w.maxErrors) w.errors.push({ path, message });
  };
  if (schema === true) return;
  if (schema === false) return fail('is not allowed');
  const s = schema;
  if (typeof s.$ref === 'string') walk(value, resolve(s.$ref, w.components), path, w);

  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
    if (!types.some((t) => typeMatches(value, t))) return fail(`must be ${types.join(' or ')}`);
  }
  if (Array.isArray(s.enum) && !s.enum.some((option) => option === value))
    fail(`must be one of ${s.enum.map((o) => JSON.stringify(o)).join(', ')}`);
  if ('const' in s && s.const !== value) fail(`must be ${JSON.stringify(s.const)}`);

  if (typeof value === 'string') {
    if (typeof s.minLength === 'number' && characters(value) < s.minLength)
      fail(s.minLength === 1 ? 'must not be empty' : `must have at least ${s.minLength} characters`);
    if (typeof s.maxLength === 'number' && characters(value) > s.maxLength)
      fail(`must have at most ${s.maxLength} characters`);
    if (typeof s.pattern === 'string' && !new RegExp(s.pattern, 'u').test(value))
      fail(`must ${describePattern(s.pattern)}`);
  }
  if (typeof value === 'number') {
    if (typeof s.minimum === 'number' && value < s.minimum) fail(`must be at least ${s.minimum}`);
    if (typeof s.maximum === 'number' && value > s.maximum) fail(`must be at most ${s.maximum}`);
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === 'number' && value.length < s.minItems)
      fail(`must have at least ${s.minItems} items`);
    if (typeof s.maxItems === 'number' && value.length > s.maxItems)
      fail(`must have at most ${s.maxItems} items`);
    if (s.items !== undefined)
      value.forEach((item, index) => walk(item, s.items as JsonSchema, pointer(path, index), w));
  }
  if (typeOf(value) === 'object') {
    const object = value as Record<string, unknown>;
    const keys = Object.keys(object);
    const properties = (s.properties ?? {}) as Record<string, JsonSchema>;
    for (const name of (s.required as string[] | undefined) ?? []) {
      if (!(name in object) && w.errors.length < w.maxErrors)
        w.errors.push({ path: pointer(path, name), message: 'is required' });
    }
    if (typeof s.maxProperties === 'number' && keys.length > s.maxProperties)
      fail(`must have at most ${s.maxProperties} entries`);
    if (typeof s.minProperties === 'number' && keys.length < s.minProperties)
      fail(`must have at least ${s.minProperties} entries`);
    for (const key of keys) {
      const at = pointer(path, key);
      if (s.propertyNames !== undefined) {
        const nameErrors = checkSchema(key, s.propertyNames as JsonSchema, w.components, 1);
        if (nameErrors[0] && w.errors.length < w.maxErrors)
          w.errors.push({ path: at, message: `name ${nameErrors[0].message}` });
      }
      if (key in properties) walk(object[key], properties[key]!, at, w);
      else if (s.additionalProperties === false) {
        if (w.errors.length < w.maxErrors) w.errors.push({ path: at, message: 'is not a known field' });
      } else if (s.additionalProperties !== undefined && s.additionalProperties !== true)
        walk(object[key], s.additionalProperties as JsonSchema, at, w);
    }
  }

  if (Array.isArray(s.allOf)) for (const part of s.allOf as JsonSchema[]) walk(value, part, path, w);
  const passing = (options: JsonSchema[]) =>
    options.filter((option) => checkSchema(value, option, w.components, 1).length === 0).length;
  if (Array.isArray(s.anyOf) && passing(s.anyOf as JsonSchema[]) === 0)
    fail('matches none of the allowed forms');
  if (Array.isArray(s.oneOf) && passing(s.oneOf as JsonSchema[]) !== 1)
    fail('must match exactly one of the allowed forms');
}
