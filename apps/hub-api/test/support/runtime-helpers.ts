import { unwrap } from '@svc/contracts';
import type { TestHub, SeededMember } from './harness';

/** A valid registration body; `name` is unique per call. */
export function hostBody(overrides: Record<string, unknown> = {}) {
  return {
    name: `host-${Math.random().toString(36).slice(2, 10)}`,
    hostname: 'runtime-1.internal',
    workdir_root: '/srv/agents',
    console_public_base_url: 'https://console.example.test',
    relay_public_url: 'https://relay.example.test',
    ...overrides,
  };
}

/** Registers a host through the API as the given owner/admin; returns the host and its one-time relay token. */
export async function registerHost(t: TestHub, admin: SeededMember, overrides: Record<string, unknown> = {}) {
  return unwrap(
    await t.client({ token: admin.token }).POST('/api/v1/workspaces/{workspace}/runtime-hosts', {
      params: { path: { workspace: admin.workspace.slug } },
      body: hostBody(overrides) as never,
    }),
  );
}

/** Every audit row of the workspace, serialized, for secret-leak assertions. */
export async function auditText(t: TestHub, workspaceId: string): Promise<string> {
  const rows = await t.database.prisma.auditEvent.findMany({ where: { workspaceId } });
  return JSON.stringify(rows);
}

/** Fails when any of the secrets appears in the workspace's audit rows or anywhere in the hub's logs. */
export async function expectNoSecretsStored(t: TestHub, workspaceId: string, secrets: string[]) {
  const audit = await auditText(t, workspaceId);
  const logs = t.logs.join('\n');
  for (const secret of secrets) {
    expect(secret.length).toBeGreaterThan(8);
    expect(audit).not.toContain(secret);
    expect(logs).not.toContain(secret);
  }
}
