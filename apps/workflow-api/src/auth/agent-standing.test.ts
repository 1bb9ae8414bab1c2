import { AGENT_TOKEN_MAX_LIFETIME_MS, createAgentStanding } from './agent-standing';
import type { AgentStandingCheck } from './agent-standing';

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

function hub(answers: Record<string, 'active' | 'refused'> = {}) {
  const calls: string[] = [];
  const check: AgentStandingCheck = async (token) => {
    calls.push(token);
    return answers[token] ?? 'active';
  };
  return { calls, check, answers };
}

describe('agent standing', () => {
  test('when an agent is admitted, then the hub is asked once per recheck time, not per request', async () => {
    const c = clock();
    const h = hub();
    const standing = createAgentStanding({ check: h.check, ttlMs: 30_000, now: c.now });
    for (let i = 0; i < 5; i += 1)
      expect(await standing.admits('agt_a', 'tok-a', c.now() + 60_000)).toBe(true);
    expect(h.calls).toHaveLength(1);
    c.advance(29_999);
    expect(await standing.admits('agt_a', 'tok-a', c.now() + 60_000)).toBe(true);
    expect(h.calls).toHaveLength(1);
    c.advance(1);
    expect(await standing.admits('agt_a', 'tok-a', c.now() + 60_000)).toBe(true);
    expect(h.calls).toHaveLength(2);
  });

  test('when concurrent requests carry one token, then they share one hub call', async () => {
    const h = hub();
    const standing = createAgentStanding({ check: h.check });
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => standing.admits('agt_a', 'tok', Date.now() + 60_000)),
    );
    expect(answers.every(Boolean)).toBe(true);
    expect(h.calls).toHaveLength(1);
  });

  test('when a revocation notice arrives, then the agent is refused at once without asking the hub, until the tokens expire', async () => {
    const c = clock();
    const h = hub();
    const standing = createAgentStanding({ check: h.check, now: c.now });
    expect(await standing.admits('agt_a', 'tok', c.now() + 60_000)).toBe(true);
    standing.revoke('agt_a', c.now() + 3_600_000);
    expect(await standing.admits('agt_a', 'tok', c.now() + 60_000)).toBe(false);
    expect(await standing.admits('agt_a', 'another-token', c.now() + 60_000)).toBe(false);
    expect(await standing.admits('agt_b', 'tok-b', c.now() + 60_000)).toBe(true);
    expect(standing.deniedCount).toBe(1);
    c.advance(3_600_000);
    expect(standing.deniedCount).toBe(0);
  });

  test('when a notice names a far expiry, then the entry is kept no longer than the longest token lifetime', () => {
    const c = clock();
    const standing = createAgentStanding({ now: c.now });
    standing.revoke('agt_a', c.now() + 10 * AGENT_TOKEN_MAX_LIFETIME_MS);
    c.advance(AGENT_TOKEN_MAX_LIFETIME_MS - 1);
    expect(standing.deniedCount).toBe(1);
    c.advance(1);
    expect(standing.deniedCount).toBe(0);
  });

  test('when a notice arrives while the hub is being asked, then the notice wins over its answer', async () => {
    let release!: (answer: 'active') => void;
    const standing = createAgentStanding({
      check: () => new Promise<'active' | 'refused'>((resolve) => (release = resolve)),
    });
    const pending = standing.admits('agt_a', 'tok', Date.now() + 60_000);
    standing.revoke('agt_a', Date.now() + 60_000);
    release('active');
    expect(await pending).toBe(false);
  });

  test('when the hub refuses a token, then that token is refused until it expires, and another token of the agent is asked about afresh', async () => {
    const c = clock();
    const h = hub({ old: 'refused' });
    const standing = createAgentStanding({ check: h.check, now: c.now });
    expect(await standing.admits('agt_a', 'old', c.now() + 5_000)).toBe(false);
    expect(await standing.admits('agt_a', 'old', c.now() + 5_000)).toBe(false);
    expect(h.calls).toEqual(['old']);
    expect(await standing.admits('agt_a', 'new', c.now() + 60_000)).toBe(true);
    expect(h.calls).toEqual(['old', 'new']);
    expect(standing.deniedCount).toBe(0);
  });

  test('when the deny set is full, then the entry expiring first goes and the rest stay', async () => {
    const c = clock();
    const standing = createAgentStanding({ now: c.now, maxDenied: 3 });
    standing.revoke('agt_1', c.now() + 3_000);
    standing.revoke('agt_2', c.now() + 1_000);
    standing.revoke('agt_3', c.now() + 2_000);
    standing.revoke('agt_4', c.now() + 4_000);
    expect(standing.deniedCount).toBe(3);
    expect(await standing.admits('agt_2', 't', c.now() + 1)).toBe(true);
    for (const id of ['agt_1', 'agt_3', 'agt_4'])
      expect(await standing.admits(id, 't', c.now() + 1)).toBe(false);
  });

  test('when the hub cannot be asked, then the error reaches the caller (a 503, never an admission)', async () => {
    const standing = createAgentStanding({
      check: async () => {
        throw Object.assign(new Error('down'), { status: 503 });
      },
    });
    await expect(standing.admits('agt_a', 'tok', Date.now() + 60_000)).rejects.toMatchObject({ status: 503 });
  });
});
