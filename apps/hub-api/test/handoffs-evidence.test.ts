import { randomBytes } from 'node:crypto';
import { generateOpaqueToken } from '@svc/auth';
import { unwrap } from '@svc/contracts';
import { newId } from '@svc/service-kit';
import { createKey, SERVICE_TOKEN, startTestHub } from './support/harness';
import type { SeededAgent, SeededMember, TestHub } from './support/harness';

/** Evidence is stored redacted: no token, key or credential an agent pastes ever reaches the database. */
let t: TestHub;
let member: SeededMember;
let agent: SeededAgent;

beforeAll(async () => {
  // A larger body limit than the evidence limit, so the hub's own 64 KiB check is what answers.
  t = await startTestHub({ settings: { HUB_BODY_LIMIT: '256kb' } });
  member = await t.seedMember('member');
  agent = await t.seedAgent(member.workspace.id);
}, 30_000);
afterAll(() => t.close());

async function claimedHandoff(): Promise<string> {
  const handoff = unwrap(
    await t.client({ token: member.token }).POST('/api/v1/workspaces/{workspace}/handoffs', {
      params: { path: { workspace: member.workspace.slug } },
      body: { title: `evidence ${newId('x')}`, assignee_agent_id: agent.id },
    }),
  );
  unwrap(
    await t
      .client({ token: agent.token })
      .POST('/api/v1/agents/me/handoffs/{handoffId}/claim', { params: { path: { handoffId: handoff.id } } }),
  );
  return handoff.id;
}

function submit(handoffId: string, content: unknown, kind = 'debug_log') {
  return t.client({ token: agent.token }).POST('/api/v1/agents/me/handoffs/{handoffId}/evidence', {
    params: { path: { handoffId } },
    body: { kind, content },
  });
}

/** Everything stored about a handoff's evidence and its audit, as text. */
async function storedText(handoffId: string): Promise<string> {
  const rows = await t.database.prisma.$queryRaw<{ content: unknown }[]>`
    SELECT content FROM handoff_evidence WHERE handoff_id = ${handoffId}`;
  const audit = await t.database.prisma.auditEvent.findMany({ where: { targetId: handoffId } });
  return JSON.stringify({ rows, audit });
}

const secrets = {
  'a workspace API key': async () => (await createKey(t, await ownerOf(), { preset: 'read-only' })).key,
  'a JWT (the agent token itself)': async () => agent.token,
  'a relay token': async () => generateOpaqueToken('rly'),
  'a GitHub PAT': async () =>
    `ghp_${randomBytes(27).toString('base64url').replace(/[-_]/g, 'a').slice(0, 36)}`,
  'an sk- provider key': async () => `sk-proj-${randomBytes(30).toString('base64url')}`,
  'a service token': async () => SERVICE_TOKEN,
};

let owner: SeededMember | undefined;
async function ownerOf(): Promise<SeededMember> {
  owner ??= await t.seedMember('owner', member.workspace);
  return owner;
}

