import { createHash } from 'node:crypto';
import { matchesPattern, samplePattern } from './sample-pattern';

export interface ExampleOptions {
  /** The invocation's intent; text fields such as `summary`, `title`, `description` and `intent` use it. */
  intent: string;
  /** The instant used for `date-time`, `date` and `time` values (default: now). Fix it for repeatable output. */
  now?: Date;
  /** Nesting depth after which optional properties are left out and arrays hold only `minItems` (default 6). */
  maxDepth?: number;
}

type Schema = Record<string, unknown>;

interface Context {
  root: unknown;
  intent: string;
  now: Date;
  maxDepth: number;
}

interface Position {
  /** Name of the property (or of the array holding the item) the value is generated for. */
  key: string | undefined;
  /** JSON Pointer of the value, used to derive stable identifiers. */
  path: string;
  depth: number;
  /** Distinguishes sibling array items so `uniqueItems` holds. */
  variant: number;
}

/** Beyond this depth even required members stop: a schema that requires itself has no finite instance. */
const HARD_DEPTH_LIMIT = 32;
const MAX_REFERENCE_HOPS = 64;

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

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

function typesOf(schema: Schema): string[] | undefined {
  if (typeof schema.type === 'string') return [schema.type];
  if (Array.isArray(schema.type)) return schema.type.filter((t): t is string => typeof t === 'string');
  return undefined;
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
function flatten(schema: unknown, ctx: Context, hops = 0): Schema | boolean {
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
      return objectValue(s, ctx, where);
    case 'array':
      return arrayValue(s, ctx, where);
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

// ---------------------------------------------------------------------------------------------- objects

function objectValue(s: Schema, ctx: Context, where: Position): Record<string, unknown> {
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

// ----------------------------------------------------------------------------------------------- arrays

function arrayValue(s: Schema, ctx: Context, where: Position): unknown[] {
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

// ---------------------------------------------------------------------------------------------- numbers

function decimalsOf(value: number): number {
  const text = String(value);
  if (text.includes('e-')) return Number(text.split('e-')[1]);
  return text.includes('.') ? (text.split('.')[1] as string).length : 0;
}

function numberValue(s: Schema, integer: boolean, variant: number): number {
  const num = (key: string) => (typeof s[key] === 'number' ? (s[key] as number) : undefined);
  const minimum = num('minimum');
  const maximum = num('maximum');
  const exclusiveMinimum = num('exclusiveMinimum');
  const exclusiveMaximum = num('exclusiveMaximum');
  const multipleOf = num('multipleOf');

  const low = Math.max(minimum ?? -Infinity, exclusiveMinimum ?? -Infinity);
  const high = Math.min(maximum ?? Infinity, exclusiveMaximum ?? Infinity);
  const fits = (value: number) =>
    (minimum === undefined || value >= minimum) &&
    (maximum === undefined || value <= maximum) &&
    (exclusiveMinimum === undefined || value > exclusiveMinimum) &&
    (exclusiveMaximum === undefined || value < exclusiveMaximum) &&
    (!integer || Number.isInteger(value)) &&
    // The same test ajv runs, so floating-point steps such as 0.1 are judged exactly as the server will.
    (multipleOf === undefined || Number.isInteger(value / multipleOf));

  let target: number;
  if (Number.isFinite(low) && Number.isFinite(high)) target = low + (high - low) / 2;
  else if (Number.isFinite(low)) target = low + 1;
  else if (Number.isFinite(high)) target = Math.min(high - 1, 1);
  else target = 1;
  target += variant;
  if (Number.isFinite(high) && target >= high) target = Number.isFinite(low) ? low + (high - low) / 2 : high;

  const step = multipleOf ?? (integer ? 1 : undefined);
  if (step === undefined) {
    if (fits(target)) return target;
    for (const candidate of [low, high, (low + high) / 2])
      if (Number.isFinite(candidate) && fits(candidate)) return candidate;
    return Number.isFinite(low) ? low : 0;
  }
  const decimals = Math.min(decimalsOf(step), 15);
  const base = Math.round(target / step);
  for (let offset = 0; offset < 10_000; offset += 1) {
    for (const k of offset === 0 ? [base] : [base + offset, base - offset]) {
      const candidate = Number((k * step).toFixed(decimals));
      if (fits(candidate)) return candidate;
    }
  }
  return Number.isFinite(low) ? low : 0;
}

// ---------------------------------------------------------------------------------------------- strings

const FILLER = 'Prepared by the reference agent.';

function codePoints(text: string): string[] {
  return Array.from(text);
}

function normalizedKey(key: string | undefined): string {
  return (key ?? '').toLowerCase().replace(/[^a-z0-9]/g, '');
}

function humanize(key: string | undefined): string {
  const words = (key ?? '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_\-.]+/g, ' ')
    .trim()
    .toLowerCase();
  return words || 'value';
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function capitalize(text: string): string {
  const [first, ...rest] = codePoints(text);
  return first === undefined ? '' : first.toUpperCase() + rest.join('');
}

/** The first sentence or line of the intent, at most 80 characters. */
function titleFrom(intent: string): string {
  const firstSentence = intent.split(/(?<=[.!?])\s|\n/)[0] ?? intent;
  const chars = codePoints(collapse(firstSentence));
  const title = chars.length > 80 ? `${chars.slice(0, 79).join('').trimEnd()}…` : chars.join('');
  return capitalize(title.replace(/[.!?]+$/, ''));
}

/** Field names that carry the request itself, exactly or as a suffix (`user_prompt`). */
const INTENT_NAMES = ['intent', 'request', 'prompt', 'query', 'question', 'task', 'ask', 'goal', 'objective'];
const INTENT_SUFFIXES = ['intent', 'prompt', 'question', 'query', 'request'];
/** Field names that title the result. */
const TITLE_NAMES = ['name', 'label', 'topic', 'caption', 'heading'];
const TITLE_SUFFIXES = ['title', 'headline', 'subject'];
/** Field names that describe the result in a sentence, wherever they occur in the name. */
const SUMMARY_PARTS = ['summary', 'description', 'overview', 'abstract', 'synopsis', 'tldr', 'digest'];

/** Free text for a field, chosen by its name. */
function textFor(key: string | undefined, intent: string, variant: number): string {
  const name = normalizedKey(key);
  const cleanIntent = collapse(intent);
  const suffix = variant > 0 ? ` (${variant + 1})` : '';
  if (cleanIntent) {
    if (INTENT_NAMES.includes(name) || INTENT_SUFFIXES.some((k) => name.endsWith(k)))
      return cleanIntent + suffix;
    if (TITLE_NAMES.includes(name) || TITLE_SUFFIXES.some((k) => name.endsWith(k))) {
      return titleFrom(cleanIntent) + suffix;
    }
    if (SUMMARY_PARTS.some((k) => name.includes(k))) {
      return `${capitalize(humanize(key))} of the work done for: ${cleanIntent}${suffix}`;
    }
  }
  return `Example ${humanize(key)}${suffix}`;
}

/** A deterministic RFC 4122-shaped UUID (version 4 layout) derived from the intent and the value's place. */
function stableUuid(ctx: Context, where: Position): string {
  const hex = createHash('sha256')
    .update(`${ctx.intent}\u0000${where.path}\u0000${where.variant}`)
    .digest('hex');
  const variantNibble = ((parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variantNibble}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function slug(key: string | undefined): string {
  return (
    humanize(key)
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'resource'
  );
}

function formatValue(format: string, ctx: Context, where: Position, minLength: number): string | undefined {
  const n = where.variant;
  const at = new Date(ctx.now.getTime() + n * 1000);
  switch (format) {
    case 'date-time':
      return at.toISOString();
    case 'date':
      return new Date(ctx.now.getTime() + n * 86_400_000).toISOString().slice(0, 10);
    case 'time':
      return `${at.toISOString().slice(11, 19)}Z`;
    case 'duration':
      return `PT${n + 1}M`;
    case 'email':
    case 'idn-email':
      return n > 0 ? `agent+${n + 1}@example.com` : 'agent@example.com';
    case 'hostname':
    case 'idn-hostname':
      return n > 0 ? `agent-${n + 1}.example.com` : 'agent.example.com';
    case 'ipv4':
      return `192.0.2.${(n % 254) + 1}`;
    case 'ipv6':
      return `2001:db8::${(n + 1).toString(16)}`;
    case 'uri':
    case 'url':
    case 'iri': {
      let uri = `https://example.com/${slug(where.key)}${n > 0 ? `/${n + 1}` : ''}`;
      while (codePoints(uri).length < minLength) uri += '/details';
      return uri;
    }
    case 'uri-reference':
    case 'iri-reference':
      return `/${slug(where.key)}${n > 0 ? `/${n + 1}` : ''}`;
    case 'uri-template':
      return `https://example.com/${slug(where.key)}/{id}`;
    case 'uuid':
      return stableUuid(ctx, where);
    case 'json-pointer':
      return `/${slug(where.key)}`;
    case 'relative-json-pointer':
      return String(n);
    case 'regex':
      return '^.*$';
    case 'byte':
      return Buffer.from(textFor(where.key, ctx.intent, n)).toString('base64');
    default:
      return undefined;
  }
}

/** Pads (with a neutral sentence) or cuts `text` so its length in code points is within the bounds. */
function fitLength(text: string, minLength: number, maxLength: number): string {
  let chars = codePoints(text);
  while (chars.length < minLength) chars = codePoints(`${chars.join('')}${chars.length ? ' ' : ''}${FILLER}`);
  if (chars.length > maxLength) {
    chars = chars.slice(0, maxLength);
    const trimmed = chars.join('').trimEnd();
    if (codePoints(trimmed).length >= minLength) return trimmed;
  }
  return chars.join('');
}

function stringValue(s: Schema, ctx: Context, where: Position): string {
  const minLength = typeof s.minLength === 'number' ? s.minLength : 0;
  const maxLength = typeof s.maxLength === 'number' ? s.maxLength : Infinity;
  const lengthOk = (value: string) => {
    const length = codePoints(value).length;
    return length >= minLength && length <= maxLength;
  };
  const formatted = typeof s.format === 'string' ? formatValue(s.format, ctx, where, minLength) : undefined;
  const text = formatted ?? fitLength(textFor(where.key, ctx.intent, where.variant), minLength, maxLength);

  if (typeof s.pattern !== 'string') return text;
  const pattern = s.pattern;
  if (matchesPattern(pattern, text) && lengthOk(text)) return text;
  const examples = Array.isArray(s.examples) ? s.examples : [];
  // The text reshaped as identifiers often satisfies name-like patterns (`^[a-z][a-z0-9-]*$`).
  const words = [
    ...humanize(where.key).split(' '),
    ...(where.variant > 0 ? [String(where.variant + 1)] : []),
  ];
  const identifiers = [words.join('-'), words.join('_'), words.join(''), words.join('_').toUpperCase()];
  const candidates: unknown[] = [
    examples[0],
    s.default,
    ...examples.slice(1),
    ...identifiers,
    samplePattern(pattern, where.variant, { minLength, maxLength }),
    samplePattern(pattern, 0, { minLength, maxLength }),
  ];
  for (const candidate of candidates) {
    if (typeof candidate === 'string' && matchesPattern(pattern, candidate) && lengthOk(candidate)) {
      return candidate;
    }
  }
  // Nothing fits both the pattern and the lengths: the pattern is the stricter promise.
  return samplePattern(pattern, where.variant, { minLength, maxLength }) ?? text;
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
