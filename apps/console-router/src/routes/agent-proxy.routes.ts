import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError, newRequestId } from '@svc/service-kit';
import type { Logger } from '@svc/service-kit';
import { isAllowedHost, isAllowedOrigin } from '../domain/request-origin';
import type { OriginRules } from '../domain/request-origin';
import { problemAnswer, rawHttpAnswer } from '../domain/problem-answer';
import { parseAgentPath } from '../domain/route-table';
import type { UpstreamProxy, UpstreamTarget } from '../domain/upstream-proxy';
import { admitConsoleRequest } from '../use-cases/proxy/admit-console-request';
import type { AdmitDeps, Admission } from '../use-cases/proxy/admit-console-request';

export interface AgentProxyDeps extends AdmitDeps {
  proxy: UpstreamProxy;
  origins: OriginRules;
  /** The agent's proxy key, or undefined when the router has no console secret. */
  proxyKeyFor: (agentId: string) => string | undefined;
  logger: Logger;
}

const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && ACCEPTED_REQUEST_ID.test(incoming) ? incoming : newRequestId();
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
    detail: "A WebSocket may be opened only from the console's public origin or a loopback page.",
  });

const notConfigured = () =>
  new AppError({
    status: 503,
    code: 'router_not_configured',
    detail: 'The console router has no console secret (CONSOLE_ROUTER_UPSTREAM_SECRET) to reach agents with.',
  });

/**
 * The agent routes `/<workspace>/agents/<agent-id>/<rest>`, HTTP and WebSocket upgrades: the request is
 * admitted (Host, then for upgrades Origin, then route, liveness and credential, see the use case) and
 * forwarded to `127.0.0.1:<serve_port>/<rest>` without hub credentials, with the verified caller and the
 * agent's proxy key; every refusal is problem+json.
 */
export function agentProxyRoutes(deps: AgentProxyDeps) {
  const { logger, proxy } = deps;

  function upstreamTarget(admission: Admission, requestId: string): UpstreamTarget {
    const key = deps.proxyKeyFor(admission.route.agentId);
    if (key === undefined) throw notConfigured();
    return {
      agentId: admission.route.agentId,
      servePort: admission.route.servePort,
      path: admission.upstreamPath,
      headers: {
        'x-svc-console-caller': `${admission.caller.kind}:${admission.caller.id}`,
        'x-svc-console-proxy-key': key,
        'x-request-id': requestId,
      },
    };
  }

  function logRefusal(error: unknown, requestId: string, req: IncomingMessage, status: number) {
    const fields = { request_id: requestId, method: req.method, status };
    if (status >= 500 && status !== 503) logger.error({ ...fields, err: error }, 'console request failed');
    else logger.info(fields, 'console request refused');
  }

  /** Handles an HTTP request when its path is an agent route; returns false to leave it to the app. */
  function handleRequest(req: IncomingMessage, res: ServerResponse): boolean {
    const path = parseAgentPath(req.url ?? '/');
    if (!path) return false;
    const requestId = requestIdOf(req);
    res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () =>
      logger.info(
        {
          request_id: requestId,
          method: req.method,
          agent_id: path.agentId,
          status: res.statusCode,
          duration_ms: Math.round(Number(process.hrtime.bigint() - started) / 1e4) / 100,
        },
        'console request',
      ),
    );
    const admitted = isAllowedHost(req.headers.host, deps.origins)
      ? admitConsoleRequest(deps, { method: req.method ?? 'GET', path, headers: req.headers })
      : Promise.reject(hostNotAllowed());
    admitted
      .then((admission) => proxy.web(req, res, upstreamTarget(admission, requestId)))
      .catch((error: unknown) => {
        const answer = problemAnswer(error, requestId);
        if (answer.internal) logRefusal(error, requestId, req, answer.status);
        if (res.headersSent || res.writableEnded) {
          res.destroy();
          return;
        }
        // The body of a refused request is not read: close the connection rather than drain it.
        res.writeHead(answer.status, { ...answer.headers, Connection: 'close' }).end(answer.body);
      });
    return true;
  }

  /** The server's `upgrade` listener: agent routes are proxied, everything else refused as JSON. */
  function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', (error) => logger.debug({ err: error }, 'client upgrade socket error'));
    const requestId = requestIdOf(req);
    const refuse = (error: unknown) => {
      const answer = problemAnswer(error, requestId);
      logRefusal(error, requestId, req, answer.status);
      if (socket.writable) socket.end(rawHttpAnswer(answer));
      setTimeout(() => socket.destroy(), 1_000).unref();
    };
    const path = parseAgentPath(req.url ?? '/');
    try {
      if (!isAllowedHost(req.headers.host, deps.origins)) throw hostNotAllowed();
      if (!isAllowedOrigin(req.headers.origin, deps.origins)) throw originNotAllowed();
      if (!path) {
        throw new AppError({ status: 404, code: 'route_not_found', detail: 'No WebSocket route here.' });
      }
    } catch (error) {
      refuse(error);
      return;
    }
    admitConsoleRequest(deps, { method: req.method ?? 'GET', path, headers: req.headers })
      .then((admission) => {
        if (socket.destroyed) return;
        const target = upstreamTarget(admission, requestId);
        logger.info({ request_id: requestId, agent_id: target.agentId }, 'console WebSocket upgrade');
        proxy.ws(req, socket, head, target);
      })
      .catch(refuse);
  }

  return { handleRequest, handleUpgrade };
}
