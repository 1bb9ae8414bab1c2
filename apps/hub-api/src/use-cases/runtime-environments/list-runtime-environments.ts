import type { HubDeps } from '../../deps';
import { ENVIRONMENT_WITH_HOSTS } from '../../data/runtime-environments.lookups';
import type { EnvironmentWithHosts } from '../../data/runtime-environments.lookups';

/** The workspace's runtime environments by name, each with its hosts and its stored tunnel state. */
export function listRuntimeEnvironments(
  deps: Pick<HubDeps, 'db'>,
  workspaceId: string,
): Promise<EnvironmentWithHosts[]> {
  return deps.db.runtimeEnvironment.findMany({
    where: { workspaceId },
    include: ENVIRONMENT_WITH_HOSTS,
    orderBy: { name: 'asc' },
  });
}
