import { workspaceOf } from '../auth/workspace-guard';
import type { HubDeps } from '../deps';
import { presentProject } from '../presenters/projects';
import { createProject } from '../use-cases/projects/create-project';
import { getProject } from '../use-cases/projects/get-project';
import { listProjects } from '../use-cases/projects/list-projects';
import { renameProject } from '../use-cases/projects/rename-project';
import { setProjectArchived } from '../use-cases/projects/set-project-archived';
import type { HubHandlers } from './types';
import { actorOf } from './types';

export function projectHandlers(
  deps: HubDeps,
): HubHandlers<
  'listProjects' | 'createProject' | 'getProject' | 'updateProject' | 'archiveProject' | 'unarchiveProject'
> {
  return {
    async listProjects(ctx) {
      const projects = await listProjects(deps, workspaceOf(ctx).id, {
        includeArchived: ctx.query.include_archived === true,
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
    async updateProject(ctx) {
      const project = await renameProject(deps, actorOf(ctx.actor), {
        projectId: ctx.params.projectId,
        name: ctx.body.name,
        requestId: ctx.requestId,
      });
      return { status: 200, body: { data: presentProject(project) } };
    },
    async archiveProject(ctx) {
      const project = await setProjectArchived(deps, actorOf(ctx.actor), {
        projectId: ctx.params.projectId,
        archived: true,
        requestId: ctx.requestId,
      });
      return { status: 200, body: { data: presentProject(project) } };
    },
    async unarchiveProject(ctx) {
      const project = await setProjectArchived(deps, actorOf(ctx.actor), {
        projectId: ctx.params.projectId,
        archived: false,
        requestId: ctx.requestId,
      });
      return { status: 200, body: { data: presentProject(project) } };
    },
  };
}
