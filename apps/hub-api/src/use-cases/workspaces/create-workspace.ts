import type { ParticipantActor } from '@svc/auth';
import { AppError, newId } from '@svc/service-kit';
import { isUniqueViolation } from '../../db';
import type { HubDeps } from '../../deps';

/** Creates a workspace; its creator becomes the owner (one transaction). */
export async function createWorkspace(
  deps: HubDeps,
  actor: ParticipantActor,
  input: { slug: string; name: string; requestId?: string },
) {
  try {
    return await deps.db.$transaction(async (tx) => {
      const workspace = await tx.workspace.create({
        data: { id: newId('ws'), slug: input.slug, name: input.name },
      });
      await tx.membership.create({
        data: { workspaceId: workspace.id, participantId: actor.participantId, role: 'owner' },
      });
      await deps.audit.record(
        {
          workspaceId: workspace.id,
          actor,
          action: 'workspace.created',
          targetType: 'workspace',
          targetId: workspace.id,
          data: { slug: workspace.slug },
          requestId: input.requestId,
        },
        tx,
      );
      return workspace;
    });
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new AppError({
        status: 409,
        code: 'workspace_slug_taken',
        detail: `The slug '${input.slug}' is already used.`,
      });
    }
    throw error;
  }
}
