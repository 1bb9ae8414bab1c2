import type { HubDeps } from '../deps';
import type { RuntimeHost } from '../generated/prisma/client';
import type { InternalProject } from './get-internal-project';
import { getProjectRoster } from './get-project-roster';
import { HOST_HEARTBEAT_FRESH_SECONDS, hostReadiness, runningAgentFilter } from './host-readiness';
import type { HostReadiness } from './host-readiness';

export type ReadinessBlockerCode =
  'no_runtime_host' | 'runtime_host_stale' | 'relay_not_ready' | 'console_router_not_ready';

export interface ReadinessBlocker {
  code: ReadinessBlockerCode;
  message: string;
  recommended_action: string;
  runtime_instance_ids: string[];
}

export interface HostReadinessReport {
  host: RuntimeHost;
  readiness: HostReadiness;
  /** Fresh heartbeat, relay ready and console router ready. */
  ready: boolean;
  runningAgents: number;
  rosterAgents: number;
}

export interface ProjectRuntimeReadiness {
  project: InternalProject;
  scope: 'roster' | 'workspace';
  ready: boolean;
  blockers: ReadinessBlocker[];
  hosts: HostReadinessReport[];
}

const hostList = (hosts: HostReadinessReport[]) =>
  hosts.map((h) => `${h.host.name} (${h.host.id})`).join(', ');

/** One blocker per code, naming every host it concerns; in the order a fix has to follow. */
function blockersFor(scope: 'roster' | 'workspace', hosts: HostReadinessReport[]): ReadinessBlocker[] {
  if (hosts.length === 0) {
    return [
      {
        code: 'no_runtime_host',
        message:
          scope === 'workspace'
            ? 'The workspace has no runtime host, so nothing can run the agents of the project.'
            : 'None of the agents of the project is attributed to a runtime host.',
        recommended_action:
          'Register a runtime host in the workspace and start it with `svc runtime up` under a service manager, then run preflight again.',
        runtime_instance_ids: [],
      },
    ];
  }
  const stale = hosts.filter((h) => !h.readiness.heartbeat_fresh);
  // A stale host's relay and console flags are old news: only a fresh host is judged on them.
  const fresh = hosts.filter((h) => h.readiness.heartbeat_fresh);
  const relay = fresh.filter((h) => !h.readiness.relay_ready);
  const consoleRouter = fresh.filter((h) => !h.readiness.console_router_ready);
  const blockers: ReadinessBlocker[] = [];
  if (stale.length > 0) {
    blockers.push({
      code: 'runtime_host_stale',
      message: `No heartbeat for more than ${HOST_HEARTBEAT_FRESH_SECONDS} s from ${hostList(stale)}.`,
      recommended_action:
        'Check that `svc runtime up` is running on the host (under its service manager, with automatic restart) and can reach the hub; `svc runtime status` shows its state.',
      runtime_instance_ids: stale.map((h) => h.host.id),
    });
  }
  if (relay.length > 0) {
    blockers.push({
      code: 'relay_not_ready',
      message: `The relay is not ready on ${hostList(relay)}.`,
      recommended_action:
        'Run `svc internal relay health` on the host; make sure the hub URL, workspace, API key and SVC_RELAY_TOKEN are configured (`svc config doctor`), then `svc internal relay start --daemon`.',
      runtime_instance_ids: relay.map((h) => h.host.id),
    });
  }
  if (consoleRouter.length > 0) {
    blockers.push({
      code: 'console_router_not_ready',
      message: `The console router is not ready on ${hostList(consoleRouter)}.`,
      recommended_action:
        'Check `/readyz` of the console router on the host and the runtime config (`svc config pull-runtime`), then restart the runtime with `svc runtime up`.',
      runtime_instance_ids: consoleRouter.map((h) => h.host.id),
    });
  }
  return blockers;
}

/**
 * Can the hosts behind a project take a launch? The hosts are those the roster's agents are attributed
 * to; when no roster agent is attributed to any host (or the roster is empty), every host of the
 * workspace, since a launch would spawn there. Ready when at least one host is fully ready; otherwise
 * the blockers explain why. Reads only.
 */
export async function getProjectRuntimeReadiness(
  deps: HubDeps,
  project: InternalProject,
): Promise<ProjectRuntimeReadiness> {
  const now = deps.now();
  const roster = await getProjectRoster(deps, project);
  const rosterPerHost = new Map<string, number>();
  for (const agent of roster) {
    if (agent.runtimeInstanceId) {
      rosterPerHost.set(agent.runtimeInstanceId, (rosterPerHost.get(agent.runtimeInstanceId) ?? 0) + 1);
    }
  }
  const scope = rosterPerHost.size > 0 ? 'roster' : 'workspace';
  const hosts = await deps.db.runtimeHost.findMany({
    where: {
      workspaceId: project.workspaceId,
      ...(scope === 'roster' ? { id: { in: [...rosterPerHost.keys()] } } : {}),
    },
  });
  const running =
    hosts.length === 0
      ? []
      : await deps.db.agent.groupBy({
          by: ['runtimeInstanceId'],
          where: {
            workspaceId: project.workspaceId,
            runtimeInstanceId: { in: hosts.map((h) => h.id) },
            ...runningAgentFilter(now),
          },
          _count: { _all: true },
        });
  const runningPerHost = new Map(running.map((r) => [r.runtimeInstanceId, r._count._all]));

  const reports = hosts
    .map((host): HostReadinessReport => {
      const readiness = hostReadiness(host, now);
      return {
        host,
        readiness,
        ready: readiness.spawn_ready && readiness.console_router_ready,
        runningAgents: runningPerHost.get(host.id) ?? 0,
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
  return { project, scope, ready, blockers: ready ? [] : blockersFor(scope, reports), hosts: reports };
}
