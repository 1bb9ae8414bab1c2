import { startTestHub } from './support/harness';
import type { TestHub } from './support/harness';

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
});
afterAll(() => t.close());

/** The parts of an answer that do not name the person: status, code, detail and the membership's shape. */
async function add(token: string, workspace: string, body: Record<string, unknown>) {
  const res = await fetch(`${t.url}/api/v1/workspaces/${workspace}/members`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as {
    code?: string;
    detail?: string;
    data?: { role: string; participant: Record<string, unknown> };
  };
  return {
    status: res.status,
    code: json.code,
    detail: json.detail,
    role: json.data?.role,
    keys: json.data ? Object.keys(json.data.participant).sort() : undefined,
  };
}

describe('member invitation does not tell whether an email has an account', () => {
  test('when the same requests are sent for an email with an account and one without, then the answers match', async () => {
    const admin = await t.seedMember('admin');
    const holder = await t.seedMember('owner');
    const unknown = `nobody-${Date.now()}@example.test`;
    const ws = admin.workspace.slug;

    const withoutPassword = [
      await add(admin.token, ws, { email: holder.email, role: 'viewer' }),
      await add(admin.token, ws, { email: unknown, role: 'viewer' }),
    ];
    expect(withoutPassword[0]).toEqual(withoutPassword[1]);
    expect(withoutPassword[0]).toMatchObject({ status: 400, code: 'password_required' });

    const withPassword = [
      await add(admin.token, ws, { email: holder.email, role: 'viewer', password: 'initial-password-1' }),
      await add(admin.token, ws, { email: unknown, role: 'viewer', password: 'initial-password-1' }),
    ];
    expect(withPassword[0]).toEqual(withPassword[1]);
    expect(withPassword[0]).toMatchObject({ status: 201, role: 'viewer' });
  });

  test('when an existing account is added with a password, then it keeps its own password', async () => {
    const admin = await t.seedMember('admin');
    const holder = await t.seedMember('owner');
    const res = await add(admin.token, admin.workspace.slug, {
      email: holder.email,
      role: 'member',
      password: 'somebody-elses-choice',
    });
    expect(res.status).toBe(201);
    await expect(t.login(holder.email, holder.password)).resolves.toMatch(/^eyJ/);
    const refused = await fetch(`${t.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: holder.email, password: 'somebody-elses-choice' }),
    });
    expect(refused.status).toBe(401);
  });

  test('when a new email is added with a password, then the new account signs in with it', async () => {
    const admin = await t.seedMember('admin');
    const email = `fresh-${Date.now()}@example.test`;
    expect(
      (await add(admin.token, admin.workspace.slug, { email, role: 'member', password: 'a-fresh-password' }))
        .status,
    ).toBe(201);
    await expect(t.login(email, 'a-fresh-password')).resolves.toMatch(/^eyJ/);
  });

  test('when members are added, then the audit event does not record whether the account was new', async () => {
    const admin = await t.seedMember('admin');
    const holder = await t.seedMember('owner');
    await add(admin.token, admin.workspace.slug, {
      email: holder.email,
      role: 'viewer',
      password: 'initial-password-1',
    });
    const events = await t.database.prisma.auditEvent.findMany({
      where: { action: 'workspace.member_added', targetId: holder.participantId },
    });
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toEqual({ role: 'viewer' });
  });
});
