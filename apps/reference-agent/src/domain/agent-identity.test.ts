import { agentIdentityFromToken } from './agent-identity';

const tokenWith = (claims: Record<string, unknown>) =>
  `eyJhbGciOiJFUzI1NiJ9.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2lnbmF0dXJl`;

describe('agentIdentityFromToken', () => {
  test('when the token carries the hub claims, then the agent id, workspace and name are read from it', () => {
    expect(
      agentIdentityFromToken(tokenWith({ sub: 'agt_1', workspace_id: 'wsp_1', agent_name: 'scribe' })),
    ).toEqual({
      agentId: 'agt_1',
      workspaceId: 'wsp_1',
      name: 'scribe',
    });
    expect(agentIdentityFromToken(tokenWith({ sub: 'agt_1', workspace_id: 'wsp_1' })).name).toBe('agt_1');
  });

  test('when the token lacks the agent id or workspace or is not a JWT, then it throws without quoting the token', () => {
    for (const token of [tokenWith({ sub: 'agt_1' }), tokenWith({ workspace_id: 'wsp_1' }), 'not-a-token']) {
      expect(() => agentIdentityFromToken(token)).toThrow(/AGENT_TOKEN carries no agent id/);
      expect(() => agentIdentityFromToken(token)).not.toThrow(token);
    }
  });
});
