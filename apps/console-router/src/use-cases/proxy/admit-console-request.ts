import { AppError } from '@svc/service-kit/http';
import type { CredentialReader } from '../../auth/console-credentials';
import type { RouteTableSource } from '../../data/route-table.source';
import { authorizeCaller, decideCaller, isRefusal } from '../../domain/console-access';
import type { Caller, CallerKind, VerifiedCredential } from '../../domain/console-access';
import type { OperationRules } from '../../domain/agent-operations';
import type { AgentPath, AgentRoute, RouteTable } from '../../domain/route-table';

export interface AdmitDeps {
  routes: Pick<RouteTableSource, 'current' | 'refreshOnMiss'>;
  readCredential: CredentialReader;
  operationRules: OperationRules;
  /** Whether the agent's serve port accepts a connection (asked only before a refusal). */
  isListening: (port: number) => Promise<boolean>;
}

export interface ConsoleRequest {
  method: string;
  path: AgentPath;
  headers: Record<string, string | string[] | undefined>;
}

/** A request the router forwards: where to, what the agent sees, and as whom. */
export interface Admission {
  route: AgentRoute;
  /** The path and query the agent receives: the route prefix and every `ticket` parameter removed. */
  upstreamPath: string;
  caller: Caller;
  /** The credential and the caller kinds of the operation, to decide again under a newer table. */
  credential: VerifiedCredential;
  allowed: readonly CallerKind[];
}

/** `rest` without its `ticket` parameters; the other parameters are kept byte for byte. */
export function withoutTicket(rest: string): string {
  const at = rest.indexOf('?');
  if (at === -1) return rest;
  // No parameter named `ticket`, plainly or percent-encoded: nothing to remove.
  if (rest.indexOf('ticket', at) === -1 && rest.indexOf('%', at) === -1) return rest;
  const kept = rest
    .slice(at + 1)
    .split('&')
    .filter((pair) => {
      const name = pair.split('=', 1)[0] ?? '';
      try {
        return decodeURIComponent(name.replace(/\+/g, ' ')) !== 'ticket';
      } catch {
        return true;
      }
    });
  return kept.length > 0 ? `${rest.slice(0, at)}?${kept.join('&')}` : rest.slice(0, at);
}

/** The agent's serve port does not accept connections. */
export const agentUnavailable = (agentId: string) =>
  new AppError({
    status: 503,
    code: 'agent_unavailable',
    detail: `Agent ${agentId} is not listening on its serve port; start it and retry.`,
    headers: { 'Retry-After': '5' },
  });

/**
 * The admission of a request that needs nothing but memory: the table is loaded and knows the route, the one
 * credential is a bearer token verified before (see `CredentialReader.remembered`), and the route's rules let
 * its caller through. Undefined in every other case, which {@link admitConsoleRequest} then decides (and
 * refuses in the contract's order). This is the path of nearly every proxied request, so it allocates little
 * and never waits.
 */
export function admitRemembered(deps: AdmitDeps, request: ConsoleRequest): Admission | undefined {
  const table = deps.routes.current();
  if (!table) return undefined;
  const { path } = request;
  const route = table.find(path.workspace, path.agentId);
  if (!route || !route.running) return undefined;
  const queryAt = path.rest.indexOf('?');
  const credential = deps.readCredential.remembered(
    request.headers,
    queryAt === -1 ? '' : path.rest.slice(queryAt),
  );
  if (!credential) return undefined;
  const restPath = queryAt === -1 ? path.rest : path.rest.slice(0, queryAt);
  const allowed = deps.operationRules(request.method, restPath);
  const caller = decideCaller(credential, route, table, allowed);
  if (isRefusal(caller)) return undefined;
  // `remembered` only answers when the query names no ticket: the path goes to the agent as it came.
  return { route, upstreamPath: path.rest, caller, credential, allowed };
}

/**
 * Decides a request on an agent route in the contract's order: unknown workspace or agent → 404; the agent
 * not listening → 503; no or a bad credential → 401; another workspace, a participant who is not a member,
 * an agent outside the peer rule, a ticket for another agent → 403; a caller kind the operation does not
 * accept → 403. The port is probed only before a refusal, so the 401 proves the route reaches a listening
 * agent; an admitted request learns that the agent is down from the upstream connection instead.
 */
export async function admitConsoleRequest(deps: AdmitDeps, request: ConsoleRequest): Promise<Admission> {
  let table = deps.routes.current();
  if (!table) {
    throw new AppError({
      status: 503,
      code: 'routes_unavailable',
      detail: 'The route table has not been loaded from the hub yet; retry shortly.',
      headers: { 'Retry-After': '5' },
    });
  }
  const { path } = request;
  let route = table.find(path.workspace, path.agentId);
  if (!route || !route.running) {
    // An agent registered or started since the last table: reload (at most once a second) before answering.
    table = (await deps.routes.refreshOnMiss()) ?? table;
    route = table.find(path.workspace, path.agentId);
  }
  if (!route) {
    throw new AppError({
      status: 404,
      code: 'route_not_found',
      detail: `No agent ${path.agentId} in workspace ${path.workspace} on this host.`,
    });
  }
  // A stopped agent is not forwarded to, even when something still listens on its port.
  if (!route.running) throw agentUnavailable(route.agentId);
  const queryAt = path.rest.indexOf('?');
  const restPath = queryAt === -1 ? path.rest : path.rest.slice(0, queryAt);
  const verdict = await deps.readCredential(request.headers, queryAt === -1 ? '' : path.rest.slice(queryAt));

  let refusal: AppError;
  if (verdict.state === 'verified') {
    try {
      const allowed = deps.operationRules(request.method, restPath);
      const caller = authorizeCaller(verdict.credential, route, table, allowed);
      return {
        route,
        upstreamPath: withoutTicket(path.rest),
        caller,
        credential: verdict.credential,
        allowed,
      };
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      refusal = error;
    }
  } else {
    refusal = new AppError({
      status: 401,
      code: verdict.state === 'missing' ? 'credential_missing' : 'credential_invalid',
      detail:
        verdict.state === 'missing'
          ? 'Send a participant token, an agent token or a console ticket.'
          : `The credential is not valid: ${verdict.detail}.`,
      extra: { agent_id: route.agentId },
      headers: { 'WWW-Authenticate': 'Bearer' },
    });
  }
  if (!(await deps.isListening(route.servePort))) throw agentUnavailable(route.agentId);
  throw refusal;
}

/**
 * Whether a caller admitted earlier (an open WebSocket) may still use its route under a newer table: the
 * agent is still routed to the same serve port and the route's rules still let the credential through. A
 * member removed from the workspace, an agent stopped, moved or evicted, a peer that left the team: false.
 */
export function stillAdmitted(table: RouteTable, path: AgentPath, admission: Admission): boolean {
  const route = table.find(path.workspace, path.agentId);
  if (!route || !route.running || route.servePort !== admission.route.servePort) return false;
  return !isRefusal(decideCaller(admission.credential, route, table, admission.allowed));
}
