import { workspaceOf } from '../auth/workspace-guard';
import type { HubDeps } from '../deps';
import {
  presentProjectTeamAssignment,
  presentTeam,
  presentTeamAgentMember,
  presentTeamDetail,
  presentTeamParticipantMember,
} from '../presenters/teams';
import { addTeamAgent } from '../use-cases/teams/add-team-agent';
import { addTeamParticipant } from '../use-cases/teams/add-team-participant';
import { assignProjectTeam } from '../use-cases/teams/assign-project-team';
import { createTeam } from '../use-cases/teams/create-team';
import { getTeam } from '../use-cases/teams/get-team';
import { listTeams } from '../use-cases/teams/list-teams';
import { listProjectTeams } from '../use-cases/teams/list-project-teams';
import { removeTeamAgent } from '../use-cases/teams/remove-team-agent';
import { removeTeamParticipant } from '../use-cases/teams/remove-team-participant';
import { unassignProjectTeam } from '../use-cases/teams/unassign-project-team';
import type { HubHandlers } from './types';
import { actorOf } from './types';

export function teamHandlers(
  deps: HubDeps,
): HubHandlers<
  | 'listTeams'
  | 'createTeam'
  | 'getTeam'
  | 'addTeamAgent'
  | 'removeTeamAgent'
  | 'addTeamParticipant'
  | 'removeTeamParticipant'
  | 'listProjectTeams'
  | 'assignProjectTeam'
  | 'unassignProjectTeam'
> {
  return {
    async listTeams(ctx) {
      const teams = await listTeams(deps, workspaceOf(ctx).id);
      return { status: 200, body: { data: teams.map(presentTeam) } };
    },
    async createTeam(ctx) {
      const team = await createTeam(deps, actorOf(ctx.actor), workspaceOf(ctx).id, {
        name: ctx.body.name,
        requestId: ctx.requestId,
      });
      return { status: 201, body: { data: presentTeam(team) } };
    },
    async getTeam(ctx) {
      const team = await getTeam(deps, ctx.actor, ctx.params.teamId);
      return { status: 200, body: { data: presentTeamDetail(team) } };
    },
    async addTeamAgent(ctx) {
      const member = await addTeamAgent(deps, actorOf(ctx.actor), {
        teamId: ctx.params.teamId,
        agentId: ctx.params.agentId,
        requestId: ctx.requestId,
      });
      return { status: 200, body: { data: presentTeamAgentMember(member) } };
    },
    async removeTeamAgent(ctx) {
      await removeTeamAgent(deps, actorOf(ctx.actor), {
        teamId: ctx.params.teamId,
        agentId: ctx.params.agentId,
        requestId: ctx.requestId,
      });
      return { status: 204 };
    },
    async addTeamParticipant(ctx) {
      const member = await addTeamParticipant(deps, actorOf(ctx.actor), {
        teamId: ctx.params.teamId,
        participantId: ctx.params.participantId,
        requestId: ctx.requestId,
      });
      return { status: 200, body: { data: presentTeamParticipantMember(member) } };
    },
    async removeTeamParticipant(ctx) {
      await removeTeamParticipant(deps, actorOf(ctx.actor), {
        teamId: ctx.params.teamId,
        participantId: ctx.params.participantId,
        requestId: ctx.requestId,
      });
      return { status: 204 };
    },
    async listProjectTeams(ctx) {
      const assignments = await listProjectTeams(deps, ctx.actor, {
        projectId: ctx.params.projectId,
        includeUnassigned: ctx.query.include_unassigned === true,
      });
      return { status: 200, body: { data: assignments.map(presentProjectTeamAssignment) } };
    },
    async assignProjectTeam(ctx) {
      const { assignment, changed } = await assignProjectTeam(deps, actorOf(ctx.actor), {
        projectId: ctx.params.projectId,
        teamId: ctx.body.team_id,
        requestId: ctx.requestId,
      });
      const body = { data: presentProjectTeamAssignment(assignment) };
      return changed ? { status: 201, body } : { status: 200, body };
    },
    async unassignProjectTeam(ctx) {
      const assignment = await unassignProjectTeam(deps, actorOf(ctx.actor), {
        projectId: ctx.params.projectId,
        teamId: ctx.params.teamId,
        requestId: ctx.requestId,
      });
      return { status: 200, body: { data: presentProjectTeamAssignment(assignment) } };
    },
  };
}
