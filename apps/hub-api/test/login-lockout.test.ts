import { LoginThrottle } from '../src/auth/login-throttle';
import { login, MAX_FAILED_LOGINS } from '../src/use-cases/auth/login';
import { startTestHub } from './support/harness';
import type { TestHub } from './support/harness';

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
});
afterAll(() => t.close());

/** Replaces the hub's per-client limits for one test (the handlers read them from the shared deps). */
function limits(perAccount: number, perClient: number): Promise<void> {
  return t.resetLoginThrottle({ windowMs: 3_600_000, perAccount, perClient });
}

async function lockState(participantId: string) {
  return t.database.prisma.participant.findUniqueOrThrow({
    where: { id: participantId },
    select: { failedLoginCount: true, lockedUntil: true },
  });
}

describe('login lockout under concurrency', () => {
  test('when 100 wrong sign-ins arrive at once from many clients, then at most 10 are evaluated and the account locks', async () => {
    const member = await t.seedMember();
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        login(t.hub.deps, { email: member.email, password: `wrong-${i}`, client: `10.0.${i}.1` }).then(
          () => 'signed-in',
          (error: { code?: string }) => error.code,
        ),
      ),
    );
    expect(results.filter((r) => r === 'invalid_credentials').length).toBeLessThanOrEqual(MAX_FAILED_LOGINS);
    expect(results.filter((r) => r === 'invalid_credentials').length).toBeGreaterThan(0);
    expect(results.filter((r) => r === 'login_locked').length).toBeGreaterThanOrEqual(90);
    expect(results).not.toContain('signed-in');
    expect((await lockState(member.participantId)).lockedUntil).not.toBeNull();
    // The right password from yet another client does not get in once locked.
    await expect(
      login(t.hub.deps, { email: member.email, password: member.password, client: '10.9.9.9' }),
    ).rejects.toMatchObject({ code: 'login_locked' });
    const events = await t.database.prisma.auditEvent.findMany({
      where: { action: 'participant.login_locked', targetId: member.participantId },
    });
    expect(events).toHaveLength(1);
  });

  test('when one client sends 100 wrong sign-ins at once with the default limits, then at most 10 are evaluated and the right password is refused after', async () => {
    await t.resetLoginThrottle();
    const member = await t.seedMember();
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => t.loginAttempt(member.email, `wrong-${i}`)),
    );
    expect(results.filter((r) => r.code === 'invalid_credentials').length).toBeLessThanOrEqual(
      MAX_FAILED_LOGINS,
    );
    expect(results.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(90);
    expect(results.every((r) => r.status === 401 || (r.status === 429 && Number(r.retryAfter) > 0))).toBe(
      true,
    );
    const right = await t.loginAttempt(member.email, member.password);
    expect(right.status).toBe(429);
    expect(['login_locked', 'login_throttled']).toContain(right.code);
  });

  test('when a burst of wrong sign-ins holds the right password late in it, then the right one does not succeed', async () => {
    await limits(1_000, 1_000);
    const member = await t.seedMember();
    const burst = Array.from({ length: 60 }, (_, i) =>
      t.loginAttempt(member.email, i === 45 ? member.password : `wrong-${i}`),
    );
    const results = await Promise.all(burst);
    expect(results.filter((r) => r.code === 'invalid_credentials').length).toBeLessThanOrEqual(10);
    expect(results.filter((r) => r.status === 200).length).toBeLessThanOrEqual(1);
    const right = results[45]!;
    // Attempts are counted as they arrive: the 46th attempt found the allowance taken.
    expect(right.status).toBe(429);
    expect(right.code).toBe('login_locked');
    expect(Number(right.retryAfter)).toBeGreaterThan(0);
  });

  test('when one client keeps failing on one account, then it is throttled with Retry-After and the owner still signs in', async () => {
    await limits(3, 1_000);
    const member = await t.seedMember();
    for (let i = 0; i < 3; i += 1)
      expect((await t.loginAttempt(member.email, 'wrong')).code).toBe('invalid_credentials');
    const throttled = await t.loginAttempt(member.email, 'wrong');
    expect(throttled.status).toBe(429);
    expect(throttled.code).toBe('login_throttled');
    expect(Number(throttled.retryAfter)).toBeGreaterThan(0);
    // The throttled attempts did not count against the account: it is not locked for its owner elsewhere.
    expect(await lockState(member.participantId)).toMatchObject({ failedLoginCount: 3, lockedUntil: null });
    await expect(
      login(t.hub.deps, { email: member.email, password: member.password, client: '10.1.1.1' }),
    ).resolves.toMatchObject({ participant: { id: member.participantId } });
  });

  test('when one client sprays passwords over many accounts, then it gets 429 login_throttled with Retry-After', async () => {
    await limits(10, 20);
    const results = [];
    for (let i = 0; i < 30; i += 1)
      results.push(await t.loginAttempt(`nobody-${i}@spray.test`, 'Winter2026!'));
    expect(results.slice(0, 20).every((r) => r.code === 'invalid_credentials')).toBe(true);
    expect(results.slice(20).every((r) => r.status === 429 && r.code === 'login_throttled')).toBe(true);
    expect(Number(results[25]!.retryAfter)).toBeGreaterThan(0);
  });

  test('when a lock expires, then the count starts again from one', async () => {
    await limits(1_000, 1_000);
    const member = await t.seedMember();
    await t.database.prisma.participant.update({
      where: { id: member.participantId },
      data: { failedLoginCount: MAX_FAILED_LOGINS, lockedUntil: new Date(Date.now() - 1_000) },
    });
    expect((await t.loginAttempt(member.email, 'wrong')).code).toBe('invalid_credentials');
    expect(await lockState(member.participantId)).toMatchObject({ failedLoginCount: 1, lockedUntil: null });
    expect((await t.loginAttempt(member.email, member.password)).status).toBe(200);
    expect(await lockState(member.participantId)).toMatchObject({ failedLoginCount: 0, lockedUntil: null });
  });
});

