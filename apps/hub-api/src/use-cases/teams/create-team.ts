import type { Actor } from '@svc/auth';
import { AppError, newId } from '@svc/service-kit';
import { isUniqueViolation } from '../../db';
import type { HubDeps } from '../../deps';

/** Creates a team; its name is unique within the workspace. */
export async function createTeam(
  deps: HubDeps,
  actor: Actor,
  workspaceId: string,
  input: { name: string; requestId?: string },
) {
  const name = input.name.trim();
  try {
    return await deps.db.$transaction(async (tx) => {
      const team = await tx.team.create({ data: { id: newId('team'), workspaceId, name } });
      await deps.audit.record(
        {
          workspaceId,
          actor,
          action: 'team.created',
          targetType: 'team',
          targetId: team.id,
          data: { name: team.name },
          requestId: input.requestId,
        },
        tx,
      );
      return team;
    });
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new AppError({
        status: 409,
        code: 'team_name_taken',
        detail: `A team named '${name}' already exists in this workspace.`,
      });
    }
    throw error;
  }
}
