import { RouteTable } from '../../domain/route-table';
import type { HubRouteTable } from '../../domain/route-table';
import { stillAdmitted, withoutTicket } from './admit-console-request';
import type { Admission } from './admit-console-request';

describe('the path the agent sees', () => {
  test.each([
    ['/global/health', '/global/health'],
    ['/global/health?ticket=abc', '/global/health'],
    ['/terminal?cols=100&ticket=abc&rows=30', '/terminal?cols=100&rows=30'],
    ['/chat/messages?after=3&%74icket=abc&note=a%20b+c', '/chat/messages?after=3&note=a%20b+c'],
    ['/chat/stream?ticket=a&ticket=b', '/chat/stream'],
    ['/x?tickets=1&ticket', '/x?tickets=1'],
  ])('when %s is forwarded, then the agent sees %s', (rest, expected) => {
    expect(withoutTicket(rest)).toBe(expected);
  });
});

describe('an open WebSocket under a newer table', () => {
  const tableOf = (members: string[], routes: { id: string; port: number; peers?: string[] }[]) =>
    new RouteTable({
      host_id: 'rti_1',
      workspace: { id: 'wsp_1', slug: 'dev' },
      version: `v-${members.join()}-${routes.map((r) => `${r.id}:${r.port}:${r.peers?.join('+')}`).join()}`,
      generated_at: '2026-01-01T00:00:00.000Z',
      members,
      routes: routes.map((r) => ({
        agent_id: r.id,
        agent_name: r.id,
        route: `/dev/agents/${r.id}`,
        serve_port: r.port,
        status: 'online',
        peers: r.peers ?? [],
      })),
    } as HubRouteTable);
  const path = { workspace: 'dev', agentId: 'agt_1', rest: '/terminal' };
  const first = tableOf(['prt_1'], [{ id: 'agt_1', port: 4341, peers: ['agt_2'] }]);
  const admitted = (credential: Admission['credential']): Admission => ({
    route: first.find('dev', 'agt_1')!,
    upstreamPath: '/terminal',
    caller: { kind: 'participant', id: 'prt_1' },
    credential,
    allowed: ['participant', 'agent'],
  });
  const member = admitted({ kind: 'participant', participantId: 'prt_1' });
  const peer = admitted({ kind: 'agent', agentId: 'agt_2', workspaceId: 'wsp_1' });

  test('when nothing that matters changed, then the caller keeps it', () => {
    expect(
      stillAdmitted(
        tableOf(['prt_1', 'prt_2'], [{ id: 'agt_1', port: 4341, peers: ['agt_2'] }]),
        path,
        member,
      ),
    ).toBe(true);
    expect(stillAdmitted(first, path, peer)).toBe(true);
  });

  test.each([
    ['the member was removed', tableOf(['prt_2'], [{ id: 'agt_1', port: 4341 }]), member],
    ['the agent is no longer routed here', tableOf(['prt_1'], []), member],
    ['the agent serves on another port now', tableOf(['prt_1'], [{ id: 'agt_1', port: 4399 }]), member],
    ['the peer left the team', tableOf(['prt_1'], [{ id: 'agt_1', port: 4341, peers: [] }]), peer],
  ])('when %s, then the caller loses it', (_what, table, admission) => {
    expect(stillAdmitted(table, path, admission)).toBe(false);
  });
});
