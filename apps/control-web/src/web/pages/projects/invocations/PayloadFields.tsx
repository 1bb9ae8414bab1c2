import type { ReactNode } from 'react';

/** The parts of a JSON Schema the rendering reads (titles, descriptions, properties and items). */
export interface FieldSchema {
  title?: string;
  description?: string;
  type?: string | string[];
  properties?: Record<string, FieldSchema>;
  items?: FieldSchema;
  [keyword: string]: unknown;
}

/** `release_notes` → "Release notes". */
export function humanize(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .trim()
    .toLowerCase();
  return words ? words[0]!.toUpperCase() + words.slice(1) : key;
}

const asSchema = (value: unknown): FieldSchema | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as FieldSchema) : undefined;

/**
 * A JSON value laid out as fields for a person, guided by its schema: an object is a list of labelled fields
 * (the schema's `title`, else its property name in words; its `description` as a hint), in the schema's
 * order and then any others; an array is a list; text keeps its line breaks and wraps; true/false read
 * "yes"/"no"; an absent value reads "—".
 */
export function PayloadFields({ value, schema }: { value: unknown; schema?: FieldSchema }): ReactNode {
  if (value === null || value === undefined) return <span className="muted">—</span>;
  if (Array.isArray(value)) {
    if (value.length === 0) return <span className="muted">none</span>;
    const items = asSchema(schema?.items);
    return (
      <ol className="payload-list">
        {value.map((item, index) => (
          <li key={index}>
            <PayloadFields value={item} schema={items} />
          </li>
        ))}
      </ol>
    );
  }
  if (typeof value === 'object') {
    const object = value as Record<string, unknown>;
    const properties = asSchema(schema?.properties) as Record<string, FieldSchema> | undefined;
    const known = Object.keys(properties ?? {}).filter((key) => key in object);
    const others = Object.keys(object).filter((key) => !known.includes(key));
    const keys = [...known, ...others];
    if (keys.length === 0) return <span className="muted">empty</span>;
    return (
      <dl className="payload-fields">
        {keys.map((key) => {
          const own = asSchema(properties?.[key]);
          return (
            <div key={key} className="payload-field" data-field={key}>
              <dt>
                {own?.title ?? humanize(key)}
                {own?.description && <span className="hint"> {own.description}</span>}
              </dt>
              <dd>
                <PayloadFields value={object[key]} schema={own} />
              </dd>
            </div>
          );
        })}
      </dl>
    );
  }
  if (typeof value === 'boolean') return <>{value ? 'yes' : 'no'}</>;
  if (typeof value === 'number') return <>{value.toLocaleString()}</>;
  return <span className="payload-text">{String(value)}</span>;
}
