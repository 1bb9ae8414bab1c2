import type { Actor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import { createHandoff } from '../handoffs/create-handoff';
import type { CreatedHandoff, HandoffReferenceInput } from '../handoffs/create-handoff';

/**
 * The handoff of a workflow stage for its owner, created once: a repeated call with the same reference and
 * assignee returns the handoff of the first call (`created: false`), whatever it has become since.
 */
export async function createStageHandoff(
  deps: HubDeps,
  actor: Actor,
  input: {
    workspaceId: string;
    projectId: string;
    assigneeAgentId: string;
    title: string;
    description?: string;
    reference: HandoffReferenceInput;
    requestId?: string;
  },
): Promise<CreatedHandoff> {
  const workspace = await deps.db.workspace.findUnique({
    where: { id: input.workspaceId },
    select: { id: true },
  });
  if (!workspace) {
    throw new AppError({
      status: 404,
      code: 'workspace_not_found',
      detail: `No workspace '${input.workspaceId}'.`,
    });
  }
  return createHandoff(deps, actor, { ...input, idempotent: true });
}
