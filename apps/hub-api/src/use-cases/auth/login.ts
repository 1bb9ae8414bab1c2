import { AppError } from '@svc/service-kit';
import { unknownAccountHash, verifyPassword } from '../../auth/passwords';
import type { HubDeps } from '../../deps';
import type { Participant } from '../../generated/prisma/client';

export const MAX_FAILED_LOGINS = 10;
export const LOCK_MINUTES = 15;

const locked = (lockedUntil: Date, now: Date) => {
  const seconds = Math.max(1, Math.ceil((lockedUntil.getTime() - now.getTime()) / 1000));
  return new AppError({
    status: 429,
    code: 'login_locked',
    detail: `Too many failed sign-ins; try again in ${Math.ceil(seconds / 60)} minute(s).`,
    headers: { 'Retry-After': String(seconds) },
  });
};

const invalid = () =>
  new AppError({ status: 401, code: 'invalid_credentials', detail: 'The email or the password is wrong.' });

export interface LoginResult {
  token: string;
  expiresAt: Date;
  participant: Participant;
}

interface Reserved {
  failed_login_count: number;
  locked_until: Date | null;
}

/**
 * Takes one attempt of the account's allowance in one statement, before the password is checked: the count
 * rises as attempts arrive, so of any burst at most {@link MAX_FAILED_LOGINS} are evaluated. The attempt that
 * takes the last one sets the lock in the same statement (cleared again if its password is right). An expired
 * lock starts a new count. No row back means the account is locked (or its allowance is taken by attempts
 * still being checked).
 */
async function reserveAttempt(
  deps: HubDeps,
  participantId: string,
  now: Date,
): Promise<Reserved | undefined> {
  const lockUntil = new Date(now.getTime() + LOCK_MINUTES * 60_000);
  const rows = await deps.db.$queryRaw<Reserved[]>`
    UPDATE participants SET
      failed_login_count = CASE WHEN locked_until IS NOT NULL THEN 1 ELSE failed_login_count + 1 END,
      locked_until = CASE
        WHEN (CASE WHEN locked_until IS NOT NULL THEN 1 ELSE failed_login_count + 1 END) >= ${MAX_FAILED_LOGINS}
          THEN ${lockUntil}::timestamptz
        ELSE NULL
      END
    WHERE id = ${participantId}
      AND (locked_until IS NULL OR locked_until <= ${now}::timestamptz)
      AND (locked_until IS NOT NULL OR failed_login_count < ${MAX_FAILED_LOGINS})
    RETURNING failed_login_count, locked_until`;
  return rows[0];
}

/**
 * Password sign-in. Unknown email and wrong password answer alike and take alike long. Ten failures in a
 * row lock the account for fifteen minutes; attempts are counted atomically as they arrive, so a parallel
 * burst evaluates at most ten. A client over its failure limits (see {@link LoginThrottle}) gets 429
 * `login_throttled` before anything is checked. Every issued token is an audit event.
 */
export async function login(
  deps: HubDeps,
  input: { email: string; password: string; requestId?: string; client?: string },
): Promise<LoginResult> {
  const email = input.email.trim().toLowerCase();
  const client = input.client ?? 'unknown';
  const participant = await deps.db.participant.findUnique({ where: { email } });
  const now = deps.now();
  if (participant?.lockedUntil && participant.lockedUntil > now) throw locked(participant.lockedUntil, now);
  // Counted as the attempt arrives, on every replica alike, so a parallel burst of one client is cut at its limit.
  const wait = await deps.loginThrottle.admit(client, email);
  if (wait > 0) {
    throw new AppError({
      status: 429,
      code: 'login_throttled',
      detail: 'Too many failed sign-ins from this client; wait before trying again.',
      headers: { 'Retry-After': String(wait) },
    });
  }
  if (!participant) {
    await verifyPassword(input.password, await unknownAccountHash);
    throw invalid();
  }
  const reserved = await reserveAttempt(deps, participant.id, now);
  if (!reserved) {
    const current = await deps.db.participant.findUnique({
      where: { id: participant.id },
      select: { lockedUntil: true },
    });
    // The allowance is taken by attempts still being checked: answer as locked for the lock time.
    throw locked(current?.lockedUntil ?? new Date(now.getTime() + LOCK_MINUTES * 60_000), now);
  }
  if (!(await verifyPassword(input.password, participant.passwordHash))) {
    if (reserved.locked_until) {
      await deps.audit.record({
        action: 'participant.login_locked',
        targetType: 'participant',
        targetId: participant.id,
        requestId: input.requestId,
      });
    }
    throw invalid();
  }
  await deps.loginThrottle.succeeded(client, email);
  // A right password gives back the whole allowance and lifts a lock its own attempt set; a lock set meanwhile
  // by another attempt stays (this attempt was evaluated within the allowance, so it still succeeds).
  await deps.db.participant.updateMany({
    where: {
      id: participant.id,
      OR: [{ lockedUntil: null }, ...(reserved.locked_until ? [{ lockedUntil: reserved.locked_until }] : [])],
    },
    data: { failedLoginCount: 0, lockedUntil: null },
  });
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
