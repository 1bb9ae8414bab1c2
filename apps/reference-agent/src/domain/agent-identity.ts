/** Who the agent is, as its `AGENT_TOKEN` says (the hub put these claims there when it issued the token). */
export interface AgentIdentity {
  agentId: string;
  workspaceId: string;
  name: string;
}

/**
 * Reads the agent's identity from the payload of its own token. The signature is not checked: the token came
 * from the hub with the process's environment, and the hub checks it on every call the agent makes.
 */
export function agentIdentityFromToken(token: string): AgentIdentity {
  const payload = token.split('.')[1];
  let claims: Record<string, unknown> = {};
  try {
    const decoded: unknown = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8'));
    if (typeof decoded === 'object' && decoded !== null) claims = decoded as Record<string, unknown>;
  } catch {
    // Reported below.
  }
  const { sub, workspace_id: workspaceId, agent_name: name } = claims;
  if (typeof sub !== 'string' || sub === '' || typeof workspaceId !== 'string' || workspaceId === '') {
    throw new Error('AGENT_TOKEN carries no agent id and workspace id (sub, workspace_id)');
  }
  return { agentId: sub, workspaceId, name: typeof name === 'string' && name !== '' ? name : sub };
}
