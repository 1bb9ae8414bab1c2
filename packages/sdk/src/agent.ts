/**
 * Writing an agent with the SDK: wait for a stage, claim it, keep it alive with heartbeats, report evidence or
 * a blocker, publish the artifact (final stage) and complete it. Authenticates with the agent's own token
 * (`AGENT_TOKEN`), never with a workspace API key.
 */
import createClient from 'openapi-fetch';
import type { Client } from 'openapi-fetch';
import { createTransport } from './core.js';
import type { ClientOptions } from './core.js';
import { ArgumentError, WaitTimeoutError } from './errors.js';
import type { paths as HubPaths } from './generated/hub.js';
import type { paths } from './generated/workflow.js';
import { deadlineSignal, idOf, signalOf, unwrap } from './request.js';
import type { RequestOptions } from './request.js';
import type {
  ArtifactEnvelope,
  ArtifactPublishParams,
  DataOf,
  StageAssignment,
  StageCompleteParams,
  StageEvidence,
} from './types.js';

export interface AgentClientOptions extends Omit<ClientOptions, 'apiKey'> {
  /** The agent's token (`AGENT_TOKEN`), or a function returning the current one. */
  token: string | (() => string | Promise<string>);
  /** The hub's base URL, for {@link WorkflowAgent.presence} (the agent's own liveness at the hub). */
  hubUrl?: string;
}

export type Stage = DataOf<'claimWorkflowStage'>;

export interface Heartbeat {
  /** Stops the heartbeats. */
  stop(): void;
  /** The last heartbeat failure, if the latest one failed. */
  readonly lastError: unknown;
}

const LONG_POLL_SECONDS = 30;

type HubHeartbeatBody = NonNullable<
  NonNullable<HubPaths['/api/v1/agents/me/heartbeat']['post']['requestBody']>['content']['application/json']
>;
export type HubHeartbeatStatus = NonNullable<HubHeartbeatBody['status']>;

export class WorkflowAgent {
  readonly raw: Client<paths>;
  /** The hub's typed path client with the agent's token (when `hubUrl` was given). */
  readonly hub: Client<HubPaths> | undefined;

  constructor(options: AgentClientOptions) {
    const transport = createTransport(options);
    if (!options.token) {
      throw new ArgumentError(
        'argument_invalid',
        'token',
        "token is required: the agent's AGENT_TOKEN, handed to it when it is started at the hub",
      );
    }
    this.raw = createClient<paths>({ baseUrl: transport.baseUrl, fetch: transport.fetch });
    if (options.hubUrl) {
      const hubTransport = createTransport({ ...options, baseUrl: options.hubUrl });
      this.hub = createClient<HubPaths>({ baseUrl: hubTransport.baseUrl, fetch: hubTransport.fetch });
    }
  }

  /**
   * Tells the hub this agent is alive (`online`, or another status of the contract). Only running agents
   * with a fresh presence are given stages: send it at start and then regularly (see {@link stayPresent}).
   */
  async presence(status: HubHeartbeatStatus = 'online', options?: RequestOptions): Promise<void> {
    if (!this.hub) throw new ArgumentError('argument_invalid', 'hubUrl', 'hubUrl is required for presence');
    unwrap(await this.hub.POST('/api/v1/agents/me/heartbeat', { body: { status }, ...signalOf(options) }));
  }

  /** Sends {@link presence} now and every `intervalMs` (default 15 s) until stopped. */
  async stayPresent(intervalMs = 15_000): Promise<Heartbeat> {
    await this.presence();
    const state = { lastError: undefined as unknown };
    const timer = setInterval(() => {
      this.presence().then(
        () => (state.lastError = undefined),
        (error: unknown) => (state.lastError = error),
      );
    }, intervalMs);
    return {
      stop: () => clearInterval(timer),
      get lastError() {
        return state.lastError;
      },
    };
  }

