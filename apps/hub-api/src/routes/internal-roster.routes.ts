import type { HubDeps } from '../deps';
import {
  presentInternalProject,
  presentRosterAgent,
  presentRuntimeReadiness,
  presentWorkspaceMember,
} from '../presenters/roster';
import { getInternalProject } from '../use-cases/internal/get-internal-project';
import { getProjectRoster } from '../use-cases/internal/get-project-roster';
import { getProjectRuntimeReadiness } from '../use-cases/internal/get-project-runtime-readiness';
import { getWorkspaceMember } from '../use-cases/internal/get-workspace-member';
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
      const roster = await getProjectRoster(deps, params.projectId, {
        capabilities: query.capability,
        availableOnly: query.available_only,
      });
      return { status: 200, body: { data: roster.map(presentRosterAgent) } };
    },
    async getProjectRuntimeReadiness({ params }) {
      const readiness = await getProjectRuntimeReadiness(deps, params.projectId);
      return { status: 200, body: { data: presentRuntimeReadiness(readiness) } };
    },
    async getWorkspaceMember({ params }) {
      const member = await getWorkspaceMember(deps, params.workspaceId, params.participantId);
      return { status: 200, body: { data: presentWorkspaceMember(member) } };
    },
  };
}
