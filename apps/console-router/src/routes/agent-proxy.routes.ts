import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError } from '@svc/service-kit/http';
import type { Logger } from '@svc/service-kit/http';
import { corsHeaders, isPreflight, PREFLIGHT_HEADERS } from '../domain/cors';
import type { ProxyStats } from '../domain/proxy-metrics';
import type { RequestIds } from '../domain/request-ids';
import { isAllowedOrigin } from '../domain/request-origin';
import type { OriginRules } from '../domain/request-origin';
import { limitReason } from '../domain/websocket-limits';
import type { WebSocketLimit, WebSocketLimits } from '../domain/websocket-limits';
import { parseAgentPath } from '../domain/route-table';
import type { AgentPath } from '../domain/route-table';
import type { ClientRequest, ClientResponse } from '../transport/client-exchange';
import { problemAnswer, rawHttpAnswer } from '../transport/problem-answer';
import type { UpstreamProxy, UpstreamTarget } from '../transport/upstream-proxy';
import { closeFrame, isWebSocketKey, switchingProtocols } from '../transport/websocket-frames';
import {
  admitConsoleRequest,
  admitRemembered,
  stillAdmitted,
} from '../use-cases/proxy/admit-console-request';
import type { AdmitDeps, Admission } from '../use-cases/proxy/admit-console-request';

export interface AgentProxyDeps extends AdmitDeps {
  proxy: UpstreamProxy;
  /** WebSockets open in total, per route and per caller, against `CONSOLE_ROUTER_WS_MAX_*`. */
  wsLimits: WebSocketLimits;
  origins: OriginRules;
  /** Whether a `Host` is loopback or the public host (see `hostCheck`). */
  isAllowedHost: (host: string | undefined) => boolean;
  requestIds: RequestIds;
  /** The agent's proxy key, or undefined when the router has no console secret. */
  proxyKeyFor: (agentId: string) => string | undefined;
  logger: Logger;
  /** Refusals are counted here by status. */
  stats: ProxyStats;
}

export const hostNotAllowed = () =>
  new AppError({
    status: 403,
    code: 'host_not_allowed',
    detail: 'This Host is neither loopback nor the console public host.',
  });

const originNotAllowed = () =>
  new AppError({
    status: 403,
    code: 'origin_not_allowed',
    detail:
      "Only pages of the console's public origin, of an origin the host allows (CONSOLE_ROUTER_ALLOWED_ORIGINS) or of a loopback address may open a WebSocket or send a cross-origin request here.",
  });

const notConfigured = () =>
  new AppError({
    status: 503,
    code: 'router_not_configured',
    detail: 'The console router has no console secret (CONSOLE_ROUTER_UPSTREAM_SECRET) to reach agents with.',
  });

/** The router holds `CONSOLE_ROUTER_WS_MAX_CONNECTIONS` WebSockets: one more is refused before the upgrade. */
const capacityReached = (detail: string) =>
  new AppError({
    status: 503,
    code: 'console_capacity_reached',
    detail: `The console router holds as many WebSockets as it may (${detail}); retry shortly.`,
    headers: { 'Retry-After': '5' },
  });

/** A per-caller or per-route limit met by a request that is not a complete WebSocket handshake. */
const limitReached = (detail: string) =>
  new AppError({
    status: 429,
    code: 'websocket_limit_reached',
    detail: `Too many WebSockets open (${detail}); close one and retry.`,
  });

/**
 * The agent routes `/<workspace>/agents/<agent-id>/<rest>`, HTTP and WebSocket upgrades: the request is
 * admitted (Host, then for upgrades Origin, then route, liveness and credential, see the use case) and
 * forwarded to `127.0.0.1:<serve_port>/<rest>` without hub credentials, with the verified caller and the
 * agent's proxy key; every refusal is problem+json.
 *
 * A request whose credential was verified before is admitted and forwarded in the same turn (no promise, no
 * closure); anything else takes the full, asynchronous decision. Each request is logged at `debug` only, so
 * the default level writes nothing per forwarded request; refusals are logged at `info`.
 */
