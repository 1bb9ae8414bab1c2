import { createHash } from 'node:crypto';
import { canonicalJson } from './wire/canonical-json';
import type { components } from './generated/workflow';

type InvocationRequest = components['schemas']['InvocationsCreateRequest'];

/**
 * Unicode NFKC, lower case, runs of whitespace collapsed to one space, trimmed: how intents (and classifier
 * phrases) are compared.
 */
export function normalizeIntent(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ').trim();
}

/**
 * The invocation request as the server fingerprints and stores it: intent normalized, capabilities sorted and
 * de-duplicated (an empty list is absent), absent optional fields omitted.
 */
export function normalizeInvocationRequest(body: InvocationRequest): InvocationRequest {
  const out: InvocationRequest = { intent: normalizeIntent(body.intent) };
  if (body.workflow_contract_id !== undefined) out.workflow_contract_id = body.workflow_contract_id;
  if (body.workflow_template_key !== undefined) out.workflow_template_key = body.workflow_template_key;
  if (body.workflow_template_version !== undefined)
    out.workflow_template_version = body.workflow_template_version;
  const capabilities = [...new Set(body.required_capabilities ?? [])].sort();
  if (capabilities.length > 0) out.required_capabilities = capabilities;
  if (body.metadata !== undefined) out.metadata = body.metadata;
  return out;
}

/**
 * The idempotency fingerprint of an invoke request: hex SHA-256 of the canonical JSON of the normalized request.
 * Two requests with the same fingerprint are the same request for an `Idempotency-Key`; a client can tell in
 * advance whether a retry will replay (same fingerprint) or be refused with `idempotency_conflict`.
 */
export function invocationFingerprint(body: InvocationRequest): string {
  return createHash('sha256')
    .update(canonicalJson(normalizeInvocationRequest(body)))
    .digest('hex');
}
