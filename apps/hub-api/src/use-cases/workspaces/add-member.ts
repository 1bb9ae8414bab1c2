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
 * Adds a participant to a workspace. An admin provisions a new account (with its initial password) when
 * nobody has the email yet; an existing account keeps its own password.
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
  const existing = await deps.db.participant.findUnique({ where: { email } });
  if (existing && input.password !== undefined) {
    throw new AppError({
      status: 400,
      code: 'password_not_allowed',
      detail: 'This person already has an account; leave out password.',
    });
  }
  if (!existing && input.password === undefined) {
    throw new AppError({
      status: 400,
      code: 'password_required',
      detail: 'No account has this email yet; give an initial password.',
    });
  }
  const passwordHash = input.password !== undefined ? await hashPassword(input.password) : undefined;
  try {
    return await deps.db.$transaction(async (tx) => {
      const participant =
        existing ??
        (await tx.participant.create({
          data: {
            id: newId('prt'),
            email,
            displayName: input.displayName ?? email.split('@')[0] ?? email,
            passwordHash: passwordHash as string,
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
          data: { role: input.role, account_created: !existing },
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
