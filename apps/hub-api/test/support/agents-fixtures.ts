import { randomBytes } from 'node:crypto';
import { unwrap } from '@svc/contracts';
import type { HubApi } from '@svc/contracts';
import type { SeededMember, TestHub } from './harness';

type RegisterBody = HubApi.components['schemas']['AgentRegisterRequest'];
export type AgentRecord = HubApi.components['schemas']['Agent'];

/** A unique, valid agent name. */
export const agentName = (prefix = 'agent') => `${prefix}-${randomBytes(4).toString('hex')}`;

/** Registers an agent through the API (default: a workdir agent on the given host). */
export async function registerAgent(
  t: TestHub,
  caller: { token?: string; apiKey?: string },
  workspace: string,
  body: Partial<RegisterBody> & { runtime_instance_id: string },
): Promise<AgentRecord> {
  return unwrap(
    await t.client(caller).POST('/api/v1/workspaces/{workspace}/agents', {
      params: { path: { workspace } },
      body: {
        name: agentName(),
        ...(body.project_code === undefined
          ? { workdir: `/srv/agents/${randomBytes(3).toString('hex')}` }
          : {}),
        ...body,
      },
    }),
  );
}

/** Creates a team through the API. */
export async function createTeam(
  t: TestHub,
  member: SeededMember,
  name = `team-${randomBytes(3).toString('hex')}`,
) {
  return unwrap(
    await t.client({ token: member.token }).POST('/api/v1/workspaces/{workspace}/teams', {
      params: { path: { workspace: member.workspace.slug } },
      body: { name },
    }),
  );
}

/** Creates a project through the API. */
export async function createProject(
  t: TestHub,
  member: SeededMember,
  code = `P${randomBytes(3).toString('hex')}`,
) {
  return unwrap(
    await t.client({ token: member.token }).POST('/api/v1/workspaces/{workspace}/projects', {
      params: { path: { workspace: member.workspace.slug } },
      body: { code, name: `Project ${code}` },
    }),
  );
}

/** Audit rows of one action on one target, oldest first. */
export function auditRows(t: TestHub, action: string, targetId?: string) {
  return t.database.prisma.auditEvent.findMany({
    where: { action, ...(targetId ? { targetId } : {}) },
    orderBy: { createdAt: 'asc' },
  });
}
