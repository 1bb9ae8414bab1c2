import { isSchema, typesOf } from './schema';
import type { Context, Schema } from './schema';

/**
 * The applicator keywords (`$ref`, `allOf`, `oneOf`, `anyOf`) reduced to one flat schema, so value
 * generators only ever see the keywords of one type.
 */

const MAX_REFERENCE_HOPS = 64;

const MIN_KEYWORDS = [
  'minimum',
  'exclusiveMinimum',
  'minLength',
  'minItems',
  'minProperties',
  'minContains',
] as const;
const MAX_KEYWORDS = [
  'maximum',
  'exclusiveMaximum',
  'maxLength',
  'maxItems',
  'maxProperties',
  'maxContains',
] as const;
const SUBSCHEMA_KEYWORDS = ['items', 'additionalProperties', 'contains', 'propertyNames'] as const;

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (isSchema(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${stableJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/** Combines two flattened schemas as `allOf` does: both must hold. */
function mergeSchemas(a: Schema, b: Schema): Schema {
  const out: Schema = { ...a };
  for (const [key, value] of Object.entries(b)) {
    if (!(key in out)) {
      out[key] = value;
      continue;
    }
    const current = out[key];
    if (key === 'properties' && isSchema(current) && isSchema(value)) {
      const properties: Schema = { ...current };
      for (const [name, sub] of Object.entries(value)) {
        properties[name] = name in properties ? { allOf: [properties[name], sub] } : sub;
      }
      out.properties = properties;
    } else if (key === 'required' && Array.isArray(current) && Array.isArray(value)) {
      out.required = [...new Set([...current, ...value])];
    } else if (key === 'type') {
      const right = typesOf(b) ?? [];
      const merged = new Set<string>();
      for (const type of typesOf(a) ?? []) {
        if (right.includes(type)) merged.add(type);
        else if (
          (type === 'integer' && right.includes('number')) ||
          (type === 'number' && right.includes('integer'))
        )
          merged.add('integer');
      }
      if (merged.size > 0) out.type = merged.size === 1 ? [...merged][0] : [...merged];
    } else if ((MIN_KEYWORDS as readonly string[]).includes(key)) {
      if (typeof current === 'number' && typeof value === 'number') out[key] = Math.max(current, value);
    } else if ((MAX_KEYWORDS as readonly string[]).includes(key)) {
      if (typeof current === 'number' && typeof value === 'number') out[key] = Math.min(current, value);
    } else if (key === 'enum' && Array.isArray(current) && Array.isArray(value)) {
      const allowed = new Set(value.map(stableJson));
      const common = current.filter((item) => allowed.has(stableJson(item)));
      if (common.length > 0) out.enum = common;
    } else if ((SUBSCHEMA_KEYWORDS as readonly string[]).includes(key)) {
      if (current === false || value === false) out[key] = false;
      else if (isSchema(current) && isSchema(value)) out[key] = { allOf: [current, value] };
      else if (current === true) out[key] = value;
    } else if (key === 'multipleOf' && typeof current === 'number' && typeof value === 'number') {
      out.multipleOf =
        Number.isInteger(current) && Number.isInteger(value)
          ? (current * value) / gcd(current, value)
          : Math.max(current, value);
    }
  }
  return out;
}

function resolvePointer(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  const pointer = decodeURIComponent(ref.slice(1));
  if (pointer === '') return root;
  if (!pointer.startsWith('/')) {
    return findAnchor(root, pointer);
  }
  let node: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) node = node[Number(token)];
    else if (isSchema(node)) node = node[token];
    else return undefined;
  }
  return node;
}

/** A plain-name fragment (`#node`) refers to the subschema whose `$anchor` is that name. */
function findAnchor(node: unknown, anchor: string): unknown {
  if (Array.isArray(node)) {
    for (const item of node) {
      const found = findAnchor(item, anchor);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (!isSchema(node)) return undefined;
  if (node.$anchor === anchor) return node;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'const' || key === 'enum' || key === 'default' || key === 'examples') continue;
    const found = findAnchor(value, anchor);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Turns a schema into one flat schema: `$ref` is resolved and merged with its siblings, `allOf` is merged,
 * and `oneOf`/`anyOf` take their first branch that is not just `null`.
 */
export function flatten(schema: unknown, ctx: Context, hops = 0): Schema | boolean {
  if (typeof schema === 'boolean') return schema;
  if (!isSchema(schema)) return true;
  if (hops > MAX_REFERENCE_HOPS) return {};
  let current: Schema = { ...schema };

  if (typeof current.$ref === 'string') {
    const target = flatten(resolvePointer(ctx.root, current.$ref), ctx, hops + 1);
    const { $ref: _ref, ...siblings } = current;
    if (target === false) return false;
    current = mergeSchemas(target === true ? {} : target, siblings);
  }

  if (Array.isArray(current.allOf)) {
    const parts = current.allOf.map((part) => flatten(part, ctx, hops + 1));
    const { allOf: _allOf, ...rest } = current;
    if (parts.some((part) => part === false)) return false;
    current = parts.reduce<Schema>((acc, part) => (isSchema(part) ? mergeSchemas(acc, part) : acc), rest);
  }

  for (const keyword of ['oneOf', 'anyOf'] as const) {
    const branches = current[keyword];
    if (!Array.isArray(branches) || branches.length === 0) continue;
    const flattened = branches.map((branch) => flatten(branch, ctx, hops + 1));
    const usable = flattened.filter((branch) => branch !== false);
    const preferred =
      usable.find((branch) => branch === true || typesOf(branch)?.join() !== 'null') ?? usable[0];
    const { [keyword]: _branches, ...rest } = current;
    current = preferred === undefined || preferred === true ? rest : mergeSchemas(rest, preferred);
  }

  // A `$ref` may come back through a merged branch; resolve it too.
  return typeof current.$ref === 'string' || Array.isArray(current.allOf)
    ? flatten(current, ctx, hops + 1)
    : current;
}
