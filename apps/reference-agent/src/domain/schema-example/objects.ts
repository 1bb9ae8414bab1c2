import { matchesPattern, samplePattern } from './sample-pattern';
import { isSchema } from './schema';
import type { Context, GenerateValue, Position, Schema } from './schema';

/**
 * An object: required members, then declared ones while not too deep, dependent requirements, and extra
 * members up to `minProperties` (named after `patternProperties` when only those are allowed).
 */
export function objectValue(
  s: Schema,
  ctx: Context,
  where: Position,
  generate: GenerateValue,
): Record<string, unknown> {
  const properties = isSchema(s.properties) ? s.properties : {};
  const required = Array.isArray(s.required)
    ? s.required.filter((r): r is string => typeof r === 'string')
    : [];
  const maxProperties = typeof s.maxProperties === 'number' ? s.maxProperties : Infinity;
  const minProperties = typeof s.minProperties === 'number' ? s.minProperties : 0;
  const includeOptional = where.depth < ctx.maxDepth;
  const out: Record<string, unknown> = {};

  /** Every subschema a member named `key` must satisfy: its property, matching patterns, or the rest. */
  const schemaForKey = (key: string): unknown => {
    const applicable: unknown[] = key in properties ? [properties[key]] : [];
    if (isSchema(s.patternProperties)) {
      for (const [pattern, sub] of Object.entries(s.patternProperties)) {
        if (matchesPattern(pattern, key)) applicable.push(sub);
      }
    }
    if (applicable.length === 0) return s.additionalProperties ?? true;
    return applicable.length === 1 ? applicable[0] : { allOf: applicable };
  };
  const add = (key: string) => {
    if (key in out) return;
    const sub = schemaForKey(key);
    if (sub === false) return;
    out[key] = generate(sub, ctx, {
      key,
      path: `${where.path}/${key}`,
      depth: where.depth + 1,
      variant: where.variant,
    });
  };

  for (const key of required) add(key);
  if (includeOptional) {
    for (const key of Object.keys(properties)) {
      if (Object.keys(out).length >= maxProperties) break;
      if (properties[key] === false) continue;
      add(key);
    }
  }
  // Dependent requirements of what is present.
  if (isSchema(s.dependentRequired)) {
    for (const [key, dependents] of Object.entries(s.dependentRequired)) {
      if (key in out && Array.isArray(dependents)) {
        for (const dependent of dependents) if (typeof dependent === 'string') add(dependent);
      }
    }
  }
  // Extra members when fewer than `minProperties` are declared.
  let extra = 1;
  while (Object.keys(out).length < minProperties && extra <= minProperties + 8) {
    let key = `${where.key ?? 'item'}_${extra}`;
    if (s.additionalProperties === false && isSchema(s.patternProperties)) {
      const pattern = Object.keys(s.patternProperties)[0];
      key = (pattern !== undefined ? samplePattern(pattern, extra) : undefined) ?? key;
    }
    extra += 1;
    if (s.additionalProperties === false && !(key in properties) && !isSchema(s.patternProperties)) break;
    add(key);
  }
  return out;
}
