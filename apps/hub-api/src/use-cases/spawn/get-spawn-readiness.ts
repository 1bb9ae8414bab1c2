import type { HubDeps } from '../../deps';
import { findInternalProject } from '../../data/projects.lookups';
import { activeCatalog, readSpawnPolicies, spawnHostCandidates } from '../../data/spawn.lookups';
import { chooseSpawnHost, judgeSpawnAgainstPolicy, uniqueInOrder } from '../../domain/spawn-policy';
import type { SpawnBlocker } from '../../domain/spawn-policy';

export interface SpawnReadiness {
  allowed: boolean;
  model: string | null;
  runtimeInstanceId: string | null;
  commandKey: string;
  blockers: SpawnBlocker[];
}

/**
 * Would a spawn of an agent with these capabilities be allowed for the project now? The same policy and host
 * rules as a spawn, with every blocker that applies rather than the first. Reads only.
 */
export async function getSpawnReadiness(
  deps: HubDeps,
  projectId: string,
  capabilities: string[],
): Promise<SpawnReadiness> {
  const project = await findInternalProject(deps.db, projectId);
  const policies = await readSpawnPolicies(deps.db, project.workspaceId, project.id);
  const verdict = judgeSpawnAgainstPolicy(
    policies.rules,
    { capabilities: uniqueInOrder(capabilities) },
    await activeCatalog(deps.db),
  );
  const choice = chooseSpawnHost(
    await spawnHostCandidates(deps.db, project.workspaceId, deps.now()),
    policies.rules.maxRunningAgentsPerHost,
  );
  const blockers = [...verdict.blockers, ...(choice.blocker ? [choice.blocker] : [])];
  return {
    allowed: blockers.length === 0,
    model: verdict.model,
    runtimeInstanceId: choice.hostId,
    commandKey: verdict.commandKey,
    blockers,
  };
}
