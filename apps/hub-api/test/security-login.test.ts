import { LOGIN_THROTTLE_DEFAULTS } from '../src/auth/login-throttle';
import { MAX_FAILED_LOGINS } from '../src/use-cases/auth/login';
import { startTestHub } from './support/harness';
import type { TestHub } from './support/harness';

/**
 * Password guessing against the running hub over HTTP, with the default limits (decisions 9 and 47): ten failures
 * lock an account for fifteen minutes, a burst evaluates at most ten attempts, the right password inside the lock
 * is refused, one client is throttled on its own, and the lock is one audit event that carries no secret.
 */

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
});
afterAll(() => t.close());
beforeEach(async () => {
  // Every test is one client (127.0.0.1) starting with the default per-client allowance.
  await t.resetLoginThrottle();
});

async function auditOf(participantId: string) {
  return t.database.prisma.auditEvent.findMany({
    where: { targetId: participantId },
    orderBy: { createdAt: 'asc' },
  });
}

function expectNoSecret(password: string, rows: unknown[]): void {
  const text = JSON.stringify(rows) + t.logs.join('');
  expect(text).not.toContain(password);
}

describe('sequential guessing', () => {
  test('when ten wrong passwords arrive one after another, then the eleventh attempt is locked even with the right password, with Retry-After and one audit event', async () => {
    const member = await t.seedMember();
    for (let i = 0; i < MAX_FAILED_LOGINS; i += 1) {
      expect(await t.loginAttempt(member.email, `guess-${i}`)).toMatchObject({
        status: 401,
        code: 'invalid_credentials',
      });
    }
    const right = await t.loginAttempt(member.email, member.password);
    expect(right).toMatchObject({ status: 429, code: 'login_locked', token: undefined });
    expect(Number(right.retryAfter)).toBeGreaterThan(14 * 60);
    expect(Number(right.retryAfter)).toBeLessThanOrEqual(15 * 60);
    // Still locked for a later try inside the window, from the same or any client.
    expect(await t.loginAttempt(member.email, member.password)).toMatchObject({
      status: 429,
      code: 'login_locked',
    });
    const events = await auditOf(member.participantId);
    expect(events.filter((e) => e.action === 'participant.login_locked')).toHaveLength(1);
    expect(events.filter((e) => e.action === 'credential.participant_token.issued')).toHaveLength(1); // the seed's sign-in
    expectNoSecret(member.password, events);
  });

  test('when the right password comes before the tenth failure, then it signs in and the account count starts again, while the client keeps its hourly count', async () => {
    const member = await t.seedMember();
    for (let i = 0; i < MAX_FAILED_LOGINS - 1; i += 1) await t.loginAttempt(member.email, `guess-${i}`);
    expect(await t.loginAttempt(member.email, member.password)).toMatchObject({ status: 200 });
    const row = () =>
      t.database.prisma.participant.findUniqueOrThrow({ where: { id: member.participantId } });
    expect(await row()).toMatchObject({ failedLoginCount: 0, lockedUntil: null });
    // This client has failed nine times on the account this hour: one more is evaluated, then it is throttled
    // (the account itself is not locked, so its owner elsewhere is not shut out).
    expect(await t.loginAttempt(member.email, 'one-more')).toMatchObject({
      status: 401,
      code: 'invalid_credentials',
    });
    expect(await t.loginAttempt(member.email, 'and-another')).toMatchObject({
      status: 429,
      code: 'login_throttled',
    });
    expect(await row()).toMatchObject({ failedLoginCount: 1, lockedUntil: null });
    expect((await auditOf(member.participantId)).some((e) => e.action === 'participant.login_locked')).toBe(
      false,
    );
  });
});

describe('parallel guessing', () => {
  test('when 60 wrong passwords and the right one arrive at once, then at most ten are evaluated, the account locks once and the right one does not get in', async () => {
    const member = await t.seedMember();
    const passwords = Array.from({ length: 60 }, (_, i) => `burst-${i}`);
    passwords.splice(45, 0, member.password);
    const answers = await Promise.all(passwords.map((p) => t.loginAttempt(member.email, p)));
    const evaluated = answers.filter((a) => a.code === 'invalid_credentials');
    expect(evaluated.length).toBeLessThanOrEqual(MAX_FAILED_LOGINS);
    expect(evaluated.length).toBeGreaterThan(0);
    expect(answers.filter((a) => a.status === 200)).toEqual([]);
    expect(answers.every((a) => a.status === 401 || a.status === 429)).toBe(true);
    expect(answers.filter((a) => a.status === 429).every((a) => Number(a.retryAfter) > 0)).toBe(true);
    expect(await t.loginAttempt(member.email, member.password)).toMatchObject({
      status: 429,
      code: 'login_locked',
    });
    const events = await auditOf(member.participantId);
    expect(events.filter((e) => e.action === 'participant.login_locked')).toHaveLength(1);
    expectNoSecret(member.password, events);
  });
});

describe('the per-client throttle', () => {
  test('when one client fails on 30 accounts, then its 31st attempt is 429 login_throttled before anything is checked, and the account it named is not charged', async () => {
    const member = await t.seedMember();
    for (let i = 0; i < LOGIN_THROTTLE_DEFAULTS.perClient; i += 1) {
      expect(await t.loginAttempt(`nobody-${i}@spray.test`, 'Winter2026!')).toMatchObject({ status: 401 });
    }
    const throttled = await t.loginAttempt(member.email, member.password);
    expect(throttled).toMatchObject({ status: 429, code: 'login_throttled', token: undefined });
    expect(Number(throttled.retryAfter)).toBeGreaterThan(0);
    const row = await t.database.prisma.participant.findUniqueOrThrow({
      where: { id: member.participantId },
    });
    expect(row).toMatchObject({ failedLoginCount: 0, lockedUntil: null });
    // The owner, from a client with its own allowance, still signs in.
    await t.resetLoginThrottle();
    expect(await t.loginAttempt(member.email, member.password)).toMatchObject({ status: 200 });
  });
});
