import type { WorkflowApi } from '@svc/contracts';

type Schemas = WorkflowApi.components['schemas'];
export type FailureReason = Schemas['InvocationsFailureReason'];
export type InvocationFailure = NonNullable<Schemas['InvocationsFailure']>;
export type InvocationCancellation = NonNullable<Schemas['InvocationsCancellation']>;

/** States a failure can end (a run was launched and has not ended in a terminal state). */
export const FAILABLE_STATES = ['launching', 'running', 'waiting_for_artifact'] as const;

export function isFailable(state: string): boolean {
  return (FAILABLE_STATES as readonly string[]).includes(state);
}

/** The typed failure of an invocation, with the message a human reads. */
export function failureOf(
  reason: FailureReason,
  at: Date,
  detail: { stageKey?: string | null; stageReason?: string; deadlineSeconds?: number; allowed?: number },
): InvocationFailure {
  const stageKey = detail.stageKey ?? null;
  let message: string;
  switch (reason) {
    case 'stage_failed':
      message = `Stage '${stageKey}' failed beyond the template's retries: ${detail.stageReason ?? 'no reason given'}`;
      break;
    case 'run_deadline_exceeded':
      message = `The run was not completed within the template's deadline of ${detail.deadlineSeconds} s from launch${stageKey ? ` (stage '${stageKey}' was in progress)` : ''}.`;
      break;
    case 'artifact_rejections_exceeded':
      message = `More published payloads were rejected than the template allows (${detail.allowed}).`;
      break;
  }
  return { reason, message, stage_key: stageKey, failed_at: at.toISOString() };
}

/**
 * Whether one more failure report of a stage (its `failures` after this report) is still within the
 * template's retries: the stage is then assigned again instead of failing the invocation.
 */
export function withinStageRetries(failuresAfterReport: number, retries: number | undefined): boolean {
  return failuresAfterReport <= (retries ?? 0);
}

/** Whether `rejections` rejected payloads exceed what the template allows (no limit when unset). */
export function rejectionsExceeded(rejections: number, allowed: number | undefined): boolean {
  return allowed !== undefined && rejections > allowed;
}
