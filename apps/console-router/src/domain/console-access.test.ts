import { AppError } from '@svc/service-kit';
import { authorizeCaller } from './console-access';
import type { VerifiedCredential } from './console-access';
import { RouteTable } from './route-table';

const table = new RouteTable({
  host_id: 'rti_1',
  workspace: { id: 'wsp_1', slug: 'dev' },
  version: 'v1',
  generated_at: '2026-01-01T00:00:00.000Z',
  members: ['prt_member'],
  routes: [
    {
      agent_id: 'a1',
      agent_name: 'one',
      route: '/dev/agents/a1',
      serve_port: 4341,
      status: 'online',
      peers: ['a2'],
    },
  ],
});
const route = table.find('dev', 'a1')!;
const both = ['participant', 'agent'] as const;

function refusal(credential: VerifiedCredential, allowed: readonly ('participant' | 'agent')[] = both) {
  try {
    authorizeCaller(credential, route, table, allowed);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    const e = error as AppError;
    return { status: e.status, code: e.code, agent_id: e.extra.agent_id };
  }
  throw new Error('expected a refusal');
}

describe('who may use an agent route', () => {
  test('when a member, the agent itself, a peer or a ticket for this agent calls, then the caller is forwarded', () => {
    expect(authorizeCaller({ kind: 'participant', participantId: 'prt_member' }, route, table, both)).toEqual(
      {
        kind: 'participant',
        id: 'prt_member',
      },
    );
    expect(
      authorizeCaller({ kind: 'agent', agentId: 'a1', workspaceId: 'wsp_1' }, route, table, both),
    ).toEqual({
      kind: 'agent',
      id: 'a1',
    });
    expect(
      authorizeCaller({ kind: 'agent', agentId: 'a2', workspaceId: 'wsp_1' }, route, table, both).id,
    ).toBe('a2');
    expect(
      authorizeCaller(
        { kind: 'ticket', participantId: 'prt_member', workspaceId: 'wsp_1', agentId: 'a1' },
        route,
        table,
        ['participant'],
      ),
    ).toEqual({ kind: 'participant', id: 'prt_member' });
  });

  test.each([
    [{ kind: 'participant', participantId: 'prt_outsider' }, 'workspace_forbidden'],
    [{ kind: 'agent', agentId: 'a1', workspaceId: 'wsp_other' }, 'workspace_forbidden'],
    [{ kind: 'agent', agentId: 'a3', workspaceId: 'wsp_1' }, 'peer_not_allowed'],
    [
      { kind: 'ticket', participantId: 'prt_member', workspaceId: 'wsp_other', agentId: 'a1' },
      'workspace_forbidden',
    ],
    [
      { kind: 'ticket', participantId: 'prt_gone', workspaceId: 'wsp_1', agentId: 'a1' },
      'workspace_forbidden',
    ],
    [
      { kind: 'ticket', participantId: 'prt_member', workspaceId: 'wsp_1', agentId: 'a2' },
      'ticket_agent_mismatch',
    ],
  ] as [VerifiedCredential, string][])('when %j calls, then 403 %s naming the agent', (credential, code) => {
    expect(refusal(credential)).toEqual({ status: 403, code, agent_id: 'a1' });
  });

  test('when an allowed agent opens a participants-only operation, then 403 actor_not_allowed', () => {
    expect(refusal({ kind: 'agent', agentId: 'a1', workspaceId: 'wsp_1' }, ['participant'])).toEqual({
      status: 403,
      code: 'actor_not_allowed',
      agent_id: 'a1',
    });
  });
});
