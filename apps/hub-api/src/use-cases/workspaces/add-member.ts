import type { ParticipantActor } from '@svc/auth';
import { AppError, newId } from '@svc/service-kit';
import { hashPassword } from '../../auth/passwords';
import { isUniqueViolation } from '../../db';
import type { HubDeps } from '../../deps';
import type { WorkspaceRole } from '../../generated/prisma/client';
import { assertOwnerRules } from '../../domain/member-rules';

export interface AddMemberInput {
  email: string;
  role: WorkspaceRole;
  displayName?: string;
  password?: string;
  requestId?: string;
}

/**
 * Adds a participant to a workspace. The request always carries an initial password, and the answer (status,
 * code, timing) is the same whether the email has an account or not, so adding members cannot be used to
 * find out which emails have accounts: a new account is created with the password; an existing account keeps
 * its own and the one sent is dropped (it is hashed all the same, so both paths take alike long).
 */
export async function addMember(
  deps: HubDeps,
  actor: ParticipantActor,
  callerRole: WorkspaceRole | undefined,
  workspaceId: string,
  input: AddMemberInput,
) {
  assertOwnerRules(callerRole, undefined, input.role);
  const email = input.email.trim().toLowerCase();
  if (input.password === undefined) {
    throw new AppError({
      status: 400,
      code: 'password_required',
      detail: 'Give an initial password; it is used when the email has no account yet.',
    });
  }
  const existing = await deps.db.participant.findUnique({ where: { email } });
  const passwordHash = await hashPassword(input.password);
  try {
    return await deps.db.$transaction(async (tx) => {
      const participant =
        existing ??
        (await tx.participant.create({
          data: {
            id: newId('prt'),
            email,
            displayName: input.displayName ?? email.split('@')[0] ?? email,
            passwordHash,
          },
        }));
      const membership = await tx.membership.create({
        data: { workspaceId, participantId: participant.id, role: input.role },
        include: { participant: true },
      });
      await deps.audit.record(
        {
          workspaceId,
          actor,
          action: 'workspace.member_added',
          targetType: 'participant',
          targetId: participant.id,
          // Whether the account was new is not recorded here: workspace admins read these events.
          data: { role: input.role },
          requestId: input.requestId,
        },
        tx,
      );
      return membership;
    });
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new AppError({
        status: 409,
        code: 'already_member',
        detail: `${email} is already a member of this workspace.`,
      });
    }
    throw error;
  }
}
