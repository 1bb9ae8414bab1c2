import type { HubApi } from '@svc/contracts';
import type {
  Agent,
  Participant,
  Project,
  ProjectTeam,
  RuntimeHost,
  Team,
  TeamAgent,
  TeamParticipant,
} from '../generated/prisma/client';
import { presentProject } from '../presenters';

type Schemas = HubApi.components['schemas'];

const iso = (d: Date) => d.toISOString();
const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null);

export function presentTeam(t: Team): Schemas['Team'] {
  return { id: t.id, workspace_id: t.workspaceId, name: t.name, created_at: iso(t.createdAt) };
}

export function presentTeamAgentMember(
  m: TeamAgent & { agent: Pick<Agent, 'name' | 'status'> },
): Schemas['TeamAgentMember'] {
  return {
    team_id: m.teamId,
    agent_id: m.agentId,
    name: m.agent.name,
    status: m.agent.status,
    added_at: iso(m.createdAt),
  };
}

export function presentTeamParticipantMember(
  m: TeamParticipant & { participant: Pick<Participant, 'displayName'> },
): Schemas['TeamParticipantMember'] {
  return {
    team_id: m.teamId,
    participant_id: m.participantId,
    display_name: m.participant.displayName,
    added_at: iso(m.createdAt),
  };
}

export type TeamWithMembers = Team & {
  agents: (TeamAgent & { agent: Agent })[];
  participants: (TeamParticipant & { participant: Participant })[];
  projects: (ProjectTeam & { project: Project })[];
};

export function presentTeamDetail(t: TeamWithMembers): Schemas['TeamDetail'] {
  return {
    ...presentTeam(t),
    agents: t.agents.map(presentTeamAgentMember),
    participants: t.participants.map(presentTeamParticipantMember),
    projects: t.projects.map((a) => ({ project: presentProject(a.project), assigned_at: iso(a.assignedAt) })),
  };
}

export function presentProjectTeamAssignment(
  a: ProjectTeam & { team: Team },
): Schemas['ProjectTeamAssignment'] {
  return {
    project_id: a.projectId,
    team: presentTeam(a.team),
    assigned_at: iso(a.assignedAt),
    unassigned_at: isoOrNull(a.unassignedAt),
    active: a.unassignedAt === null,
  };
}

export function presentAgent(a: Agent): Schemas['Agent'] {
  return {
    id: a.id,
    workspace_id: a.workspaceId,
    name: a.name,
    status: a.status,
    capabilities: a.capabilities,
    runtime_instance_id: a.runtimeInstanceId,
    project_id: a.projectId,
    workdir: a.workdir,
    serve_port: a.servePort,
    console_route: a.consoleRoute,
    model: a.model,
    last_heartbeat_at: isoOrNull(a.lastHeartbeatAt),
    started_at: isoOrNull(a.startedAt),
    stopped_at: isoOrNull(a.stoppedAt),
    evicted_at: isoOrNull(a.evictedAt),
    created_at: iso(a.createdAt),
    updated_at: iso(a.updatedAt),
  };
}

export function presentAgentOnboardHost(h: RuntimeHost): Schemas['AgentOnboardHost'] {
  return {
    id: h.id,
    name: h.name,
    workdir_root: h.workdirRoot,
    console_public_base_url: h.consolePublicBaseUrl,
  };
}
