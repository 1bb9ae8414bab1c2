import type { HubDeps } from '../deps';
import { presentInternalProject, presentRosterAgent, presentRuntimeReadiness } from '../presenters/roster';
import { getInternalProject } from '../use-cases/get-internal-project';
import { getProjectRoster } from '../use-cases/get-project-roster';
import { getProjectRuntimeReadiness } from '../use-cases/get-project-runtime-readiness';
import type { HubInternalHandlers } from './types';

/** Projects, rosters and runtime readiness for the platform's other services (service actor only). */
export function internalRosterHandlers(
  deps: HubDeps,
): Pick<HubInternalHandlers, 'getInternalProject' | 'getProjectRoster' | 'getProjectRuntimeReadiness'> {
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
  };
}