  /** The open stages this agent owns (assigned, claimed or blocked); `wait` long-polls up to 30 s. */
  async stages(options: RequestOptions & { wait?: number } = {}): Promise<StageAssignment[]> {
    return unwrap(
      await this.raw.GET('/api/v1/agents/me/workflow-stages', {
        params: { query: options.wait !== undefined ? { wait: options.wait } : {} },
        ...signalOf(options),
      }),
    );
  }

  /**
   * Waits (long-polling) until a stage is open for this agent and returns the first one that `filter`
   * accepts (default: any). Throws {@link WaitTimeoutError} at `timeoutMs`.
   */
  async waitForStage(options: {
    timeoutMs: number;
    signal?: AbortSignal;
    filter?: (stage: StageAssignment) => boolean;
  }): Promise<StageAssignment> {
    if (!(options.timeoutMs > 0)) {
      throw new ArgumentError('argument_invalid', 'timeoutMs', 'timeoutMs is required and must be positive');
    }
    const deadline = Date.now() + options.timeoutMs;
    const bound = deadlineSignal(
      options.signal,
      options.timeoutMs,
      () => new WaitTimeoutError(options.timeoutMs, 'stage wait'),
    );
    try {
      for (;;) {
        const remaining = Math.floor((deadline - Date.now()) / 1000);
        const stages = await this.stages({
          wait: Math.max(0, Math.min(LONG_POLL_SECONDS, remaining)),
          signal: bound.signal,
        });
        const stage = stages.find(options.filter ?? (() => true));
        if (stage) return stage;
        if (Date.now() >= deadline) throw new WaitTimeoutError(options.timeoutMs, 'stage wait');
        if (remaining <= 0) await new Promise((resolve) => setTimeout(resolve, 250));
      }
    } catch (error) {
      if (bound.signal.aborted && !options.signal?.aborted)
        throw new WaitTimeoutError(options.timeoutMs, 'stage wait');
      throw error;
    } finally {
      bound.dispose();
    }
  }

  /**
   * Claims up to `max` (1–20, default 1) of this agent's assigned stages, oldest first, and returns them
   * already claimed: no {@link claim} after it. With `wait` (at most 30 s) and none assigned, it long-polls for
   * an assignment; an empty list when none came. One round trip from assignment to a claimed stage. Stages
   * already claimed or blocked are not returned (after a restart, list them with {@link stages}).
   */
  async claimNext(
    options: RequestOptions & { wait?: number; max?: number } = {},
  ): Promise<StageAssignment[]> {
    return unwrap(
      await this.raw.POST('/api/v1/agents/me/workflow-stages/claims', {
        params: {
          query: {
            ...(options.wait !== undefined ? { wait: options.wait } : {}),
            ...(options.max !== undefined ? { max: options.max } : {}),
          },
        },
        ...signalOf(options),
      }),
    );
  }

  /** Claims an assigned stage (repeating it is harmless; it counts as a heartbeat). */
  async claim(stageId: string, options?: RequestOptions): Promise<Stage> {
    return unwrap(
      await this.raw.POST('/api/v1/agents/me/workflow-stages/{stageId}/claim', {
        params: { path: { stageId: idOf(stageId, 'stageId', 'stg_…') } },
        ...signalOf(options),
      }),
    );
  }

  /** One heartbeat, optionally with a progress note (at most 500 characters). */
  async heartbeat(stageId: string, progress?: string, options?: RequestOptions): Promise<Stage> {
    return unwrap(
      await this.raw.POST('/api/v1/agents/me/workflow-stages/{stageId}/heartbeat', {
        params: { path: { stageId: idOf(stageId, 'stageId', 'stg_…') } },
        body: progress !== undefined ? { progress } : {},
        ...signalOf(options),
      }),
    );
  }

