import type { HubDeps } from '../deps';
import type { RuntimeHost } from '../generated/prisma/client';
import { bundlesByHost } from './get-runtime-host';
import { runningAgentFilter } from './host-readiness';

export interface NetworkHostView {
  host: RuntimeHost;
  runningAgents: number;
  bundles: string[];
}

/**
 * Every runtime host of the workspace with the agents running on it right now (online, idle or busy with a
 * fresh heartbeat), counted at request time, so the number follows agents starting and stopping at once.
 */
export async function getNetworksView(
  deps: Pick<HubDeps, 'db' | 'now'>,
  workspaceId: string,
): Promise<{ generatedAt: Date; hosts: NetworkHostView[] }> {
  const now = deps.now();
  const hosts = await deps.db.runtimeHost.findMany({ where: { workspaceId }, orderBy: { id: 'asc' } });
  const ids = hosts.map((host) => host.id);
  const [counts, bundles] = await Promise.all([
    ids.length === 0
      ? Promise.resolve([])
      : deps.db.agent.groupBy({
          by: ['runtimeInstanceId'],
          where: { workspaceId, runtimeInstanceId: { in: ids }, ...runningAgentFilter(now) },
          _count: { _all: true },
        }),
    bundlesByHost(deps, ids),
  ]);
  const running = new Map(counts.map((row) => [row.runtimeInstanceId, row._count._all]));
  return {
    generatedAt: now,
    hosts: hosts.map((host) => ({
      host,
      runningAgents: running.get(host.id) ?? 0,
      bundles: bundles.get(host.id) ?? [],
    })),
  };
}
