import { workspaceOf } from '../auth/workspace-guard';
import type { HubDeps } from '../deps';
import { presentProject } from '../presenters';
import { createProject } from '../use-cases/create-project';
import { getProject } from '../use-cases/get-project';
import type { HubHandlers } from './types';
import { actorOf } from './types';

export function projectHandlers(deps: HubDeps): HubHandlers<'listProjects' | 'createProject' | 'getProject'> {
  return {
    async listProjects(ctx) {
      const projects = await deps.db.project.findMany({
        where: { workspaceId: workspaceOf(ctx).id },
        orderBy: { id: 'asc' },
      });
      return { status: 200, body: { data: projects.map(presentProject) } };
    },
    async createProject(ctx) {
      const project = await createProject(deps, actorOf(ctx.actor), workspaceOf(ctx).id, {
        ...ctx.body,
        requestId: ctx.requestId,
      });
      return { status: 201, body: { data: presentProject(project) } };
    },
    async getProject(ctx) {
      const project = await getProject(deps, ctx.actor, ctx.params.projectId);
      return { status: 200, body: { data: presentProject(project) } };
    },
  };
}