  /**
   * Sends heartbeats every `intervalMs` (default: the stage's `heartbeat_interval_seconds`) until stopped, so
   * a long stage is not marked stalled. Failures are kept in `lastError` and retried at the next beat.
   */
  keepAlive(
    stage: Pick<StageAssignment, 'stage_id'> & { heartbeat_interval_seconds?: number },
    intervalMs?: number,
  ): Heartbeat {
    const every = intervalMs ?? Math.max(1, stage.heartbeat_interval_seconds ?? 20) * 1000;
    const state = { lastError: undefined as unknown };
    const timer = setInterval(() => {
      this.heartbeat(stage.stage_id).then(
        () => (state.lastError = undefined),
        (error: unknown) => (state.lastError = error),
      );
    }, every);
    return {
      stop: () => clearInterval(timer),
      get lastError() {
        return state.lastError;
      },
    };
  }

  /** Attaches evidence (any JSON; secrets are redacted before it is stored). */
  async report(
    stageId: string,
    evidence: { kind: string; content: unknown },
    options?: RequestOptions,
  ): Promise<StageEvidence> {
    return unwrap(
      await this.raw.POST('/api/v1/agents/me/workflow-stages/{stageId}/evidence', {
        params: { path: { stageId: idOf(stageId, 'stageId', 'stg_…') } },
        body: evidence,
        ...signalOf(options),
      }),
    );
  }

  /** The stage cannot proceed: the invocation's attention becomes `blocked` with this reason. */
  async block(stageId: string, reason: string, options?: RequestOptions): Promise<Stage> {
    return unwrap(
      await this.raw.POST('/api/v1/agents/me/workflow-stages/{stageId}/blocker', {
        params: { path: { stageId: idOf(stageId, 'stageId', 'stg_…') } },
        body: { reason },
        ...signalOf(options),
      }),
    );
  }

  /** The blocker is gone; the stage is claimed again. */
  async unblock(stageId: string, options?: RequestOptions): Promise<Stage> {
    return unwrap(
      await this.raw.DELETE('/api/v1/agents/me/workflow-stages/{stageId}/blocker', {
        params: { path: { stageId: idOf(stageId, 'stageId', 'stg_…') } },
        ...signalOf(options),
      }),
    );
  }

  /** Gives up on the stage; it is retried by another owner or the invocation fails. */
  async fail(stageId: string, reason: string, options?: RequestOptions): Promise<Stage> {
    return unwrap(
      await this.raw.POST('/api/v1/agents/me/workflow-stages/{stageId}/fail', {
        params: { path: { stageId: idOf(stageId, 'stageId', 'stg_…') } },
        body: { reason },
        ...signalOf(options),
      }),
    );
  }

  /**
   * Completes the stage (twice is harmless); the engine moves the run on. Pass `{ summary, evidence }` to store
   * the stage's evidence with the completion in one round trip (a repeated completion stores none again).
   */
  async complete(
    stageId: string,
    completion?: string | StageCompleteParams,
    options?: RequestOptions,
  ): Promise<Stage> {
    const body = typeof completion === 'string' ? { summary: completion } : (completion ?? {});
    return unwrap(
      await this.raw.POST('/api/v1/agents/me/workflow-stages/{stageId}/complete', {
        params: { path: { stageId: idOf(stageId, 'stageId', 'stg_…') } },
        body,
        ...signalOf(options),
      }),
    );
  }

  /**
   * Publishes the invocation's artifact (the owner of its final stage). A new publication by the owner of the
   * final stage also completes that stage, with the `evidence` given, so no `complete` is needed after it;
   * `replayed` (the same payload published before) completed nothing. A payload that does not match the pinned
   * schema throws `ValidationError` `artifact_schema_mismatch` with `details`.
   */
  async publish(
    stage: Pick<StageAssignment, 'project_id' | 'invocation_id'>,
    artifact: ArtifactPublishParams,
    options?: RequestOptions,
  ): Promise<{ envelope: ArtifactEnvelope; replayed: boolean }> {
    const result = await this.raw.POST(
      '/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/artifact',
      {
        params: { path: { projectId: stage.project_id, invocationId: stage.invocation_id } },
        body: artifact,
        ...signalOf(options),
      },
    );
    return { envelope: unwrap(result), replayed: result.response.status === 200 };
  }
}
