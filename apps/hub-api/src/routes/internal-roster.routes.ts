import type { HubDeps } from '../deps';
import { presentInternalProject, presentRosterAgent, presentRuntimeReadiness } from '../presenters/roster';
import { getInternalProject } from '../use-cases/get-internal-project';
import { getProjectRoster } from '../use-cases/get-project-roster';
import { getProjectRuntimeReadiness } from '../use-cases/get-project-runtime-readiness';
import { getWorkspaceMember } from '../use-cases/get-workspace-member';
import type { HubInternalHandlers } from './types';

/**
 * Projects, rosters, runtime readiness and workspace memberships for the platform's other services
 * (service actor only).
 */
export function internalRosterHandlers(
  deps: HubDeps,
): Pick<
  HubInternalHandlers,
  'getInternalProject' | 'getProjectRoster' | 'getProjectRuntimeReadiness' | 'getWorkspaceMember'
> {
  return {
    async getInternalProject({ params }) {
      const project = await getInternalProject(deps, params.projectId);
      return { status: 200, body: { data: presentInternalProject(project) } };
    },
    async getProjectRoster({ params, query }) {
      const project = await getInternalProject(deps, params.projectId);
      const roster = await getProjectRoster(deps, project, {
        capabilities: query.capability,
        availableOnly: query.available_only,
      });
      return { status: 200, body: { data: roster.map(presentRosterAgent) } };
    },
    async getProjectRuntimeReadiness({ params }) {
      const project = await getInternalProject(deps, params.projectId);
      const readiness = await getProjectRuntimeReadiness(deps, project);
      return { status: 200, body: { data: presentRuntimeReadiness(readiness) } };
    },
    async getWorkspaceMember({ params }) {
      const member = await getWorkspaceMember(deps, params.workspaceId, params.participantId);
      return {
        status: 200,
        body: {
          data: {
            workspace_id: member.workspaceId,
            participant_id: member.participantId,
            email: member.participant.email,
            role: member.role,
          },
        },
      };
    },
  };
}