export function agentProxyRoutes(deps: AgentProxyDeps) {
  const { logger, proxy, requestIds } = deps;

  function upstreamTarget(admission: Admission, requestId: string): UpstreamTarget {
    const key = deps.proxyKeyFor(admission.route.agentId);
    if (key === undefined) throw notConfigured();
    return {
      agentId: admission.route.agentId,
      servePort: admission.route.servePort,
      path: admission.upstreamPath,
      caller: `${admission.caller.kind}:${admission.caller.id}`,
      proxyKey: key,
      requestId,
    };
  }

  function logRefusal(error: unknown, requestId: string, req: ClientRequest, status: number) {
    const fields = { request_id: requestId, method: req.method, status };
    if (status >= 500 && status !== 503) logger.error({ ...fields, err: error }, 'console request failed');
    else logger.info(fields, 'console request refused');
  }

  /** Answers a request that will not be forwarded (or could not be) with problem+json. */
  function refuse(error: unknown, requestId: string, req: ClientRequest, res: ClientResponse) {
    const answer = problemAnswer(error, requestId);
    deps.stats.refused(answer.status);
    if (answer.internal) logRefusal(error, requestId, req, answer.status);
    if (res.headersSent || res.writableEnded) {
      res.destroy();
      return;
    }
    // The body of a refused request is not read: close the connection rather than drain it.
    res.writeHead(answer.status, { ...answer.headers, Connection: 'close' }).end(answer.body);
  }

  function forward(req: ClientRequest, res: ClientResponse, admission: Admission, requestId: string) {
    try {
      proxy.web(req, res, upstreamTarget(admission, requestId));
    } catch (error) {
      refuse(error, requestId, req, res);
    }
  }

  /** The per-request log line, written only when `debug` is enabled. */
  function logWhenFinished(req: ClientRequest, res: ClientResponse, agentId: string, requestId: string) {
    const started = process.hrtime.bigint();
    res.once('finish', () =>
      logger.debug(
        {
          request_id: requestId,
          method: req.method,
          agent_id: agentId,
          status: res.statusCode,
          duration_ms: Math.round(Number(process.hrtime.bigint() - started) / 1e4) / 100,
        },
        'console request',
      ),
    );
  }

  /**
   * Handles an HTTP request when its path is an agent route; returns false to leave it to the app. `path` is
   * given when the caller parsed the route already (the front).
   */
  function handleRequest(
    req: ClientRequest,
    res: ClientResponse,
    path: AgentPath | undefined = parseAgentPath(req.url ?? '/'),
  ): boolean {
    if (!path) return false;
    const requestId = requestIds.of(req.headers['x-request-id']);
    if (logger.isLevelEnabled('debug')) logWhenFinished(req, res, path.agentId, requestId);
    if (!deps.isAllowedHost(req.headers.host)) {
      refuse(hostNotAllowed(), requestId, req, res);
      return true;
    }
    // Pages the router accepts read its answers (CORS); their preflight is answered before any credential.
    const cors = corsHeaders(req.headers.origin, deps.origins);
    if (cors) for (const [name, value] of Object.entries(cors)) res.setHeader(name, value);
    if (isPreflight(req)) {
      if (!cors) refuse(originNotAllowed(), requestId, req, res);
      else
        res.writeHead(204, { ...PREFLIGHT_HEADERS, 'Content-Length': '0', 'X-Request-Id': requestId }).end();
      return true;
    }
    const request = { method: req.method ?? 'GET', path, headers: req.headers };
    const remembered = admitRemembered(deps, request);
    if (remembered) {
      forward(req, res, remembered, requestId);
      return true;
    }
    admitConsoleRequest(deps, request).then(
      (admission) => forward(req, res, admission, requestId),
      (error: unknown) => refuse(error, requestId, req, res),
    );
    return true;
  }

  /** The server's `upgrade` listener: agent routes are proxied, everything else refused as JSON. */
  function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', (error) => logger.debug({ err: error }, 'client upgrade socket error'));
    const requestId = requestIds.of(req.headers['x-request-id']);
    const refuse = (error: unknown) => {
      const answer = problemAnswer(error, requestId);
      deps.stats.refused(answer.status);
      logRefusal(error, requestId, req, answer.status);
      if (socket.writable) socket.end(rawHttpAnswer(answer));
      setTimeout(() => socket.destroy(), 1_000).unref();
    };
    const path = parseAgentPath(req.url ?? '/');
    try {
      if (!deps.isAllowedHost(req.headers.host)) throw hostNotAllowed();
      if (!isAllowedOrigin(req.headers.origin, deps.origins)) throw originNotAllowed();
      if (!path) {
        throw new AppError({ status: 404, code: 'route_not_found', detail: 'No WebSocket route here.' });
      }
    } catch (error) {
      refuse(error);
      return;
    }
    /**
     * A limit met after admission: the router's total is answered 503 before the upgrade; a caller's or a
     * route's limit completes the handshake and closes at once with 1008 and the limit's name, which a
     * browser's WebSocket can read (it cannot read an HTTP status), or 429 without a valid handshake.
     */
    const refuseLimit = (limit: WebSocketLimit, agentId: string) => {
      const reason = limitReason(limit, deps.wsLimits.settings);
      const key = req.headers['sec-websocket-key'];
      if (limit === 'connections' || !isWebSocketKey(key) || req.headers['sec-websocket-version'] !== '13') {
        refuse(limit === 'connections' ? capacityReached(reason) : limitReached(reason));
        return;
      }
      logger.info({ request_id: requestId, agent_id: agentId, limit }, 'console WebSocket refused: limit');
      if (socket.writable)
        socket.end(Buffer.concat([Buffer.from(switchingProtocols(key)), closeFrame(1008, reason)]));
      setTimeout(() => socket.destroy(), 1_000).unref();
    };
    admitConsoleRequest(deps, { method: req.method ?? 'GET', path, headers: req.headers })
      .then((admission) => {
        if (socket.destroyed) return;
        const caller = `${admission.caller.kind}:${admission.caller.id}`;
        const place = deps.wsLimits.admit(admission.route.agentId, caller);
        if (typeof place === 'string') {
          refuseLimit(place, admission.route.agentId);
          return;
        }
        // The place is given back when the client's socket closes, whatever happened to the upgrade.
        socket.once('close', place.release);
        const target = upstreamTarget(admission, requestId);
        // Asked again whenever the route table changes: a caller who lost access loses the open socket too.
        target.stillAllowed = () => {
          const table = deps.routes.current();
          return !table || stillAdmitted(table, path, admission);
        };
        logger.info({ request_id: requestId, agent_id: target.agentId }, 'console WebSocket upgrade');
        proxy.ws(req, socket, head, target);
      })
      .catch(refuse);
  }

  return { handleRequest, handleUpgrade };
}
