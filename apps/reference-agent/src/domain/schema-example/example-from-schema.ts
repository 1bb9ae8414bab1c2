import { arrayValue } from './arrays';
import { flatten } from './flatten';
import { numberValue } from './numbers';
import { objectValue } from './objects';
import { typesOf } from './schema';
import type { Context, Position, Schema } from './schema';
import { stringValue } from './strings';

export interface ExampleOptions {
  /** The invocation's intent; text fields such as `summary`, `title`, `description` and `intent` use it. */
  intent: string;
  /** The instant used for `date-time`, `date` and `time` values (default: now). Fix it for repeatable output. */
  now?: Date;
  /** Nesting depth after which optional properties are left out and arrays hold only `minItems` (default 6). */
  maxDepth?: number;
}

/** Beyond this depth even required members stop: a schema that requires itself has no finite instance. */
const HARD_DEPTH_LIMIT = 32;

function pickType(schema: Schema): string {
  const declared = typesOf(schema);
  if (declared && declared.length > 0) return declared.find((t) => t !== 'null') ?? 'null';
  if (
    'properties' in schema ||
    'required' in schema ||
    'additionalProperties' in schema ||
    'patternProperties' in schema ||
    'minProperties' in schema
  )
    return 'object';
  if ('items' in schema || 'prefixItems' in schema || 'minItems' in schema || 'contains' in schema)
    return 'array';
  if (
    'minimum' in schema ||
    'maximum' in schema ||
    'exclusiveMinimum' in schema ||
    'exclusiveMaximum' in schema ||
    'multipleOf' in schema
  )
    return 'number';
  return 'string';
}

function generate(schema: unknown, ctx: Context, where: Position): unknown {
  const flat = flatten(schema, ctx);
  if (flat === false) return null;
  const s: Schema = flat === true ? {} : flat;
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[where.variant % s.enum.length];
  if (where.depth > HARD_DEPTH_LIMIT) return null;
  switch (pickType(s)) {
    case 'object':
      return objectValue(s, ctx, where, generate);
    case 'array':
      return arrayValue(s, ctx, where, generate);
    case 'integer':
      return numberValue(s, true, where.variant);
    case 'number':
      return numberValue(s, false, where.variant);
    case 'boolean':
      return where.variant % 2 === 0;
    case 'null':
      return null;
    default:
      return stringValue(s, ctx, where);
  }
}

/**
 * Builds a value that conforms to a JSON Schema (draft 2020-12), filled from the intent where a field's name
 * says it describes the request (`summary`, `title`, `description`, `intent`, …). Supports objects (required
 * and declared properties, `additionalProperties`, `patternProperties`, `minProperties`/`maxProperties`,
 * `dependentRequired`), strings (lengths, `format`, `pattern` with `examples`/`default` as fallbacks), numbers
 * and integers (bounds, `multipleOf`), booleans, null, arrays (`minItems`/`maxItems`, `items`,
 * `prefixItems`, `contains`, distinct items), `enum`/`const`, `oneOf`/`anyOf` (first non-null branch),
 * `allOf` (merged), local `$ref` (`#/$defs/…`, JSON Pointers, `$anchor`) and nullable type arrays.
 * The output is deterministic for the same schema, intent and `now`.
 */
export function exampleFromSchema(schema: unknown, options: ExampleOptions): unknown {
  const ctx: Context = {
    root: schema,
    intent: options.intent,
    now: options.now ?? new Date(),
    maxDepth: options.maxDepth ?? 6,
  };
  return generate(schema, ctx, { key: undefined, path: '', depth: 0, variant: 0 });
}
