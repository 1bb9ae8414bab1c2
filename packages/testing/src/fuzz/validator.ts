import Ajv2020 from 'ajv/dist/2020';
import type { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { OpenApiDocument } from '@svc/contracts';

/** Rewrites local `#/…` references to point into the document registered under `id`. */
function anchor(value: unknown, id: string): unknown {
  if (Array.isArray(value)) return value.map((v) => anchor(v, id));
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `${id}${v}` : anchor(v, id),
    ]),
  );
}

/**
 * ajv validators for schemas cut out of one document, as the services compile them (draft 2020-12, formats
 * checked). Validators are cached by the schema object, so compiling in a loop costs once.
 */
export function documentValidator(doc: OpenApiDocument): (schema: unknown) => ValidateFunction {
  const id = `urn:svc:fuzz:${doc.info.title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema({ $id: id, components: doc.components ?? {} });
  const cache = new Map<unknown, ValidateFunction>();
  return (schema) => {
    let validate = cache.get(schema);
    if (!validate) {
      validate = ajv.compile(anchor(schema ?? {}, id) as object);
      cache.set(schema, validate);
    }
    return validate;
  };
}

/**
 * ajv validators for parameters as the services check them: values arrive as strings (or arrays of strings
 * for repeated query keys) and are coerced to the schema's type. Each call validates a copy.
 */
export function parameterValidator(doc: OpenApiDocument): (schema: unknown) => (value: object) => boolean {
  const id = `urn:svc:fuzz-params:${doc.info.title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  const ajv = new Ajv2020({ strict: false, allErrors: true, coerceTypes: 'array', useDefaults: true });
  addFormats(ajv);
  ajv.addSchema({ $id: id, components: doc.components ?? {} });
  return (schema) => {
    const validate = ajv.compile(anchor(schema ?? {}, id) as object);
    return (value) => validate(structuredClone(value)) as boolean;
  };
}
