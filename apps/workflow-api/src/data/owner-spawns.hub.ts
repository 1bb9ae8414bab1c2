import type { WorkflowDeps } from '../deps';
import type { HubSpawn, SpawnReadiness } from '../domain/owner-spawn';

const HUB_TIMEOUT_MS = 5_000;

/** Whether the hub would spawn an agent with these capabilities for the project now; null when it cannot be asked. */
export async function readSpawnReadiness(
  deps: WorkflowDeps,
  projectId: string,
  capabilities: readonly string[],
): Promise<SpawnReadiness | null> {
  try {
    const res = await deps.hub.GET('/internal/v1/projects/{projectId}/spawn-readiness', {
      params: { path: { projectId }, query: { capabilities: capabilities.join(',') } },
      signal: AbortSignal.timeout(HUB_TIMEOUT_MS),
    });
    return res.data?.data ?? null;
  } catch (error) {
    deps.logger.warn({ err: error, project_id: projectId }, 'spawn readiness read failed');
    return null;
  }
}

export type SpawnRequestResult =
  { kind: 'spawn'; spawn: HubSpawn } | { kind: 'refused'; code: string } | { kind: 'unreachable' };

/** Asks the hub to spawn an owner under `spawnKey` (the same key answers the same spawn). */
export async function requestOwnerSpawn(
  deps: WorkflowDeps,
  input: {
    projectId: string;
    spawnKey: string;
    capabilities: string[];
    invocationId: string;
    stageKey: string;
  },
): Promise<SpawnRequestResult> {
  try {
    const res = await deps.hub.POST('/internal/v1/projects/{projectId}/agent-spawns', {
      params: { path: { projectId: input.projectId } },
      body: {
        spawn_key: input.spawnKey,
        capabilities: input.capabilities,
        reason: { invocation_id: input.invocationId, stage_key: input.stageKey },
      },
      signal: AbortSignal.timeout(HUB_TIMEOUT_MS),
    });
    if (res.data) return { kind: 'spawn', spawn: res.data.data };
    // 409: the policy or the hosts refuse it; 429: every host is at a limit (back-pressure). Either way the
    // run waits, showing the blocker spawn readiness names, and the engine asks again on a later pass.
    if (res.response.status === 409 || res.response.status === 429) {
      return { kind: 'refused', code: (res.error as { code?: string } | undefined)?.code ?? 'spawn_refused' };
    }
    deps.logger.warn({ status: res.response.status, spawn_key: input.spawnKey }, 'owner spawn refused');
    return { kind: 'unreachable' };
  } catch (error) {
    deps.logger.warn({ err: error, spawn_key: input.spawnKey }, 'owner spawn request failed');
    return { kind: 'unreachable' };
  }
}

/** The hub's spawn as it stands now; null when it cannot be read. */
export async function readOwnerSpawn(deps: WorkflowDeps, spawnId: string): Promise<HubSpawn | null> {
  try {
    const res = await deps.hub.GET('/internal/v1/agent-spawns/{spawnId}', {
      params: { path: { spawnId } },
      signal: AbortSignal.timeout(HUB_TIMEOUT_MS),
    });
    return res.data?.data ?? null;
  } catch (error) {
    deps.logger.warn({ err: error, spawn_id: spawnId }, 'owner spawn read failed');
    return null;
  }
}
