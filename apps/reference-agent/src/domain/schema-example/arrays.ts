import type { Context, GenerateValue, Position, Schema } from './schema';

/** An array: `prefixItems`, then `items`, enough of them for `minItems` and `minContains`, within `maxItems`. */
export function arrayValue(s: Schema, ctx: Context, where: Position, generate: GenerateValue): unknown[] {
  const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : [];
  const items = s.items;
  const minItems = typeof s.minItems === 'number' ? s.minItems : 0;
  const maxItems = typeof s.maxItems === 'number' ? s.maxItems : Infinity;
  const contains = s.contains;
  const minContains = typeof s.minContains === 'number' ? s.minContains : contains === undefined ? 0 : 1;

  let count = minItems;
  if (where.depth < ctx.maxDepth) count = Math.max(count, prefix.length, items === false ? 0 : 1);
  count = Math.max(count, minContains);
  if (items === false) count = Math.min(count, prefix.length);
  count = Math.min(count, maxItems);

  const out: unknown[] = [];
  for (let index = 0; index < count; index += 1) {
    let sub: unknown = index < prefix.length ? prefix[index] : (items ?? true);
    if (contains !== undefined && index < minContains) {
      sub = { allOf: [sub === true ? {} : sub, contains] };
    }
    out.push(
      generate(sub, ctx, {
        key: where.key,
        path: `${where.path}/${index}`,
        depth: where.depth + 1,
        variant: where.variant + index,
      }),
    );
  }
  return out;
}
