import type { HubInternalApi } from '@svc/contracts';
import type { InternalProject } from '../data/projects.lookups';
import type { RosterEntry } from '../domain/roster';
import type { HostReadinessReport } from '../domain/runtime-readiness';
import type { ProjectRuntimeReadiness } from '../use-cases/internal/get-project-runtime-readiness';
import type { WorkspaceMember } from '../use-cases/internal/get-workspace-member';

type Schemas = HubInternalApi.components['schemas'];

const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null);

export function presentInternalProject(p: InternalProject): Schemas['RosterProject'] {
  return {
    id: p.id,
    code: p.code,
    name: p.name,
    archived_at: p.archivedAt ? p.archivedAt.toISOString() : null,
    workspace: { id: p.workspace.id, slug: p.workspace.slug },
  };
}

export function presentRosterAgent(a: RosterEntry): Schemas['RosterAgent'] {
  return {
    agent_id: a.id,
    name: a.name,
    status: a.status,
    capabilities: a.capabilities,
    runtime_instance_id: a.runtimeInstanceId,
    last_heartbeat_at: isoOrNull(a.lastHeartbeatAt),
    running: a.running,
    teams: a.teamIds,
  };
}

/** Inventory facts and readiness only: the relay token and the host's keys never leave the hub here. */
function presentHost(r: HostReadinessReport): Schemas['RosterRuntimeHost'] {
  return {
    runtime_instance_id: r.host.id,
    name: r.host.name,
    hostname: r.host.hostname,
    last_heartbeat_at: isoOrNull(r.host.lastHeartbeatAt),
    ready: r.ready,
    readiness: r.readiness,
    running_agents: r.runningAgents,
    roster_agents: r.rosterAgents,
  };
}

export function presentRuntimeReadiness(r: ProjectRuntimeReadiness): Schemas['RosterRuntimeReadiness'] {
  return {
    project_id: r.project.id,
    workspace_id: r.project.workspaceId,
    scope: r.scope,
    ready: r.ready,
    blockers: r.blockers,
    hosts: r.hosts.map(presentHost),
  };
}

/** A participant's membership of a workspace, for a service that authorizes its own callers by role. */
export function presentWorkspaceMember(
  m: WorkspaceMember,
): HubInternalApi.operations['getWorkspaceMember']['responses'][200]['content']['application/json']['data'] {
  return {
    workspace_id: m.workspaceId,
    participant_id: m.participantId,
    email: m.participant.email,
    role: m.role,
  };
}
