import type { FuzzExemption } from '@svc/testing';

/**
 * Checks of the Workflow API's fuzz suite that do not hold for an operation, each with its reason. An entry
 * exempts only answers matching its operation, check and (when given) phase, status and code.
 */
const STAGE_REASSIGNED =
  "The stage guard decides the caller's ownership before the body is read (decision 4): the seeded agent runs no process, so the stage it was given stalls and is reassigned, and from then on every request of that agent, valid or not, is refused with the documented 409 stage_reassigned.";

export const WORKFLOW_FUZZ_EXEMPTIONS: readonly FuzzExemption[] = [
  'heartbeatWorkflowStage',
  'reportWorkflowStageBlocker',
  'submitWorkflowStageEvidence',
  'failWorkflowStage',
  'completeWorkflowStage',
].map((operationId) => ({
  operationId,
  check: 'schema_invalid_refused' as const,
  phase: 'negative' as const,
  status: 409,
  code: 'stage_reassigned',
  reason: STAGE_REASSIGNED,
}));
