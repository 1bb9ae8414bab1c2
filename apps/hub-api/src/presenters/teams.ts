import type { HubApi } from '@svc/contracts';
import type {
  Agent,
  Participant,
  ProjectTeam,
  Team,
  TeamAgent,
  TeamParticipant,
} from '../generated/prisma/client';
import type { TeamWithMembers } from '../use-cases/teams/get-team';
import { presentProject } from './projects';

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
