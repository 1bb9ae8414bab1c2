import { workspaceOf, workspaceRoleOf } from '../auth/workspace-guard';
import type { HubDeps } from '../deps';
import { presentMember, presentWorkspace } from '../presenters/workspaces';
import { addMember } from '../use-cases/workspaces/add-member';
import { changeMemberRole } from '../use-cases/workspaces/change-member-role';
import { createWorkspace } from '../use-cases/workspaces/create-workspace';
import { listMembers } from '../use-cases/workspaces/list-members';
import { listWorkspaces } from '../use-cases/workspaces/list-workspaces';
import { removeMember } from '../use-cases/workspaces/remove-member';
import type { HubHandlers } from './types';
import { actorOf, participantOf } from './types';

export function workspaceHandlers(
  deps: HubDeps,
): HubHandlers<
  | 'listWorkspaces'
  | 'createWorkspace'
  | 'listWorkspaceMembers'
  | 'addWorkspaceMember'
  | 'updateWorkspaceMember'
  | 'removeWorkspaceMember'
> {
  return {
    async listWorkspaces({ actor }) {
      const rows = await listWorkspaces(deps, actorOf(actor));
      return { status: 200, body: { data: rows.map((r) => presentWorkspace(r.workspace, r.role)) } };
    },
    async createWorkspace({ actor, body, requestId }) {
      const workspace = await createWorkspace(deps, participantOf(actor), { ...body, requestId });
      return { status: 201, body: { data: presentWorkspace(workspace, 'owner') } };
    },
    async listWorkspaceMembers(ctx) {
      const members = await listMembers(deps, workspaceOf(ctx).id);
      return { status: 200, body: { data: members.map(presentMember) } };
    },
    async addWorkspaceMember(ctx) {
      const { body } = ctx;
      const membership = await addMember(
        deps,
        participantOf(ctx.actor),
        workspaceRoleOf(ctx),
        workspaceOf(ctx).id,
        {
          email: body.email,
          role: body.role,
          displayName: body.display_name,
          password: body.password,
          requestId: ctx.requestId,
        },
      );
      return { status: 201, body: { data: presentMember(membership) } };
    },
    async updateWorkspaceMember(ctx) {
      const membership = await changeMemberRole(
        deps,
        participantOf(ctx.actor),
        workspaceRoleOf(ctx),
        workspaceOf(ctx).id,
        ctx.params.participantId,
        ctx.body.role,
        ctx.requestId,
      );
      return { status: 200, body: { data: presentMember(membership) } };
    },
    async removeWorkspaceMember(ctx) {
      await removeMember(
        deps,
        participantOf(ctx.actor),
        workspaceRoleOf(ctx),
        workspaceOf(ctx).id,
        ctx.params.participantId,
        ctx.requestId,
      );
      return { status: 204 };
    },
  };
}
