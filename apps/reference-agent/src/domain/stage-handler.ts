import type { WorkflowApi } from '@svc/contracts';

/** One open stage owned by the agent, exactly as `GET /api/v1/agents/me/workflow-stages` lists it. */
export type AgentStageAssignment = WorkflowApi.components['schemas']['AgentStageAssignment'];

export interface StageContext {
  stage: AgentStageAssignment;
  /**
   * Aborted when the stage is no longer the agent's (reassigned, not owned) or when the agent stops and the
   * stage did not finish within the shutdown bound. A handler should stop its work when it fires.
   */
  signal: AbortSignal;
  /**
   * Sends a stage heartbeat carrying a short progress note (at most 500 characters; longer notes are cut).
   * Never throws: a failed note is logged, and a stage taken away aborts `signal`.
   */
  progress(note: string): Promise<void>;
}

export interface StageResult {
  /** The artifact payload; required from the final stage, ignored on the others. */
  payload?: unknown;
  /** One paragraph about what was done (stage completion, evidence and artifact summary). */
  summary?: string;
  /** Known limitations of the result, published with the artifact. */
  limitations?: string[];
  /** Producer provenance (tools, sources), published with the artifact under `producer`. */
  provenance?: Record<string, unknown>;
  /** Extra JSON detail stored with the stage's `stage.result` evidence. */
  evidence?: unknown;
}

/** Does the work of one stage. */
export type StageHandler = (ctx: StageContext) => Promise<StageResult>;

/**
 * Thrown by a handler when the stage cannot proceed without outside help (a missing credential, a decision
 * only a person can take). The agent reports the message as the stage's blocker and keeps the stage; with
 * `retryAfterSeconds` it tries the stage again after that delay.
 */
export class StageBlockedError extends Error {
  readonly retryAfterSeconds: number | undefined;

  constructor(reason: string, options: { retryAfterSeconds?: number; cause?: unknown } = {}) {
    super(reason, { cause: options.cause });
    this.name = 'StageBlockedError';
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/**
 * True for a StageBlockedError, also one created by another copy of this package (a handler module that
 * bundles its own), recognised by its name.
 */
export function isStageBlockedError(error: unknown): error is StageBlockedError {
  return (
    error instanceof StageBlockedError ||
    (typeof error === 'object' &&
      error !== null &&
      (error as { name?: unknown }).name === 'StageBlockedError' &&
      typeof (error as { message?: unknown }).message === 'string')
  );
}