describe('evidence redaction', () => {
  test.each(Object.keys(secrets))(
    'when evidence carries %s inside free text and nested values, then neither the response nor the database nor the audit holds it',
    async (name) => {
      const secret = await secrets[name as keyof typeof secrets]();
      const handoffId = await claimedHandoff();
      const res = await submit(handoffId, {
        summary: `deploy failed; used credential ${secret} against the API`,
        steps: [{ command: `curl -H "x-custom: ${secret}" https://api.example.test` }, secret],
        env: { SOME_VALUE: secret },
      });
      expect(res.response.status).toBe(201);
      const stored = JSON.stringify(res.data);
      expect(stored).not.toContain(secret);
      expect(stored).toContain('deploy failed; used credential');
      expect(await storedText(handoffId)).not.toContain(secret);

      const detail = await t
        .client({ token: member.token })
        .GET('/api/v1/handoffs/{handoffId}', { params: { path: { handoffId } } });
      expect(JSON.stringify(detail.data)).not.toContain(secret);
      expect(t.logs.join('\n')).not.toContain(secret);
    },
  );

  test('when evidence has fields named like secrets, then their values are replaced whatever they look like', async () => {
    const handoffId = await claimedHandoff();
    const res = await submit(handoffId, {
      password: 'hunter2-but-longer',
      nested: { api_key: 'plain-looking', token: 'abc', relay_token: 'whatever', keep: 'visible' },
    });
    expect(res.data?.data.content).toEqual({
      password: '[REDACTED]',
      nested: { api_key: '[REDACTED]', token: '[REDACTED]', relay_token: '[REDACTED]', keep: 'visible' },
    });
    const text = await storedText(handoffId);
    expect(text).not.toContain('hunter2-but-longer');
    expect(text).not.toContain('plain-looking');
  });

  test('when evidence is a bare string, a number, null or an array, then it is stored as given (redacted)', async () => {
    const handoffId = await claimedHandoff();
    const pat = `ghp_${'a'.repeat(36)}`;
    for (const [content, expected] of [
      [`token ${pat}`, 'token ghp_[REDACTED]'],
      [42, 42],
      [null, null],
      [
        ['x', { y: 1 }],
        ['x', { y: 1 }],
      ],
    ] as const) {
      const res = await submit(handoffId, content);
      expect(res.response.status).toBe(201);
      expect(res.data?.data.content).toEqual(expected);
    }
  });

  test('when a completion summary carries a secret, then it is stored redacted as well', async () => {
    const handoffId = await claimedHandoff();
    const key = `sk-${randomBytes(24).toString('hex')}`;
    unwrap(
      await t.client({ token: agent.token }).POST('/api/v1/agents/me/handoffs/{handoffId}/complete', {
        params: { path: { handoffId } },
        body: { summary: `done; rotated ${key}` },
      }),
    );
    const text = await storedText(handoffId);
    expect(text).not.toContain(key);
    expect(text).toContain('done; rotated sk-[REDACTED]');
  });
});

describe('evidence limits', () => {
  test('when the content is larger than 64 KiB, then 413 evidence_too_large and nothing is stored', async () => {
    const handoffId = await claimedHandoff();
    const res = await submit(handoffId, { blob: 'x'.repeat(64 * 1024) });
    expect({ status: res.response.status, code: res.error?.code }).toEqual({
      status: 413,
      code: 'evidence_too_large',
    });
    const fits = await submit(handoffId, { blob: 'x'.repeat(60 * 1024) });
    expect(fits.response.status).toBe(201);
    expect(await t.database.prisma.handoffEvidence.count({ where: { handoffId } })).toBe(1);
  });

  test('when the content nests deeper than 32 levels, then 400 evidence_too_deep', async () => {
    const handoffId = await claimedHandoff();
    const nest = (depth: number): unknown => (depth === 0 ? 'leaf' : { a: nest(depth - 1) });
    const deep = await submit(handoffId, nest(33));
    expect({ status: deep.response.status, code: deep.error?.code }).toEqual({
      status: 400,
      code: 'evidence_too_deep',
    });
    const ok = await submit(handoffId, nest(32));
    expect(ok.response.status).toBe(201);
    expect(JSON.stringify(ok.data?.data.content)).toContain('leaf');
  });

  test('when the kind is malformed or the content is missing, then 400 names the field', async () => {
    const handoffId = await claimedHandoff();
    const badKind = await submit(handoffId, 'x', 'Not A Kind');
    expect(badKind.error?.errors?.[0]?.location).toBe('body/kind');
    const missing = await t
      .client({ token: agent.token })
      .POST('/api/v1/agents/me/handoffs/{handoffId}/evidence', {
        params: { path: { handoffId } },
        body: { kind: 'log' } as never,
      });
    expect(missing.error?.errors?.[0]?.location).toBe('body/content');
  });
});
