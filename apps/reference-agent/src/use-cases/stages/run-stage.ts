import { ApiError } from '@svc/contracts';
import { scrubSecrets } from '@svc/service-kit';
import type { Logger } from '@svc/service-kit';
import { classifyError, describeError, within, withRetry } from '../../domain/call-policy';
import type { RetryPolicy } from '../../domain/call-policy';
import type { ArtifactPublishRequest, PlatformApi } from '../../data/platform-api';
import { isStageBlockedError } from '../../domain/stage-handler';
import type { AgentStageAssignment, StageHandler, StageResult } from '../../domain/stage-handler';

/** How working a stage ended. */
export type StageOutcome =
  | { kind: 'completed' }
  /**
   * The handler (or a step) failed: a blocker was reported (unless the platform refused even that) and the
   * agent keeps the stage, trying it again after `retryAfterMs` when set.
   */
  | { kind: 'held'; blockerReported: boolean; retryAfterMs?: number }
  /** The stage is not ours any more (reassigned, not owned, gone). */
  | { kind: 'dropped'; code: string }
  /** The agent is stopping and gave up on the stage; the engine will stall and reassign it. */
  | { kind: 'abandoned' };

export interface StageRunnerDeps {
  api: PlatformApi;
  handler: StageHandler;
  logger: Logger;
  policy: RetryPolicy;
  /** Values that must never reach a log line, a blocker reason or evidence (the agent token). */
  secrets: string[];
}

/** Used when an assignment carries no usable heartbeat interval (the engine's stall deadline is 60 s). */
const DEFAULT_HEARTBEAT_SECONDS = 15;
const MAX_BLOCKER = 2000;
const MAX_PROGRESS = 500;
const MAX_SUMMARY = 2000;
const MAX_LIMITATIONS = 50;
const MAX_LIMITATION = 1000;
const MAX_PROVENANCE_KEYS = 50;

function clip(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : text;
}

function scrub(text: string, secrets: string[]): string {
  let out = text;
  for (const secret of secrets) if (secret) out = out.split(secret).join('[REDACTED]');
  return scrubSecrets(out);
}

/** Why a stage is no longer ours, carried through the handler's abort signal. */
class StageDropped extends Error {
  constructor(readonly code: string) {
    super(`the stage is no longer owned by this agent (${code})`);
    this.name = 'StageDropped';
  }
}

/** A step's refusal that becomes the stage's blocker. */
class StageStepFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StageStepFailed';
  }
}

/** Whatever the handler threw (a StageBlockedError included), kept apart from the platform's own errors. */
class HandlerFailed extends Error {
  constructor(readonly inner: unknown) {
    super('the stage handler failed');
    this.name = 'HandlerFailed';
  }
}

function dropCode(error: unknown): string {
  if (error instanceof StageDropped) return error.code;
  if (error instanceof ApiError) return error.code;
  return 'dropped';
}

/** The blocker reason for a failure: its message only (never a stack), scrubbed and bounded. */
function blockerReason(failure: unknown, secrets: string[]): string {
  const error = failure instanceof HandlerFailed ? failure.inner : failure;
  let text: string;
  if (isStageBlockedError(error) || error instanceof StageStepFailed) text = error.message;
  else if (error instanceof ApiError) {
    text = `the platform refused a stage step (${error.status} ${error.code}): ${error.message}`;
  } else if (typeof error === 'object' && error !== null && typeof (error as Error).message === 'string') {
    // Only the message: a stack names files and lines, and may quote what it should not.
    const { message, name } = error as Error;
    text = `the stage handler failed: ${message || name || 'an error without a message'}`;
  } else text = `the stage handler failed: ${String(error)}`;
  const reason = clip(scrub(text.replace(/\s+/g, ' ').trim(), secrets), MAX_BLOCKER);
  return /\S/.test(reason) ? reason : 'the stage handler failed without a message';
}

/** The detail of a 422 `artifact_schema_mismatch` with its first listed errors. */
function schemaErrors(error: ApiError): string {
  const listed = (error.problem as { errors?: unknown } | undefined)?.errors;
  const items = Array.isArray(listed)
    ? listed
        .slice(0, 3)
        .map((item: { location?: unknown; message?: unknown }) =>
          [item?.location, item?.message].filter((part) => typeof part === 'string').join(' '),
        )
        .filter(Boolean)
    : [];
  return items.length > 0 ? `${error.message} (${items.join('; ')})` : error.message;
}

function normalizeResult(value: unknown): StageResult {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new StageStepFailed('the stage handler returned something other than a result object');
  }
  return value as StageResult;
}

