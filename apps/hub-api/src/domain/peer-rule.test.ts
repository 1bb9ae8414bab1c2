import { peersByAgent } from './peer-rule';

const agent = (id: string, teamIds: string[] = [], projectId: string | null = null) => ({
  id,
  projectId,
  teamIds,
});

describe('peersByAgent', () => {
  test('when agents share a team, then each is the other one’s peer and never its own', () => {
    const peers = peersByAgent([agent('a', ['t1']), agent('b', ['t1']), agent('c', ['t2'])], []);
    expect(Object.fromEntries(peers)).toEqual({ a: ['b'], b: ['a'], c: [] });
  });

  test('when a team is actively assigned to a project, then its agents and the project’s own agents are peers', () => {
    const peers = peersByAgent(
      [agent('a', ['t1']), agent('b', [], 'p1'), agent('c', ['t2']), agent('d', [], 'p2')],
      [
        { teamId: 't1', projectId: 'p1' },
        { teamId: 't2', projectId: 'p1' },
      ],
    );
    expect(Object.fromEntries(peers)).toEqual({ a: ['b', 'c'], b: ['a', 'c'], c: ['a', 'b'], d: [] });
  });

  test('when two agents name the same project, then they are peers without any team', () => {
    const peers = peersByAgent([agent('b', [], 'p1'), agent('a', [], 'p1')], []);
    expect(peers.get('b')).toEqual(['a']);
  });
});
