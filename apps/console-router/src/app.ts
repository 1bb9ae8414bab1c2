import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import express from 'express';
import type { Express, NextFunction, Request, Response } from 'express';
import { createRemoteJwks, createTokenVerifier, deriveConsoleProxyKey } from '@svc/auth';
import { consoleRouterDocument } from '@svc/contracts';
import type { ConsoleRouterApi } from '@svc/contracts';
import { createHttpApp, mountOperations, reloadRuntimeKey, runtimeKeyAtStart } from '@svc/service-kit/http';
import type { AppMetrics, Logger } from '@svc/service-kit/http';
import { createCredentialReader } from './auth/console-credentials';
import { subscribeRouteWakes } from './data/route-wakes.subscriber';
import type { RouteWakes } from './data/route-wakes.subscriber';
import { RouteTableSource } from './data/route-table.source';
import { createOperationRules } from './domain/agent-operations';
import { ProxyStats, registerProxyMetrics } from './domain/proxy-metrics';
import { createRequestIds } from './domain/request-ids';
import { hostCheck, originRules } from './domain/request-origin';
import { RouteActivity } from './domain/route-activity';
import { WebSocketLimits, limitReason } from './domain/websocket-limits';
import { parseAgentPath } from './domain/route-table';
import type { ConsoleRouterConfig } from './env';
import { agentProxyRoutes, hostNotAllowed } from './routes/agent-proxy.routes';
import { healthRoutes } from './routes/health.routes';
import { statusRoutes } from './routes/status.routes';
import { RUNTIME_VERSION } from './runtime-version';
import { isListening } from './transport/agent-probe';
import { ConsoleFront } from './transport/console-front';
import { nodeHttpParser } from './transport/http-parser';
import { clientErrorAnswer, problemAnswer } from './transport/problem-answer';
import { createUpstreamProxy } from './transport/upstream-proxy';
import { consoleRouterReadinessChecks } from './use-cases/health/check-readiness';
import { agentUnavailable } from './use-cases/proxy/admit-console-request';

/** Operations the agent proxy answers in front of the operation router. */
const PROXIED = [
  'proxyAgentHealth',
  'proxyAgentChatList',
  'proxyAgentChatSend',
  'proxyAgentChatStream',
  'proxyAgentTerminal',
] as const;

export interface ConsoleRouterServiceOptions {
  config: ConsoleRouterConfig;
  logger: Logger;
  /** How long the hub has to answer the JWKS probe and a route table load (default 2 s). */
  hubTimeoutMs?: number;
  /** How long the liveness probe of an agent's port waits before a refusal (default 500 ms). */
  probeTimeoutMs?: number;
  /** Check every success body against the contract (tests turn this on). */
  validateResponses?: boolean;
  /** Reported by `/status` as `started_at` (default: when the app is built). */
  startedAt?: Date;
  now?: () => Date;
  /** Proxy counts and the router's own requests in this registry; `/metrics` on the app when `serveRoute`. */
  metrics?: AppMetrics;
}

export interface ConsoleRouterService {
  /** The request listener: agent routes go to the proxy, the rest to the router's own operations. */
  app: Express;
  /**
   * Readies the server serving {@link app}: agent routes are answered by the server's own `request` listener,
   * ahead of express (which then serves only the router's own operations), and WebSocket upgrades to agents
   * get their `upgrade` listener.
   */
  attach(server: Server): void;
  /** Loads the route table and keeps polling it. */
  start(): void;
  /** Stops polling and closes open WebSockets and pooled upstream connections. */
  close(): void;
  routes: RouteTableSource;
  activity: RouteActivity;
  /** The Redis subscription that wakes the route table (when CONSOLE_ROUTER_REDIS_URL is set). */
  wakes: RouteWakes | undefined;
  /**
   * Re-reads SVC_WORKSPACE_API_KEY_FILE (on SIGHUP): a new key is used from the next hub call, and the route
   * table is reloaded once with it. Open WebSockets and requests in flight are left alone. Resolves with whether
   * the key changed.
   */
  reloadKey(): Promise<boolean>;
}

