import { AppError } from '@svc/service-kit';
import { unknownAccountHash, verifyPassword } from '../../auth/passwords';
import type { HubDeps } from '../../deps';
import type { Participant } from '../../generated/prisma/client';

export const MAX_FAILED_LOGINS = 10;
export const LOCK_MINUTES = 15;

const invalid = () =>
  new AppError({ status: 401, code: 'invalid_credentials', detail: 'The email or the password is wrong.' });

export interface LoginResult {
  token: string;
  expiresAt: Date;
  participant: Participant;
}

/**
 * Password sign-in. Unknown email and wrong password answer alike and take alike long. Ten failures in a
 * row lock the account for fifteen minutes. Every issued token is an audit event.
 */
export async function login(
  deps: HubDeps,
  input: { email: string; password: string; requestId?: string },
): Promise<LoginResult> {
  const email = input.email.trim().toLowerCase();
  const participant = await deps.db.participant.findUnique({ where: { email } });
  if (!participant) {
    await verifyPassword(input.password, await unknownAccountHash);
    throw invalid();
  }
  const now = deps.now();
  if (participant.lockedUntil && participant.lockedUntil > now) {
    const seconds = Math.ceil((participant.lockedUntil.getTime() - now.getTime()) / 1000);
    throw new AppError({
      status: 429,
      code: 'login_locked',
      detail: `Too many failed sign-ins; try again in ${Math.ceil(seconds / 60)} minute(s).`,
      headers: { 'Retry-After': String(seconds) },
    });
  }
  if (!(await verifyPassword(input.password, participant.passwordHash))) {
    const updated = await deps.db.participant.update({
      where: { id: participant.id },
      data: { failedLoginCount: { increment: 1 } },
    });
    if (updated.failedLoginCount >= MAX_FAILED_LOGINS) {
      await deps.db.participant.update({
        where: { id: participant.id },
        data: { failedLoginCount: 0, lockedUntil: new Date(now.getTime() + LOCK_MINUTES * 60_000) },
      });
      await deps.audit.record({
        action: 'participant.login_locked',
        targetType: 'participant',
        targetId: participant.id,
        requestId: input.requestId,
      });
    }
    throw invalid();
  }
  if (participant.failedLoginCount > 0 || participant.lockedUntil) {
    await deps.db.participant.update({
      where: { id: participant.id },
      data: { failedLoginCount: 0, lockedUntil: null },
    });
  }
  const issued = deps.keys.issuer.issue({
    audience: 'participant',
    subject: participant.id,
    ttlSeconds: deps.settings.participantTokenTtlSeconds,
    claims: { email: participant.email },
  });
  await deps.audit.record({
    actor: {
      kind: 'participant',
      participantId: participant.id,
      email: participant.email,
      tokenId: issued.jti,
    },
    action: 'credential.participant_token.issued',
    targetType: 'participant',
    targetId: participant.id,
    data: { token_id: issued.jti, expires_at: issued.expiresAt.toISOString() },
    requestId: input.requestId,
  });
  return { token: issued.token, expiresAt: issued.expiresAt, participant };
}