describe('per-client limits behind a proxy', () => {
  let proxied: TestHub;
  beforeAll(async () => {
    proxied = await startTestHub({ settings: { HUB_TRUST_PROXY: 'loopback' } });
    await proxied.resetLoginThrottle({ windowMs: 3_600_000, perAccount: 2, perClient: 1_000 });
  });
  afterAll(() => proxied.close());

  const from = async (client: string, email: string, password: string) => {
    const res = await fetch(`${proxied.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': client },
      body: JSON.stringify({ email, password }),
    });
    return { status: res.status, code: ((await res.json()) as { code?: string }).code };
  };

  test('when HUB_TRUST_PROXY is set, then each forwarded client has its own limit and the owner is not throttled by another', async () => {
    const member = await proxied.seedMember();
    expect((await from('203.0.113.7', member.email, 'wrong')).code).toBe('invalid_credentials');
    expect((await from('203.0.113.7', member.email, 'wrong')).code).toBe('invalid_credentials');
    expect(await from('203.0.113.7', member.email, 'wrong')).toEqual({
      status: 429,
      code: 'login_throttled',
    });
    expect((await from('198.51.100.20', member.email, member.password)).status).toBe(200);
  });
});

describe('LoginThrottle windows', () => {
  test('when the window has passed, then the client may try again; a right password gives its attempt back', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const start = now;
    const throttle = new LoginThrottle({
      windowMs: 60_000,
      perAccount: 2,
      perClient: 3,
      now: () => now,
      db: t.database.prisma,
    });
    const client = `c-${Math.random()}`;
    expect(await throttle.admit(client, 'a@x')).toBe(0);
    expect(await throttle.admit(client, 'a@x')).toBe(0);
    expect(await throttle.admit(client, 'a@x')).toBe(60);
    // Another account from the same client is still open, up to the client's overall limit.
    expect(await throttle.admit(client, 'b@x')).toBe(0);
    expect(await throttle.admit(client, 'b@x')).toBe(60);
    await throttle.succeeded(client, 'b@x');
    expect(await throttle.admit(client, 'b@x')).toBe(0);
    now = start + 30_000;
    expect(await throttle.admit(client, 'a@x')).toBe(30);
    now = start + 60_000;
    expect(await throttle.admit(client, 'a@x')).toBe(0);
    // The table names neither the client nor the account.
    const keys = await t.database.prisma.$queryRaw<{ key: string }[]>`SELECT key FROM login_throttle_windows`;
    expect(JSON.stringify(keys)).not.toContain(client);
    expect(JSON.stringify(keys)).not.toContain('a@x');
  });
});
