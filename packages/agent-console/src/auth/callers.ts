import { AGENT_TOKEN_SCOPES, AuthError, JwksUnavailableError, TokenError, safeEqual } from '@svc/auth';
import type { Actor, AgentActor, CredentialResolver, ParticipantActor, TokenVerifier } from '@svc/auth';
import { forbidden, jwksUnavailable } from '@svc/service-kit';

/** Header carrying the agent's proxy key on calls the host's console router forwards. */
export const PROXY_KEY_HEADER = 'x-svc-console-proxy-key';
/** Header naming who the router verified: `participant:<id>` or `agent:<id>`. */
export const PROXY_CALLER_HEADER = 'x-svc-console-caller';

/** Who this console belongs to and how it checks credentials. */
export interface ConsoleIdentity {
  agentId: string;
  workspaceId: string;
  /** Verifies hub-issued JWTs against the hub's JWKS. */
  tokens: TokenVerifier;
  /** The key the console router proves itself with; without one, forwarded calls are refused. */
  proxyKey?: string | undefined;
}

/** What a request presents, read from its headers and query string. */
export interface PresentedCredentials {
  authorization?: string | undefined;
  ticket?: string | undefined;
  proxyKey?: string | undefined;
  proxyCaller?: string | undefined;
  /** Credential headers this console never reads (API key, service and relay tokens). */
  unread: string[];
}

const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const CALLER = /^(participant|agent):([A-Za-z0-9_-]{1,128})$/;
const UNREAD_HEADERS: Record<string, string> = {
  'x-api-key': 'an API key',
  'x-svc-service-token': 'a service token',
  'x-svc-relay-token': 'a relay token',
};

type HeaderBag = Record<string, string | string[] | undefined>;