/** The console router, wired from explicit options; `main.ts` and the tests both build it here. */
export function createConsoleRouterService(options: ConsoleRouterServiceOptions): ConsoleRouterService {
  const { config, logger } = options;
  const hubTimeoutMs = options.hubTimeoutMs ?? 2000;
  const now = options.now ?? (() => new Date());
  const origins = originRules(config.publicBaseUrl, config.allowedOrigins);
  const isAllowedHost = hostCheck(origins);
  const requestIds = createRequestIds();
  const activity = new RouteActivity();
  const routes = new RouteTableSource({
    hubUrl: config.hubUrl,
    hostId: config.runtimeInstanceId,
    apiKey: runtimeKeyAtStart(config.runtimeKeyFile, config.runtimeKey, logger),
    pollMs: config.pollMs,
    timeoutMs: hubTimeoutMs,
    logger: logger.child({ component: 'route-table' }),
  });
  const tokens = createTokenVerifier({
    issuer: config.hubIssuer,
    getJwks: createRemoteJwks({ url: `${config.hubUrl.replace(/\/+$/, '')}/.well-known/jwks.json` }),
  });
  const stats = new ProxyStats();
  const wsLimits = new WebSocketLimits(config.wsLimits);
  // Node's HTTP parser reads clients' requests to agent routes (the front) and agents' answers (decision 69).
  const { Parser, methods } = nodeHttpParser();
  const proxy = createUpstreamProxy({
    logger: logger.child({ component: 'proxy' }),
    activity,
    stats,
    wsIdleMs: config.wsIdleMs,
    wsMaxMessageBytes: config.wsLimits.maxMessageBytes,
    onMessageTooLarge: () => {
      wsLimits.messageRefused();
      return limitReason('message_size', config.wsLimits);
    },
    responseParser: Parser,
    onUnreachable: (error, target) => {
      if (error.code !== 'ECONNREFUSED') {
        logger.warn({ err: error, agent_id: target.agentId }, 'agent connection failed');
      }
      return problemAnswer(agentUnavailable(target.agentId), target.requestId);
    },
  });
  routes.onChange((table) => {
    const closed = proxy.recheckTunnels();
    if (closed > 0)
      logger.info({ closed }, 'route table changed: WebSockets of callers without access closed');
    const connections = proxy.closeConnectionsExcept(table.runningPorts());
    if (connections > 0)
      logger.info({ closed: connections }, 'route table changed: connections to stopped agents closed');
  });
  const wakes = config.redisUrl
    ? subscribeRouteWakes({
        redisUrl: config.redisUrl,
        prefix: config.redisPrefix,
        hostId: config.runtimeInstanceId,
        workspaceId: () => routes.current()?.workspace.id,
        wake: () => {
          routes.refresh().catch(() => undefined);
        },
        logger: logger.child({ component: 'route-wakes' }),
      })
    : undefined;
  const proxyKeys = new Map<string, string>();
  const secret = config.upstreamSecret;
  const agentProxy = agentProxyRoutes({
    routes,
    readCredential: createCredentialReader(tokens),
    operationRules: createOperationRules(),
    isListening: (port) => isListening(port, options.probeTimeoutMs ?? 500),
    proxy,
    wsLimits,
    origins,
    isAllowedHost,
    requestIds,
    logger,
    stats,
    proxyKeyFor: (agentId) => {
      if (!secret) return undefined;
      let key = proxyKeys.get(agentId);
      if (key === undefined) {
        key = deriveConsoleProxyKey(secret, agentId);
        if (proxyKeys.size > 10_000) proxyKeys.clear();
        proxyKeys.set(agentId, key);
      }
      return key;
    },
  });

  const checks = consoleRouterReadinessChecks({
    hubUrl: config.hubUrl,
    hubTimeoutMs,
    routes,
    hasUpstreamSecret: secret !== undefined,
  });
  if (options.metrics) registerProxyMetrics(options.metrics.registry, stats, () => proxy.openTunnels());
  const own = createHttpApp({
    logger,
    ...(options.metrics ? { metrics: options.metrics } : {}),
    configure: (app) =>
      mountOperations<ConsoleRouterApi.operations, (typeof PROXIED)[number]>(app, {
        document: consoleRouterDocument,
        servedElsewhere: PROXIED,
        handlers: {
          ...healthRoutes({
            checks,
            // Each check aborts itself after hubTimeoutMs; the outer limit is only a backstop.
            timeoutMs: hubTimeoutMs + 1000,
          }),
          ...statusRoutes({
            routes,
            activity,
            connections: () => ({ http: proxy.upstreamConnections(), websockets: proxy.openTunnels() }),
            wsLimits,
            host: config.host,
            configuredPort: config.port,
            runtimeVersion: RUNTIME_VERSION,
            startedAt: options.startedAt ?? now(),
            now,
          }),
        },
        logger,
        validateResponses: options.validateResponses ?? false,
      }),
  });

  // The outer express app: Host first (DNS rebinding), then agent routes to the proxy before any body parsing,
  // then the router's own operations. Once attached, agent routes never reach it (see `handleRequest` below).
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use((req: Request, res: Response, next: NextFunction) => {
    const raw = req as IncomingMessage;
    if (!isAllowedHost(raw.headers.host)) {
      const answer = problemAnswer(hostNotAllowed(), requestIds.next());
      res.writeHead(answer.status, { ...answer.headers, Connection: 'close' }).end(answer.body);
      return;
    }
    if (agentProxy.handleRequest(raw, res as ServerResponse)) return;
    own(req, res, next);
  });

  // The router's own front for agent routes (decision 65): connections are read by it first, and handed to
  // node:http (and so to express or the upgrade listener) when they carry anything else.
  const front = new ConsoleFront({
    Parser,
    methods,
    route: parseAgentPath,
    handle: (req, res, path) => {
      agentProxy.handleRequest(req, res, path);
    },
    failed: (error) => logger.error({ err: error }, 'console request failed; its connection was closed'),
  });

  /** The server's `request` listener: agent routes straight to the proxy, anything else to express. */
  const handleRequest = (req: IncomingMessage, res: ServerResponse) => {
    if (!agentProxy.handleRequest(req, res)) app(req as Request, res as Response);
  };

  return {
    app,
    attach(server) {
      // `app.listen` made express the server's listener; the agent routes go first, without express.
      if (server.listeners('request').includes(app)) {
        server.removeListener('request', app);
        server.on('request', handleRequest);
      }
      server.on('upgrade', agentProxy.handleUpgrade);
      front.attach(server);
      server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
        logger.debug({ err: error }, 'client connection error');
        // Nothing is written over an answer that has begun (`_httpMessage`: node:http's answer on the socket).
        const answering = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
        if (socket.writable && error.code !== 'ECONNRESET' && !answering?.headersSent)
          socket.end(clientErrorAnswer(error.code));
        socket.destroy();
      });
    },
    start: () => routes.start(),
    wakes,
    async reloadKey() {
      const key = await reloadRuntimeKey(config.runtimeKeyFile, routes.currentApiKey(), logger);
      if (key === undefined) return false;
      routes.setApiKey(key);
      await routes.refresh().catch(() => undefined);
      return true;
    },
    close() {
      routes.stop();
      void wakes?.close();
      front.close();
      proxy.close();
    },
    routes,
    activity,
  };
}
