import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../../deps';

/** The participant behind a token, with every workspace membership. */
export async function getMe(deps: HubDeps, participantId: string) {
  const participant = await deps.db.participant.findUnique({
    where: { id: participantId },
    include: { memberships: { include: { workspace: true }, orderBy: { createdAt: 'asc' } } },
  });
  if (!participant) {
    throw new AppError({
      status: 401,
      code: 'credential_invalid',
      detail: 'The account behind this token no longer exists.',
    });
  }
  return participant;
}

export type Me = Awaited<ReturnType<typeof getMe>>;