function single(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Reads every credential a request carries, without judging any of them. */
export function presentedCredentials(headers: HeaderBag, query: URLSearchParams): PresentedCredentials {
  const ticket = query.getAll('ticket');
  return {
    authorization: single(headers.authorization) ?? (headers.authorization === undefined ? undefined : ''),
    ticket: ticket.length === 0 ? undefined : ticket.length === 1 ? ticket[0] : '',
    proxyKey: headers[PROXY_KEY_HEADER] === undefined ? undefined : (single(headers[PROXY_KEY_HEADER]) ?? ''),
    proxyCaller: single(headers[PROXY_CALLER_HEADER]),
    unread: Object.keys(UNREAD_HEADERS).filter((name) => headers[name] !== undefined),
  };
}

const routerRequired = () =>
  forbidden(
    'console_router_required',
    'This credential is accepted through the host console router only; open the console through its route.',
  );

const invalid = (detail: string) => new AuthError('credential_invalid', detail);

/**
 * Turns credentials into actors, as the contract's description says: a console ticket bound to this agent
 * (a participant), the agent's own `AGENT_TOKEN` (the agent), a call forwarded by the console router (the
 * participant or agent it names). A valid participant JWT or another agent's token presented directly
 * answers 403 `console_router_required`: only the router holds the membership and peer rules they need.
 */
export function createConsoleCallers(identity: ConsoleIdentity) {
  const { agentId, workspaceId, tokens } = identity;

  async function verify(token: string, audience: ('console' | 'agent' | 'participant')[]) {
    try {
      return await tokens.verify(token, { audience });
    } catch (error) {
      if (error instanceof TokenError) return null;
      if (error instanceof JwksUnavailableError) {
        throw jwksUnavailable(error);
      }
      throw error;
    }
  }

  /**
   * A console ticket names one agent of one workspace; a ticket for another agent identifies nobody here (it
   * is answered like a token of the wrong audience, 401 `credential_invalid`, since no route could make it
   * valid for this agent).
   */
  function ticketActor(verified: { sub: string; jti: string; claims: Record<string, unknown> }) {
    if (verified.claims.agent !== agentId || verified.claims.ws !== workspaceId) return null;
    const participant: ParticipantActor = {
      kind: 'participant',
      participantId: verified.sub,
      email: typeof verified.claims.email === 'string' ? verified.claims.email : '',
      tokenId: verified.jti,
    };
    return participant;
  }

  function agentActor(id: string, runtimeInstanceId: string | null): AgentActor {
    return { kind: 'agent', agentId: id, workspaceId, runtimeInstanceId, scopes: [...AGENT_TOKEN_SCOPES] };
  }

  /** `Authorization: Bearer` — a ticket, this agent's own token, or a credential that needs the router. */
  async function fromBearer(token: string): Promise<Actor | null> {
    const verified = await verify(token, ['console', 'agent', 'participant']);
    if (!verified) return null;
    if (verified.aud === 'console') return ticketActor(verified);
    if (verified.aud === 'agent') {
      if (verified.sub !== agentId) throw routerRequired();
      if (verified.claims.workspace_id !== workspaceId) return null;
      const rti = verified.claims.runtime_instance_id;
      return agentActor(verified.sub, typeof rti === 'string' ? rti : null);
    }
    throw routerRequired();
  }

  /** `?ticket=` — console tickets only (an `AGENT_TOKEN` never travels in a URL). */
  async function fromTicket(ticket: string): Promise<Actor | null> {
    const verified = await verify(ticket, ['console']);
    return verified ? ticketActor(verified) : null;
  }

  /** A call forwarded by the console router, which proves itself with this agent's proxy key. */
  function fromProxy(key: string, caller: string | undefined): Actor {
    if (!identity.proxyKey || !safeEqual(key, identity.proxyKey)) {
      throw invalid('the console proxy key is not valid');
    }
    const match = CALLER.exec(caller ?? '');
    if (!match) throw invalid(`${PROXY_CALLER_HEADER} must be participant:<id> or agent:<id>`);
    const [, kind, id] = match as unknown as [string, 'participant' | 'agent', string];
    return kind === 'participant'
      ? { kind: 'participant', participantId: id, email: '', tokenId: '' }
      : agentActor(id, null);
  }

  /**
   * The credentials that are not an `Authorization` header: the router's proxy key or a `?ticket=`. Resolves
   * `undefined` when neither is present (the bearer, if any, is then resolved by {@link resolver}).
   */
  async function fromProxyOrTicket(presented: PresentedCredentials): Promise<Actor | undefined> {
    const kinds = [
      presented.proxyKey !== undefined,
      presented.ticket !== undefined,
      presented.authorization !== undefined,
      presented.unread.length > 0,
    ].filter(Boolean).length;
    if (presented.proxyKey === undefined && presented.ticket === undefined) return undefined;
    if (kinds > 1) throw invalid('send exactly one credential per request');
    if (presented.proxyKey !== undefined) return fromProxy(presented.proxyKey, presented.proxyCaller);
    const actor = presented.ticket ? await fromTicket(presented.ticket) : null;
    if (!actor) throw invalid('the console ticket is not valid for this agent');
    return actor;
  }

  /**
   * Every credential at once, for WebSocket upgrades (which express never sees): resolves the actor,
   * `undefined` when nothing was presented, or rejects with the refusal.
   */
  async function identify(presented: PresentedCredentials): Promise<Actor | undefined> {
    const viaProxyOrTicket = await fromProxyOrTicket(presented);
    if (viaProxyOrTicket) return viaProxyOrTicket;
    const [unread] = presented.unread;
    if (presented.authorization !== undefined && unread !== undefined) {
      throw invalid('send exactly one credential per request');
    }
    if (unread !== undefined) throw invalid(`this service does not accept ${UNREAD_HEADERS[unread]}`);
    if (presented.authorization === undefined) return undefined;
    const token = BEARER.exec(presented.authorization)?.[1];
    if (!token) throw invalid('the bearer token header is malformed');
    const actor = await fromBearer(token);
    if (!actor) throw invalid('the bearer token is not valid');
    return actor;
  }

  /** For `mountOperations`: the `Authorization` header only (the other kinds are read before it). */
  const resolver: CredentialResolver = { bearer: fromBearer };

  return { resolver, fromProxyOrTicket, identify };
}

export type ConsoleCallers = ReturnType<typeof createConsoleCallers>;
