import type { HubDeps } from '../../deps';
import type { Agent, RuntimeHost } from '../../generated/prisma/client';
import { bundlesByHost } from '../../data/runtime-hosts.lookups';
import { environmentsOfHosts } from '../../data/runtime-environments.lookups';
import type { HostEnvironment } from '../../data/runtime-environments.lookups';
import { runningAgentFilter } from '../../domain/host-readiness';

export interface NetworkHostView {
  host: RuntimeHost;
  runningAgents: number;
  bundles: string[];
  /** The host's agents with a console route, most recent console activity first, never-active ones last. */
  consoleActivity: Pick<Agent, 'id' | 'name' | 'consoleLastActivityAt'>[];
  /** The host's runtime environment, whose active tunnel gives its public URLs. */
  environment: HostEnvironment | null;
}

/**
 * Every runtime host of the workspace with the agents running on it right now (online, idle or busy with a
 * fresh heartbeat), counted at request time, so the number follows agents starting and stopping at once,
 * and the last console activity of each agent it routes (a serve port set, not evicted) as its host reported it.
 */
export async function getNetworksView(
  deps: Pick<HubDeps, 'db' | 'now'>,
  workspaceId: string,
): Promise<{ generatedAt: Date; hosts: NetworkHostView[] }> {
  const now = deps.now();
  const hosts = await deps.db.runtimeHost.findMany({ where: { workspaceId }, orderBy: { id: 'asc' } });
  const ids = hosts.map((host) => host.id);
  const [counts, bundles, routed, environments] = await Promise.all([
    ids.length === 0
      ? Promise.resolve([])
      : deps.db.agent.groupBy({
          by: ['runtimeInstanceId'],
          where: { workspaceId, runtimeInstanceId: { in: ids }, ...runningAgentFilter(now) },
          _count: { _all: true },
        }),
    bundlesByHost(deps.db, ids),
    ids.length === 0
      ? Promise.resolve([])
      : deps.db.agent.findMany({
          where: {
            workspaceId,
            runtimeInstanceId: { in: ids },
            servePort: { not: null },
            status: { not: 'evicted' },
          },
          select: { id: true, name: true, consoleLastActivityAt: true, runtimeInstanceId: true },
          orderBy: [
            { consoleLastActivityAt: { sort: 'desc', nulls: 'last' } },
            { name: 'asc' },
            { id: 'asc' },
          ],
        }),
    environmentsOfHosts(deps.db, ids),
  ]);
  const activity = new Map<string, NetworkHostView['consoleActivity']>();
  for (const { runtimeInstanceId, ...agent } of routed) {
    if (runtimeInstanceId === null) continue;
    const list = activity.get(runtimeInstanceId);
    if (list) list.push(agent);
    else activity.set(runtimeInstanceId, [agent]);
  }
  const running = new Map(counts.map((row) => [row.runtimeInstanceId, row._count._all]));
  return {
    generatedAt: now,
    hosts: hosts.map((host) => ({
      host,
      runningAgents: running.get(host.id) ?? 0,
      bundles: bundles.get(host.id) ?? [],
      consoleActivity: activity.get(host.id) ?? [],
      environment: environments.get(host.id) ?? null,
    })),
  };
}
