import { workspaceOf } from '../auth/workspace-guard';
import type { HubDeps } from '../deps';
import { presentProject } from '../presenters/projects';
import { createProject } from '../use-cases/projects/create-project';
import { getProject } from '../use-cases/projects/get-project';
import { listProjects } from '../use-cases/projects/list-projects';
import type { HubHandlers } from './types';
import { actorOf } from './types';

export function projectHandlers(deps: HubDeps): HubHandlers<'listProjects' | 'createProject' | 'getProject'> {
  return {
    async listProjects(ctx) {
      const projects = await listProjects(deps, workspaceOf(ctx).id);
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
