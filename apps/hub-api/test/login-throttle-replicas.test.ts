import { startTestHub } from './support/harness';
import type { TestHub } from './support/harness';

/**
 * Two hub replicas on one database, and one client alternating between them (as behind a round-robin load
 * balancer): the per-client sign-in limits are the same as against one replica, for sequential and parallel
 * attempts alike, because the windows are counted in Postgres (decision 81).
 */
let a: TestHub;
let b: TestHub;
beforeAll(async () => {
  a = await startTestHub();
  b = await startTestHub({ replicaOf: a });
}, 60_000);
afterAll(async () => {
  await b.close();
  await a.close();
});

async function limits(perAccount: number, perClient: number): Promise<void> {
  await a.resetLoginThrottle({ windowMs: 3_600_000, perAccount, perClient });
  await b.resetLoginThrottle({ windowMs: 3_600_000, perAccount, perClient });
}

test('when one client alternates wrong passwords between two replicas, then it is throttled after the one limit, on both', async () => {
  await limits(4, 1_000);
  const member = await a.seedMember();
  const replicas = [a, b];
  for (let i = 0; i < 4; i += 1) {
    expect(await replicas[i % 2]!.loginAttempt(member.email, `wrong-${i}`)).toMatchObject({
      status: 401,
      code: 'invalid_credentials',
    });
  }
  for (const replica of replicas) {
    const refused = await replica.loginAttempt(member.email, member.password);
    expect(refused).toMatchObject({ status: 429, code: 'login_throttled' });
    expect(Number(refused.retryAfter)).toBeGreaterThan(3_500);
  }
});

test('when one client sends a burst split across two replicas, then no more attempts are evaluated than its limit', async () => {
  await limits(1_000, 6);
  const members = await Promise.all([a.seedMember(), a.seedMember()]);
  const results = await Promise.all(
    Array.from({ length: 30 }, (_, i) => [a, b][i % 2]!.loginAttempt(members[i % 2]!.email, `wrong-${i}`)),
  );
  expect(results.filter((r) => r.code === 'invalid_credentials')).toHaveLength(6);
  expect(results.filter((r) => r.code === 'login_throttled')).toHaveLength(24);
  expect(results.every((r) => r.status === 401 || r.status === 429)).toBe(true);
});

test('when the right password follows failures on the other replica, then it gives its attempt back on both', async () => {
  await limits(3, 1_000);
  const member = await a.seedMember();
  expect((await a.loginAttempt(member.email, 'wrong-1')).status).toBe(401);
  expect((await a.loginAttempt(member.email, 'wrong-2')).status).toBe(401);
  expect((await b.loginAttempt(member.email, member.password)).status).toBe(200);
  // Two failures are counted; the success gave its own attempt back, so one more failure is allowed.
  expect((await b.loginAttempt(member.email, 'wrong-3')).status).toBe(401);
  expect(await a.loginAttempt(member.email, 'wrong-4')).toMatchObject({
    status: 429,
    code: 'login_throttled',
  });
});
