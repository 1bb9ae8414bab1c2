import { createHash } from 'node:crypto';
import { canonicalJson } from '@svc/contracts';

/** Hex SHA-256 of the canonical JSON (`canonicalJson` of `@svc/contracts`) of a value: its content identity. */
export function canonicalHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}
