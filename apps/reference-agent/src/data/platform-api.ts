import { createHubClient, createWorkflowClient, unwrap } from '@svc/contracts';
import type { HubApi, WorkflowApi } from '@svc/contracts';
import type { AgentStageAssignment } from '../domain/stage-handler';

export type HubAgent = HubApi.components['schemas']['Agent'];
export type RuntimeCredentialGrant = HubApi.components['schemas']['AgentRuntimeCredential'];
export type ProviderModel = HubApi.components['schemas']['ProviderModel'];
export type ArtifactEnvelope = WorkflowApi.components['schemas']['ArtifactEnvelope'];
export type ArtifactPublishRequest = WorkflowApi.components['schemas']['ArtifactPublishRequest'];
export type StageEvidence = WorkflowApi.components['schemas']['StageEvidence'];
export type StageCompleteRequest = WorkflowApi.components['schemas']['StageCompleteRequest'];

export interface PlatformApiOptions {
  token: string;
  hubUrl: string;
  workflowUrl: string;
  fetch?: (input: Request) => Promise<Response>;
}

/**
 * The calls the agent makes, each with the agent's token and an AbortSignal. Every non-success answer
 * throws `ApiError` (status + problem code); a network failure throws what fetch throws.
 */
export interface PlatformApi {
  getSelf(signal: AbortSignal): Promise<HubAgent>;
  hubHeartbeat(status: 'idle' | 'busy', signal: AbortSignal): Promise<HubAgent>;
  /** A fresh runtime credential for the agent's registered model (the token is never logged). */
  refreshRuntimeCredential(signal: AbortSignal): Promise<RuntimeCredentialGrant>;
  /** The hub's active provider/model catalog. */
  listProviderModels(signal: AbortSignal): Promise<ProviderModel[]>;
  listStages(waitSeconds: number, signal: AbortSignal): Promise<AgentStageAssignment[]>;
  /**
   * Claims up to `max` of the agent's assigned stages, oldest first, waiting up to `waitSeconds` for one:
   * the stages answered are claimed already.
   */
  claimNext(waitSeconds: number, max: number, signal: AbortSignal): Promise<AgentStageAssignment[]>;
  claim(stageId: string, signal: AbortSignal): Promise<AgentStageAssignment>;
  heartbeat(
    stageId: string,
    progress: string | undefined,
    signal: AbortSignal,
  ): Promise<AgentStageAssignment>;
  reportBlocker(stageId: string, reason: string, signal: AbortSignal): Promise<AgentStageAssignment>;
  clearBlocker(stageId: string, signal: AbortSignal): Promise<AgentStageAssignment>;
  submitEvidence(
    stageId: string,
    kind: string,
    content: unknown,
    signal: AbortSignal,
  ): Promise<StageEvidence>;
  /** Completes the stage, its evidence stored with the completion. */
  complete(
    stageId: string,
    completion: StageCompleteRequest,
    signal: AbortSignal,
  ): Promise<AgentStageAssignment>;
  /** `replayed`: the same payload was published before (200), so this call completed nothing. */
  publishArtifact(
    stage: Pick<AgentStageAssignment, 'project_id' | 'invocation_id'>,
    body: ArtifactPublishRequest,
    signal: AbortSignal,
  ): Promise<{ envelope: ArtifactEnvelope; replayed: boolean }>;
}

export function createPlatformApi(options: PlatformApiOptions): PlatformApi {
  const common = {
    token: options.token,
    clientName: '@svc/reference-agent',
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };
  const hub = createHubClient({ baseUrl: options.hubUrl, ...common });
  const workflow = createWorkflowClient({ baseUrl: options.workflowUrl, ...common });
  const stagePath = (stageId: string) => ({ path: { stageId } });

  return {
    async getSelf(signal) {
      return unwrap(await hub.GET('/api/v1/agents/me', { signal }));
    },
    async hubHeartbeat(status, signal) {
      return unwrap(await hub.POST('/api/v1/agents/me/heartbeat', { body: { status }, signal }));
    },
    async refreshRuntimeCredential(signal) {
      return unwrap(await hub.POST('/api/v1/agents/me/runtime-credential', { signal }));
    },
    async listProviderModels(signal) {
      return unwrap(await hub.GET('/api/v1/provider-models', { signal }));
    },
    async listStages(waitSeconds, signal) {
      return unwrap(
        await workflow.GET('/api/v1/agents/me/workflow-stages', {
          params: { query: { wait: waitSeconds } },
          signal,
        }),
      );
    },
    async claimNext(waitSeconds, max, signal) {
      return unwrap(
        await workflow.POST('/api/v1/agents/me/workflow-stages/claims', {
          params: { query: { wait: waitSeconds, max } },
          signal,
        }),
      );
    },
    async claim(stageId, signal) {
      return unwrap(
        await workflow.POST('/api/v1/agents/me/workflow-stages/{stageId}/claim', {
          params: stagePath(stageId),
          signal,
        }),
      );
    },
    async heartbeat(stageId, progress, signal) {
      return unwrap(
        await workflow.POST('/api/v1/agents/me/workflow-stages/{stageId}/heartbeat', {
          params: stagePath(stageId),
          body: progress === undefined ? {} : { progress },
          signal,
        }),
      );
    },
    async reportBlocker(stageId, reason, signal) {
      return unwrap(
        await workflow.POST('/api/v1/agents/me/workflow-stages/{stageId}/blocker', {
          params: stagePath(stageId),
          body: { reason },
          signal,
        }),
      );
    },
    async clearBlocker(stageId, signal) {
      return unwrap(
        await workflow.DELETE('/api/v1/agents/me/workflow-stages/{stageId}/blocker', {
          params: stagePath(stageId),
          signal,
        }),
      );
    },
    async submitEvidence(stageId, kind, content, signal) {
      return unwrap(
        await workflow.POST('/api/v1/agents/me/workflow-stages/{stageId}/evidence', {
          params: stagePath(stageId),
          body: { kind, content },
          signal,
        }),
      );
    },
    async complete(stageId, completion, signal) {
      return unwrap(
        await workflow.POST('/api/v1/agents/me/workflow-stages/{stageId}/complete', {
          params: stagePath(stageId),
          body: completion,
          signal,
        }),
      );
    },
    async publishArtifact(stage, body, signal) {
      const result = await workflow.POST(
        '/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/artifact',
        {
          params: { path: { projectId: stage.project_id, invocationId: stage.invocation_id } },
          body,
          signal,
        },
      );
      return { envelope: unwrap(result), replayed: result.response.status === 200 };
    },
  };
}
