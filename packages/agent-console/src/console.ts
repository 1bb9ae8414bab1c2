import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { TokenVerifier } from '@svc/auth';
import { agentConsoleDocument } from '@svc/contracts';
import type { AgentConsoleApi } from '@svc/contracts';
import { createHttpApp, mountOperations, startHttpServer } from '@svc/service-kit';
import type { RunningServer } from '@svc/service-kit';
import type { Express, NextFunction, Request, Response } from 'express';
import type { Logger } from '@svc/service-kit';
import { createConsoleCallers, presentedCredentials } from './auth/callers';
import { Chat } from './chat/chat';
import type { ChatHandler } from './chat/chat';
import { Conversation } from './chat/conversation';
import { DEFAULT_STREAM_PING_MS } from './chat/stream';
import { consoleHandlers } from './routes/console.routes';
import { createTerminalUpgrade } from './terminal/upgrade';
import type { TerminalSession } from './terminal/session';

export type AgentStatus = AgentConsoleApi.components['schemas']['AgentConsoleHealth']['status'];

export interface AgentConsoleOptions {
  agentId: string;
  agentName: string;
  workspaceId: string;
  /** Verifies console tickets and agent tokens against the hub's JWKS. */
  tokens: TokenVerifier;
  /** The key the host's console router sends in `x-svc-console-proxy-key`; without it, forwarded calls are refused. */
  proxyKey?: string | undefined;
  /** The terminal's working directory. */
  workdir: string;
  /** The terminal's shell (default `$SHELL`, else `/bin/sh`). */
  shell?: string | undefined;
  /** Where the terminal's allow-listed variables come from (default the agent's environment). */
  terminalBaseEnv?: NodeJS.ProcessEnv | undefined;
  status: () => AgentStatus;
  startedAt: Date;
  /** Answers a chat message. */
  chat: ChatHandler;
  logger: Logger;
  now?: () => Date;
  /** Messages kept in memory (default 1,000). */
  chatHistoryLimit?: number;
  /** SSE comment period (default 15 s). */
  streamPingMs?: number;
  /** Terminal WebSocket ping period (default 30 s). */
  terminalPingMs?: number;
  /** After SIGHUP, how long a terminal's process group gets before SIGKILL (default 2 s). */
  terminalKillGraceMs?: number;
  /** Check every success body against the contract (tests). */
  validateResponses?: boolean;
}

export interface AgentConsole {
  /** The HTTP routes (health, chat). */
  app: Express;
  /** The `upgrade` listener for `/terminal`. */
  handleUpgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** Adds {@link handleUpgrade} to a server that serves {@link app}. */
  attach(server: Server): void;
  /** Serves the console on `host:port` (0 = any free port). */
  listen(options: { host: string; port: number }): Promise<RunningServer>;
  /** Ends open streams and terminal sessions and waits for pending chat replies. */
  close(): Promise<void>;
  /** The conversation (read-only use: tests, diagnostics). */
  conversation: Conversation;
  /** Open terminal sessions. */
  terminalSessions(): ReadonlySet<TerminalSession>;
}

/**
 * The console endpoints an agent serves on its own port, as `agentConsoleDocument` declares them: health, chat
 * (with an SSE stream) and a terminal over WebSocket. Every refusal is problem+json, unknown paths a JSON 404.
 */
export function createAgentConsole(options: AgentConsoleOptions): AgentConsole {
  const { logger } = options;
  const now = options.now ?? (() => new Date());
  const callers = createConsoleCallers({
    agentId: options.agentId,
    workspaceId: options.workspaceId,
    tokens: options.tokens,
    proxyKey: options.proxyKey,
  });
  const conversation = new Conversation({ limit: options.chatHistoryLimit ?? 1_000, now });
  const chat = new Chat(conversation, options.agentId, options.chat, logger);
  const stop = new AbortController();
  const sessions = new Set<TerminalSession>();

  const app = createHttpApp({
    logger,
    bodyLimit: '64kb',
    configure: (express) => {
      // The router's proxy key and `?ticket=` are read here; an `Authorization` header by the operation router.
      express.use((req: Request, _res: Response, next: NextFunction) => {
        const url = new URL(req.originalUrl, 'http://localhost');
        callers.fromProxyOrTicket(presentedCredentials(req.headers, url.searchParams)).then(
          (actor) => {
            if (actor) req.actor = actor;
            next();
          },
          (error: unknown) => next(error),
        );
      });
      mountOperations<AgentConsoleApi.operations>(express, {
        document: agentConsoleDocument,
        resolver: callers.resolver,
        handlers: consoleHandlers({
          agentId: options.agentId,
          agentName: options.agentName,
          status: options.status,
          startedAt: options.startedAt,
          now,
          chat,
          streamPingMs: options.streamPingMs ?? DEFAULT_STREAM_PING_MS,
          stop: stop.signal,
        }),
        validateResponses: options.validateResponses ?? false,
        logger,
      });
    },
  });

  const handleUpgrade = createTerminalUpgrade({
    callers,
    settings: {
      workdir: options.workdir,
      shell: options.shell,
      baseEnv: options.terminalBaseEnv,
      killGraceMs: options.terminalKillGraceMs,
      pingIntervalMs: options.terminalPingMs,
    },
    logger,
    sessions,
  });

  let closing: Promise<void> | undefined;
  const agentConsole: AgentConsole = {
    app,
    handleUpgrade,
    attach(server) {
      server.on('upgrade', handleUpgrade);
    },
    async listen({ host, port }) {
      const running = await startHttpServer(app, { host, port, logger });
      agentConsole.attach(running.server);
      return {
        ...running,
        close: async (graceMs?: number) => {
          const closed = running.close(graceMs);
          await agentConsole.close();
          await closed;
        },
      };
    },
    close() {
      closing ??= (async () => {
        stop.abort();
        await Promise.all([...sessions].map((session) => session.close()));
        await chat.idle();
      })();
      return closing;
    },
    conversation,
    terminalSessions: () => sessions,
  };
  return agentConsole;
}
