import type { ParticipantActor } from '@svc/auth';
import { agentNotFound, findAgentFor } from '../../data/agents.lookups';
import type { HubDeps } from '../../deps';
import { CONSOLE_TICKET_TTL_SECONDS, consoleTicketClaims } from '../../domain/console-tickets';

export interface IssuedConsoleTicket {
  ticket: string;
  expiresAt: Date;
  agentId: string;
  workspaceId: string;
}

/**
 * A console ticket for a participant who is a member of the agent's workspace (any role): an ES256 JWT with
 * audience `console`, subject the participant, bound to the workspace and the agent, valid for 60 s. An agent
 * of another workspace, a missing one and an evicted one are all not found. Each issuance is audited as
 * `console.ticket.issued` with the token id and expiry, never the ticket.
 */
export async function createConsoleTicket(
  deps: HubDeps,
  actor: ParticipantActor,
  agentId: string,
  requestId?: string,
): Promise<IssuedConsoleTicket> {
  const agent = await findAgentFor(deps, actor, agentId);
  if (agent.status === 'evicted') throw agentNotFound(agentId);
  const issued = deps.keys.issuer.issue({
    audience: 'console',
    subject: actor.participantId,
    ttlSeconds: CONSOLE_TICKET_TTL_SECONDS,
    claims: consoleTicketClaims(agent.workspaceId, agent.id),
  });
  await deps.audit.record({
    workspaceId: agent.workspaceId,
    actor,
    action: 'console.ticket.issued',
    targetType: 'agent',
    targetId: agent.id,
    data: { token_id: issued.jti, expires_at: issued.expiresAt.toISOString() },
    requestId,
  });
  return {
    ticket: issued.token,
    expiresAt: issued.expiresAt,
    agentId: agent.id,
    workspaceId: agent.workspaceId,
  };
}
