import type { WorkflowApi } from '@svc/contracts';
import { normalizeIntent } from '@svc/contracts';
import { AppError } from '@svc/service-kit';

/** Rules of an invoke request that JSON Schema cannot state: its headers and storable text. */

/** What an invocation stores as its route; the wire shape of `route`. */
export type InvocationRoute = WorkflowApi.components['schemas']['InvocationsRoute'];

/** 1–255 printable ASCII characters (space to tilde). */
const HEADER_VALUE = /^[\x20-\x7E]{1,255}$/;

/** Checks the `Idempotency-Key` header: required, 1–255 printable ASCII characters. */
export function parseIdempotencyKey(value: string | undefined): string {
  if (value === undefined || value === '') {
    throw new AppError({
      status: 400,
      code: 'idempotency_key_required',
      detail:
        'Send an Idempotency-Key header: a stable key per logical request (1–255 printable ASCII characters).',
    });
  }
  if (!HEADER_VALUE.test(value)) {
    throw new AppError({
      status: 400,
      code: 'idempotency_key_invalid',
      detail: 'The Idempotency-Key header must be 1–255 printable ASCII characters.',
    });
  }
  return value;
}

/** Checks the optional `X-Correlation-ID` header (1–255 printable ASCII characters). */
export function parseCorrelationId(value: string | undefined): string | null {
  if (value === undefined) return null;
  if (!HEADER_VALUE.test(value)) {
    throw new AppError({
      status: 400,
      code: 'correlation_id_invalid',
      detail: 'The X-Correlation-ID header must be 1–255 printable ASCII characters.',
    });
  }
  return value;
}

/**
 * An intent must say something: one made only of whitespace (after the normalization matching uses) is refused
 * with 400 `intent_blank`, on resolve, preflight and invoke alike.
 */
export function assertIntentNotBlank(intent: string): void {
  if (normalizeIntent(intent) !== '') return;
  throw new AppError({
    status: 400,
    code: 'intent_blank',
    detail: 'The intent is blank: send the request in words (at least one character that is not whitespace).',
    extra: {
      errors: [{ location: 'body/intent', message: 'must contain a character that is not whitespace' }],
    },
  });
}
