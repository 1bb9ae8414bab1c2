import type { RouteTemplate } from '../../domain/template-definition';
import type { Invocation, RunStage } from '../../generated/prisma/client';

/** The ids a run is started with, chosen before the reconcile's transaction so the hub can be asked first. */
export interface RunIds {
  runId: string;
  stageIds: string[];
}

/** The stored fields of the stages a run starts with, one per stage of its template, in order. */
export function runStageRows(
  invocation: Pick<Invocation, 'id' | 'workspaceId'>,
  ids: RunIds,
  template: RouteTemplate,
) {
  return template.definition.stages.map((stage, i) => ({
    id: ids.stageIds[i]!,
    runId: ids.runId,
    invocationId: invocation.id,
    workspaceId: invocation.workspaceId,
    position: i + 1,
    key: stage.key,
    title: stage.title,
    requiredCapabilities: [...new Set(stage.required_capabilities)].sort(),
  }));
}

/** The stages a run not started yet will have, as the reconcile's transaction will create them. */
export function unstartedRunStages(
  invocation: Pick<Invocation, 'id' | 'workspaceId'>,
  ids: RunIds,
  template: RouteTemplate,
): RunStage[] {
  return runStageRows(invocation, ids, template).map((row) => ({
    ...row,
    state: 'pending',
    ownerAgentId: null,
    handoffId: null,
    stalledAgentIds: [],
    stalledAt: {},
    attempts: 0,
    failures: 0,
    failureReason: null,
    blockerReason: null,
    progress: null,
    summary: null,
    firstAssignedAt: null,
    assignedAt: null,
    claimedAt: null,
    lastHeartbeatAt: null,
    completedAt: null,
    ownerSpawn: null,
  }));
}
