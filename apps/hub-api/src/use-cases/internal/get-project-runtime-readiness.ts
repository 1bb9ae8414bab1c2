import type { InternalProject } from '../../data/projects.lookups';
import { readRosterOfProject } from '../../data/roster.lookups';
import { readReadinessHosts } from '../../data/runtime-hosts.lookups';
import type { HubDeps } from '../../deps';
import { hostReadiness } from '../../domain/host-readiness';
import { readinessBlockers } from '../../domain/runtime-readiness';
import type { HostReadinessReport, ReadinessBlocker } from '../../domain/runtime-readiness';

export interface ProjectRuntimeReadiness {
  project: InternalProject;
  scope: 'roster' | 'workspace';
  ready: boolean;
  blockers: ReadinessBlocker[];
  hosts: HostReadinessReport[];
}

/**
 * Can the hosts behind a project take a launch? The hosts are those the roster's agents are attributed
 * to; when no roster agent is attributed to any host (or the roster is empty), every host of the
 * workspace, since a launch would spawn there. Ready when at least one host is fully ready; otherwise
 * the blockers explain why. Reads only.
 */
export async function getProjectRuntimeReadiness(
  deps: HubDeps,
  projectId: string,
): Promise<ProjectRuntimeReadiness> {
  const now = deps.now();
  // Two statements (decision 97): the project with its roster, then the hosts with their running agents.
  const { project, roster } = await readRosterOfProject(deps.pool, now, projectId);
  const rosterPerHost = new Map<string, number>();
  for (const agent of roster) {
    if (agent.runtimeInstanceId) {
      rosterPerHost.set(agent.runtimeInstanceId, (rosterPerHost.get(agent.runtimeInstanceId) ?? 0) + 1);
    }
  }
  const scope = rosterPerHost.size > 0 ? 'roster' : 'workspace';
  const hosts = await readReadinessHosts(
    deps.pool,
    now,
    project.workspaceId,
    scope === 'roster' ? [...rosterPerHost.keys()] : undefined,
  );

  const reports = hosts
    .map(({ host, runningAgents }): HostReadinessReport => {
      const readiness = hostReadiness(host, now);
      return {
        host,
        readiness,
        ready: readiness.spawn_ready && readiness.console_router_ready,
        runningAgents,
        rosterAgents: rosterPerHost.get(host.id) ?? 0,
      };
    })
    .sort(
      (a, b) =>
        Number(b.ready) - Number(a.ready) ||
        (a.host.name < b.host.name ? -1 : a.host.name > b.host.name ? 1 : 0) ||
        (a.host.id < b.host.id ? -1 : 1),
    );
  const ready = reports.some((r) => r.ready);
  return { project, scope, ready, blockers: ready ? [] : readinessBlockers(scope, reports), hosts: reports };
}
