import { AppError } from '@svc/service-kit/http';
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

/** Why a verified credential may not use a route: the 403's code and detail. */
export interface Refusal {
  refused: true;
  code: 'workspace_forbidden' | 'ticket_agent_mismatch' | 'peer_not_allowed' | 'actor_not_allowed';
  detail: string;
}

const refusal = (code: Refusal['code'], detail: string): Refusal => ({ refused: true, code, detail });

const NOT_MEMBER = refusal('workspace_forbidden', "You are not a member of this agent's workspace.");
const TICKET_OTHER_WORKSPACE = refusal(
  'workspace_forbidden',
  "This console ticket is not for this agent's workspace.",
);
const TICKET_OTHER_AGENT = refusal('ticket_agent_mismatch', 'This console ticket opens another agent.');
const AGENT_OTHER_WORKSPACE = refusal('workspace_forbidden', 'This agent token is of another workspace.');
const NOT_A_PEER = refusal(
  'peer_not_allowed',
  'This agent may not reach that agent: they share no team and no active project.',
);

/**
 * The route's rules for a verified credential, in the contract's order: the workspace (a participant who is
 * not a member, a token or ticket of another workspace: `workspace_forbidden`), the agent (a ticket for
 * another agent, another agent outside the peer rule: `peer_not_allowed`), then the operation (a caller kind
 * it does not accept: `actor_not_allowed`). Returns the caller to forward or the refusal, without throwing
 * (every proxied request passes here).
 */
export function decideCaller(
  credential: VerifiedCredential,
  route: AgentRoute,
  table: RouteTable,
  allowed: readonly CallerKind[],
): Caller | Refusal {
  let caller: Caller;
  switch (credential.kind) {
    case 'participant':
      if (!table.isMember(credential.participantId)) return NOT_MEMBER;
      caller = { kind: 'participant', id: credential.participantId };
      break;
    case 'ticket':
      if (credential.workspaceId !== table.workspace.id || !table.isMember(credential.participantId)) {
        return TICKET_OTHER_WORKSPACE;
      }
      if (credential.agentId !== route.agentId) return TICKET_OTHER_AGENT;
      caller = { kind: 'participant', id: credential.participantId };
      break;
    case 'agent':
      if (credential.workspaceId !== table.workspace.id) return AGENT_OTHER_WORKSPACE;
      if (credential.agentId !== route.agentId && !route.peers.has(credential.agentId)) return NOT_A_PEER;
      caller = { kind: 'agent', id: credential.agentId };
      break;
  }
  if (!allowed.includes(caller.kind)) {
    return refusal('actor_not_allowed', `A caller of kind ${caller.kind} may not use this route.`);
  }
  return caller;
}

export function isRefusal(decision: Caller | Refusal): decision is Refusal {
  return 'refused' in decision;
}

/** {@link decideCaller}, throwing the 403 (with the route's `agent_id`) instead of returning it. */
export function authorizeCaller(
  credential: VerifiedCredential,
  route: AgentRoute,
  table: RouteTable,
  allowed: readonly CallerKind[],
): Caller {
  const decision = decideCaller(credential, route, table, allowed);
  if (isRefusal(decision)) {
    throw new AppError({
      status: 403,
      code: decision.code,
      detail: decision.detail,
      extra: { agent_id: route.agentId },
    });
  }
  return decision;
}
