import { RouteTable, parseAgentPath } from './route-table';

const table = new RouteTable({
  host_id: 'rti_1',
  workspace: { id: 'wsp_1', slug: 'dev' },
  version: 'v1',
  generated_at: '2026-01-01T00:00:00.000Z',
  members: ['prt_1'],
  routes: [
    {
      agent_id: 'a1',
      agent_name: 'one',
      route: '/dev/agents/a1',
      serve_port: 4341,
      status: 'online',
      peers: [],
    },
    {
      agent_id: 'a1x',
      agent_name: 'other',
      route: '/dev/agents/a1x',
      serve_port: 4342,
      status: 'online',
      peers: ['a1'],
    },
  ],
});

describe('agent paths', () => {
  test.each([
    ['/dev/agents/a1', { workspace: 'dev', agentId: 'a1', rest: '/' }],
    ['/dev/agents/a1/', { workspace: 'dev', agentId: 'a1', rest: '/' }],
    ['/dev/agents/a1?ticket=t', { workspace: 'dev', agentId: 'a1', rest: '/?ticket=t' }],
    ['/dev/agents/a1/global/health?x=1', { workspace: 'dev', agentId: 'a1', rest: '/global/health?x=1' }],
    ['/dev/agents/a1x/terminal', { workspace: 'dev', agentId: 'a1x', rest: '/terminal' }],
  ])('when %s is asked for, then it splits on whole segments', (url, expected) => {
    expect(parseAgentPath(url)).toEqual(expected);
  });

  test.each([
    '/healthz',
    '/dev/agents',
    '/dev/agents/',
    '/dev/agent/a1',
    '//agents/a1',
    '/dev/agents/%2e%2e/x',
    '/dev/agents/%E0%A4%A',
  ])('when %s is asked for, then it is no agent path', (url) => {
    expect(parseAgentPath(url)).toBeUndefined();
  });
});

describe('the route table', () => {
  test('when an agent is looked up by slug or id, then its route is found; a prefix of another id is not', () => {
    expect(table.find('dev', 'a1')?.servePort).toBe(4341);
    expect(table.find('wsp_1', 'a1x')?.servePort).toBe(4342);
    expect(table.find('dev', 'a')).toBeUndefined();
    expect(table.find('other', 'a1')).toBeUndefined();
  });

  test('when members and peers are read, then they are the hub table’s', () => {
    expect(table.isMember('prt_1')).toBe(true);
    expect(table.isMember('prt_2')).toBe(false);
    expect(table.find('dev', 'a1x')?.peers.has('a1')).toBe(true);
  });
});
