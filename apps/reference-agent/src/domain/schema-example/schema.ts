/** Shared shapes of the schema-driven example generator (see `exampleFromSchema`). */

export type Schema = Record<string, unknown>;

export interface Context {
  root: unknown;
  intent: string;
  now: Date;
  maxDepth: number;
}

export interface Position {
  /** Name of the property (or of the array holding the item) the value is generated for. */
  key: string | undefined;
  /** JSON Pointer of the value, used to derive stable identifiers. */
  path: string;
  depth: number;
  /** Distinguishes sibling array items so `uniqueItems` holds. */
  variant: number;
}

/** Generates the value of a member or item; objects and arrays call back into it for what they hold. */
export type GenerateValue = (schema: unknown, ctx: Context, where: Position) => unknown;

export const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function typesOf(schema: Schema): string[] | undefined {
  if (typeof schema.type === 'string') return [schema.type];
  if (Array.isArray(schema.type)) return schema.type.filter((t): t is string => typeof t === 'string');
  return undefined;
}
