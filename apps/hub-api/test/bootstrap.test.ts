import { startTestHub } from './support/harness';
import type { TestHub } from './support/harness';
import { bootstrapWorkspace } from '../src/use-cases/workspaces/bootstrap-workspace';

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
});
afterAll(() => t.close());

describe('workspace bootstrap', () => {
  const input = {
    workspaceSlug: 'boot',
    workspaceName: 'Boot',
    adminEmail: 'Admin@Example.test',
    adminPassword: 'first-password-123',
  };

  test('when run twice, then the same workspace and owner exist once, and the owner can sign in', async () => {
    const first = await bootstrapWorkspace(t.database.prisma, input);
    const second = await bootstrapWorkspace(t.database.prisma, input);
    expect(second.workspace.id).toBe(first.workspace.id);
    expect(second.participant.id).toBe(first.participant.id);
    expect(await t.database.prisma.membership.count({ where: { workspaceId: first.workspace.id } })).toBe(1);
    await expect(t.login('admin@example.test', input.adminPassword)).resolves.toMatch(/^eyJ/);
  });

  test('when the password changed, then the given one is set again', async () => {
    await bootstrapWorkspace(t.database.prisma, input);
    await bootstrapWorkspace(t.database.prisma, { ...input, adminPassword: 'second-password-456' });
    await expect(t.login('admin@example.test', 'second-password-456')).resolves.toMatch(/^eyJ/);
  });
});
