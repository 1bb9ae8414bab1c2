import type { OperationContext, OperationGuard } from '@svc/service-kit';
import type { Db } from '../db';
import type { Workspace, WorkspaceRole } from '../generated/prisma/client';
import { assertWorkspaceAccess, findWorkspaceByRef } from '../data/workspaces.access';
import type { ApiKeyCache } from './api-key-cache';

interface WorkspaceLocals {
  workspace?: Workspace;
  workspaceRole?: WorkspaceRole;
}

/**
 * For every operation with a `{workspace}` path parameter: resolve it (id or slug) and check that the
 * caller may act there with the roles the contract declares (`x-svc-participant-roles`). An API key's own
 * workspace comes from the key cache when it is there, so automation calls cost no extra read.
 */
export function workspaceGuard(db: Db, apiKeys?: ApiKeyCache): OperationGuard {
  return async (ctx) => {
    if (!ctx.operation.pathParams.includes('workspace')) return;
    const ref = String((ctx.params as Record<string, unknown>).workspace);
    const own = ctx.actor?.kind === 'api_key' ? apiKeys?.workspaceOf(ctx.actor) : undefined;
    const found = own && (own.id === ref || own.slug === ref) ? own : await findWorkspaceByRef(db, ref);
    const access = await assertWorkspaceAccess(db, ctx.actor, found, ref, ctx.operation.participantRoles);
    const locals = ctx.res.locals as WorkspaceLocals;
    locals.workspace = access.workspace;
    locals.workspaceRole = access.role;
  };
}

/** The workspace the guard resolved for this request. */
export function workspaceOf(ctx: OperationContext<unknown>): Workspace {
  const workspace = (ctx.res.locals as WorkspaceLocals).workspace;
  if (!workspace) throw new Error(`${ctx.operation.operationId}: workspace guard did not run`);
  return workspace;
}

export function workspaceRoleOf(ctx: OperationContext<unknown>): WorkspaceRole | undefined {
  return (ctx.res.locals as WorkspaceLocals).workspaceRole;
}
