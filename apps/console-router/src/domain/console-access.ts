import { AppError } from '@svc/service-kit';
import type { AgentRoute, RouteTable } from './route-table';

/** A credential whose signature, issuer, audience and expiry checked out, before any rule of this route. */
export type VerifiedCredential =
  | { kind: 'participant'; participantId: string }
  | { kind: 'agent'; agentId: string; workspaceId: unknown }
  | { kind: 'ticket'; participantId: string; workspaceId: unknown; agentId: unknown };

/** Who the router forwards as the caller (`x-svc-console-caller: <kind>:<id>`). */
export interface Caller {
  kind: 'participant' | 'agent';
  id: string;
}

export type CallerKind = Caller['kind'];

function refused(code: string, detail: string, route: AgentRoute): AppError {
  return new AppError({ status: 403, code, detail, extra: { agent_id: route.agentId } });
}

/**
 * The route's rules for a verified credential, in the contract's order: the workspace (a participant who is
 * not a member, a token or ticket of another workspace: `workspace_forbidden`), the agent (a ticket for
 * another agent, another agent outside the peer rule: `peer_not_allowed`), then the operation (a caller kind
 * it does not accept: `actor_not_allowed`). Returns the caller to forward or throws the 403.
 */
export function authorizeCaller(
  credential: VerifiedCredential,
  route: AgentRoute,
  table: RouteTable,
  allowed: readonly CallerKind[],
): Caller {
  const workspaceId = table.workspace.id;
  let caller: Caller;
  switch (credential.kind) {
    case 'participant':
      if (!table.isMember(credential.participantId)) {
        throw refused('workspace_forbidden', "You are not a member of this agent's workspace.", route);
      }
      caller = { kind: 'participant', id: credential.participantId };
      break;
    case 'ticket':
      if (credential.workspaceId !== workspaceId || !table.isMember(credential.participantId)) {
        throw refused('workspace_forbidden', "This console ticket is not for this agent's workspace.", route);
      }
      if (credential.agentId !== route.agentId) {
        throw refused('ticket_agent_mismatch', 'This console ticket opens another agent.', route);
      }
      caller = { kind: 'participant', id: credential.participantId };
      break;
    case 'agent':
      if (credential.workspaceId !== workspaceId) {
        throw refused('workspace_forbidden', 'This agent token is of another workspace.', route);
      }
      if (credential.agentId !== route.agentId && !route.peers.has(credential.agentId)) {
        throw refused(
          'peer_not_allowed',
          'This agent may not reach that agent: they share no team and no active project.',
          route,
        );
      }
      caller = { kind: 'agent', id: credential.agentId };
      break;
  }
  if (!allowed.includes(caller.kind)) {
    throw refused('actor_not_allowed', `A caller of kind ${caller.kind} may not use this route.`, route);
  }
  return caller;
}
