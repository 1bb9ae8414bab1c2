import type { Actor } from '@svc/auth';
import { AppError, newId } from '@svc/service-kit';
import { isUniqueViolation } from '../../db';
import type { HubDeps } from '../../deps';

/** Creates a project; its code is unique within the workspace. */
export async function createProject(
  deps: HubDeps,
  actor: Actor,
  workspaceId: string,
  input: { code: string; name: string; requestId?: string },
) {
  try {
    return await deps.db.$transaction(async (tx) => {
      const project = await tx.project.create({
        data: { id: newId('prj'), workspaceId, code: input.code, name: input.name },
      });
      await deps.audit.record(
        {
          workspaceId,
          actor,
          action: 'project.created',
          targetType: 'project',
          targetId: project.id,
          data: { code: project.code },
          requestId: input.requestId,
        },
        tx,
      );
      return project;
    });
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new AppError({
        status: 409,
        code: 'project_code_taken',
        detail: `A project with code '${input.code}' already exists in this workspace.`,
      });
    }
    throw error;
  }
}
