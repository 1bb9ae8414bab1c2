import type { AgentActor } from '@svc/auth';
import type { WorkflowApi } from '@svc/contracts';
import type { WorkflowDeps } from '../deps';
import type { RunStage } from '../generated/prisma/client';
import { findArtifactSchema } from '../use-cases/find-artifact-schema';
import { loadInvocationTemplate } from './invocation-template';
import { heartbeatIntervalSeconds } from './settings';
import { OPEN_STAGE_STATES } from './states';

export type AgentStageAssignment = WorkflowApi.components['schemas']['AgentStageAssignment'];

/** What the owner of `stages` needs to do them: intent, place in the run, pinned artifact schema. */
export async function presentAssignments(
  deps: WorkflowDeps,
  stages: RunStage[],
): Promise<AgentStageAssignment[]> {
  if (stages.length === 0) return [];
  const invocationIds = [...new Set(stages.map((s) => s.invocationId))];
  const [invocations, counts] = await Promise.all([
    deps.db.invocation.findMany({ where: { id: { in: invocationIds } } }),
    deps.db.runStage.groupBy({
      by: ['invocationId'],
      where: { invocationId: { in: invocationIds } },
      _count: { _all: true },
    }),
  ]);
  const byId = new Map(invocations.map((i) => [i.id, i]));
  const countOf = new Map(counts.map((c) => [c.invocationId, c._count._all]));
  // Invocations of one template share its pinned schema: look each template up once per call.
  const byTemplate = new Map<string, Promise<AgentStageAssignment['artifact_schema']>>();
  const pinnedSchema = async (invocation: (typeof invocations)[number]) => {
    const template = await loadInvocationTemplate(deps.db, invocation);
    const pinned = template?.definition.artifact_schema;
    const schema = pinned
      ? await findArtifactSchema(deps.db, invocation.projectId, pinned.name, pinned.version)
      : null;
    return {
      name: pinned?.name ?? '',
      version: pinned?.version ?? '',
      json_schema: (schema?.jsonSchema as Record<string, unknown> | undefined) ?? {},
    };
  };
  const schemas = new Map<string, AgentStageAssignment['artifact_schema']>();
  for (const invocation of invocations) {
    const key = `${invocation.projectId}\u0000${invocation.templateKey}\u0000${invocation.templateVersion}`;
    if (!byTemplate.has(key)) byTemplate.set(key, pinnedSchema(invocation));
    schemas.set(invocation.id, await byTemplate.get(key)!);
  }
  const heartbeat = heartbeatIntervalSeconds(deps.engine);
  return stages.flatMap((stage) => {
    const invocation = byId.get(stage.invocationId);
    if (!invocation) return [];
    const count = countOf.get(stage.invocationId) ?? stage.position;
    return [
      {
        stage_id: stage.id,
        invocation_id: stage.invocationId,
        project_id: invocation.projectId,
        run_id: stage.runId,
        key: stage.key,
        title: stage.title,
        position: stage.position,
        stage_count: count,
        is_final: stage.position === count,
        state: stage.state as AgentStageAssignment['state'],
        handoff_id: stage.handoffId,
        intent: String((invocation.request as { intent?: unknown } | null)?.intent ?? ''),
        required_capabilities: (stage.requiredCapabilities as string[]) ?? [],
        artifact_schema: schemas.get(stage.invocationId)!,
        heartbeat_interval_seconds: heartbeat,
        stall_after_seconds: Math.round(deps.engine.stallAfterMs / 1000),
        assigned_at: stage.assignedAt ? stage.assignedAt.toISOString() : null,
      },
    ];
  });
}

/** The caller's open stages, oldest assignment first (at most 100). */
export async function openStagesOf(deps: WorkflowDeps, actor: AgentActor): Promise<RunStage[]> {
  return deps.db.runStage.findMany({
    where: {
      ownerAgentId: actor.agentId,
      workspaceId: actor.workspaceId,
      state: { in: [...OPEN_STAGE_STATES] },
    },
    orderBy: [{ assignedAt: 'asc' }, { id: 'asc' }],
    take: 100,
  });
}

/** Something that resolves when an assignment for an agent is announced (or the time is up). */
export interface AssignmentWaiter {
  wait(agentId: string, ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * Long-poll: the open stages now, or — when there are none and `waitSeconds` > 0 — after the next assignment
 * announced for this agent, or after the wait (an announcement lost with Redis only costs latency).
 */
export async function listMyStages(
  deps: WorkflowDeps,
  waiter: AssignmentWaiter,
  actor: AgentActor,
  waitSeconds: number,
  signal?: AbortSignal,
): Promise<AgentStageAssignment[]> {
  let stages = await openStagesOf(deps, actor);
  if (stages.length === 0 && waitSeconds > 0) {
    await waiter.wait(actor.agentId, waitSeconds * 1000, signal);
    if (signal?.aborted) return [];
    stages = await openStagesOf(deps, actor);
  }
  return presentAssignments(deps, stages);
}