function publishBody(
  stage: AgentStageAssignment,
  result: StageResult,
  summary: string,
): ArtifactPublishRequest {
  const limitations = (Array.isArray(result.limitations) ? result.limitations : [])
    .filter((item): item is string => typeof item === 'string' && item.trim().length > 0)
    .slice(0, MAX_LIMITATIONS)
    .map((item) => clip(item, MAX_LIMITATION));
  const provenance = Object.fromEntries(
    Object.entries({
      agent: 'reference-agent',
      stage_key: stage.key,
      stage_id: stage.stage_id,
      ...(result.provenance ?? {}),
    }).slice(0, MAX_PROVENANCE_KEYS),
  );
  return { payload: result.payload, summary, limitations, provenance };
}

/** How a stage reached the runner. */
export interface StageRunOptions {
  /** The stage was claimed by the call that answered it (claim-next): the runner does not claim it again. */
  claimed?: boolean;
}

/**
 * Works one stage to its end: claim (or clear its blocker; neither for a stage answered claimed) → stage
 * heartbeats every
 * `heartbeat_interval_seconds` → handler → the artifact with the `stage.result` evidence (a final stage: the
 * publication completes it) or the completion with that evidence (any other stage, or a publication replayed).
 * Never throws; the outcome says what happened. `signal` aborts when the agent gives up on the stage.
 */
export async function runStage(
  stage: AgentStageAssignment,
  signal: AbortSignal,
  deps: StageRunnerDeps,
  options: StageRunOptions = {},
): Promise<StageOutcome> {
  const { api, secrets } = deps;
  const log = deps.logger.child({
    stage_id: stage.stage_id,
    invocation_id: stage.invocation_id,
    run_id: stage.run_id,
    stage_key: stage.key,
  });
  const began = Date.now();
  // Aborted when the agent gives up (stop) or when the platform says the stage is not ours any more.
  const work = new AbortController();
  const forward = () => work.abort(signal.reason);
  if (signal.aborted) forward();
  else signal.addEventListener('abort', forward, { once: true });
  const drop = (code: string) => {
    if (!work.signal.aborted) work.abort(new StageDropped(code));
  };
  const step = <T>(name: string, call: (s: AbortSignal) => Promise<T>) =>
    withRetry(name, call, { signal: work.signal, policy: deps.policy, logger: log, secrets });

  let heartbeatTimer: NodeJS.Timeout | undefined;
  let beating: Promise<void> | undefined;
  /** One stage heartbeat; failures are logged, never thrown, and a "not yours" answer drops the stage. */
  const beat = (progress: string | undefined): Promise<void> => {
    const note = progress === undefined ? undefined : clip(scrub(progress, secrets), MAX_PROGRESS);
    const sending = within(work.signal, deps.policy.requestTimeoutMs, (s) =>
      api.heartbeat(stage.stage_id, note, s),
    )
      .then(
        () => undefined,
        (error: unknown) => {
          if (work.signal.aborted) return;
          if (error instanceof ApiError && classifyError(error) === 'drop') {
            drop(error.code);
            return;
          }
          log.warn({ error: describeError(error, secrets) }, 'stage heartbeat failed');
        },
      )
      .finally(() => {
        if (beating === sending) beating = undefined;
      });
    beating = sending;
    return sending;
  };

  let stepStarted = Date.now();
  const elapsed = () => {
    const now = Date.now();
    const ms = now - stepStarted;
    stepStarted = now;
    return ms;
  };

  try {
    if (options.claimed) {
      // Claimed with its assignment, in the call that answered it: no round trip of its own.
      log.info(
        {
          duration_ms: 0,
          position: stage.position,
          stage_count: stage.stage_count,
          claimed_by: 'claim_next',
        },
        'stage claimed',
      );
    } else {
      if (stage.state === 'blocked') {
        await step('clear_blocker', (s) => api.clearBlocker(stage.stage_id, s));
        log.info({ duration_ms: elapsed() }, 'stage blocker cleared; trying the stage again');
      }
      await step('claim', (s) => api.claim(stage.stage_id, s));
      log.info(
        { duration_ms: elapsed(), position: stage.position, stage_count: stage.stage_count },
        'stage claimed',
      );
    }

    const interval = stage.heartbeat_interval_seconds;
    const intervalMs =
      (Number.isFinite(interval) && interval > 0 ? interval : DEFAULT_HEARTBEAT_SECONDS) * 1000;
    heartbeatTimer = setInterval(() => {
      if (beating) return;
      const seconds = Math.round((Date.now() - began) / 1000);
      void beat(`Working on "${stage.title}" for ${seconds} s`);
    }, intervalMs);

    const aborted = new Promise<never>((_, reject) => {
      const fail = () => reject(work.signal.reason);
      if (work.signal.aborted) fail();
      else work.signal.addEventListener('abort', fail, { once: true });
    });
    aborted.catch(() => undefined);
    const handled = Promise.resolve().then(() =>
      deps.handler({
        stage,
        signal: work.signal,
        progress: (note: string) => beat(String(note)),
      }),
    );
    handled.catch(() => undefined);
    let returned: unknown;
    try {
      // A handler that ignores its signal must not hold the stage (or the agent's shutdown) hostage.
      returned = await Promise.race([handled, aborted]);
    } catch (error) {
      throw work.signal.aborted ? error : new HandlerFailed(error);
    }
    const result = normalizeResult(returned);
    log.info({ duration_ms: elapsed() }, 'stage handler finished');

    const summary = clip(
      scrub(
        typeof result.summary === 'string' && result.summary.trim()
          ? result.summary
          : `Completed stage "${stage.title}" (${stage.key}).`,
        secrets,
      ),
      MAX_SUMMARY,
    );
    const handlerMs = Date.now() - began;
    // Sent with the completion (or with the publication that completes a final stage): one round trip.
    const evidence = [
      {
        kind: 'stage.result',
        content: {
          stage_key: stage.key,
          position: stage.position,
          stage_count: stage.stage_count,
          summary,
          elapsed_ms: handlerMs,
          ...(result.evidence !== undefined ? { details: result.evidence } : {}),
        },
      },
    ];

    if (stage.is_final && result.payload === undefined) {
      // Nothing to publish: the run ends without an artifact and the invocation shows waiting_for_artifact.
      log.warn(
        { duration_ms: elapsed() },
        'final stage produced no artifact payload; completing without one',
      );
    } else if (stage.is_final) {
      try {
        const published = await step('publish_artifact', (s) =>
          api.publishArtifact(stage, { ...publishBody(stage, result, summary), evidence }, s),
        );
        log.info(
          {
            duration_ms: elapsed(),
            artifact_id: published.envelope.artifact_id,
            replayed: published.replayed,
          },
          'artifact published',
        );
        if (!published.replayed) {
          // A new publication by the final stage's owner completed the stage and stored its evidence.
          log.info(
            { duration_ms: 0, total_ms: Date.now() - began, completed_by: 'publication' },
            'stage completed',
          );
          return { kind: 'completed' };
        }
      } catch (error) {
        if (error instanceof ApiError && error.code === 'artifact_already_published') {
          log.warn(
            { duration_ms: elapsed() },
            'an artifact was already published for the invocation; completing',
          );
        } else if (error instanceof ApiError && error.code === 'artifact_schema_mismatch') {
          throw new StageStepFailed(`the artifact was rejected by its schema: ${schemaErrors(error)}`);
        } else {
          throw error;
        }
      }
    }

    await step('complete', (s) => api.complete(stage.stage_id, { summary, evidence }, s));
    log.info({ duration_ms: elapsed(), total_ms: Date.now() - began }, 'stage completed');
    return { kind: 'completed' };
  } catch (error) {
    return ended(error) ?? (await reportBlocker(error));
  } finally {
    if (heartbeatTimer) clearInterval(heartbeatTimer);
    signal.removeEventListener('abort', forward);
  }

  /** The outcome when a failure means the stage is over for this agent: not ours any more, or stopping. */
  function ended(failure: unknown): StageOutcome | undefined {
    const cause = work.signal.aborted ? work.signal.reason : failure;
    if (cause instanceof StageDropped || (cause instanceof ApiError && classifyError(cause) === 'drop')) {
      log.info(
        { code: dropCode(cause), total_ms: Date.now() - began },
        'stage dropped: it is no longer ours',
      );
      return { kind: 'dropped', code: dropCode(cause) };
    }
    if (signal.aborted) {
      log.warn({ total_ms: Date.now() - began }, 'stage abandoned: the agent is stopping');
      return { kind: 'abandoned' };
    }
    return undefined;
  }

  async function reportBlocker(error: unknown): Promise<StageOutcome> {
    const reason = blockerReason(error, secrets);
    const thrown = error instanceof HandlerFailed ? error.inner : error;
    const retryAfterMs =
      isStageBlockedError(thrown) && typeof thrown.retryAfterSeconds === 'number'
        ? Math.max(0, thrown.retryAfterSeconds) * 1000
        : undefined;
    const held = (blockerReported: boolean): StageOutcome =>
      retryAfterMs === undefined
        ? { kind: 'held', blockerReported }
        : { kind: 'held', blockerReported, retryAfterMs };
    stepStarted = Date.now();
    try {
      await step('blocker', (s) => api.reportBlocker(stage.stage_id, reason, s));
      log.info(
        { duration_ms: elapsed(), total_ms: Date.now() - began, reason, retry_after_ms: retryAfterMs },
        'stage blocked: blocker reported',
      );
      return held(true);
    } catch (blockerError) {
      const outcome = ended(blockerError);
      if (outcome) return outcome;
      log.error(
        { reason, error: describeError(blockerError, secrets) },
        'the blocker could not be reported; keeping the stage',
      );
      return held(false);
    }
  }
}
