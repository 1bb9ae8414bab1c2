import type { IncomingMessage } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { checkAccess } from '@svc/auth';
import type { Actor } from '@svc/auth';
import { AppError, newRequestId, toProblem } from '@svc/service-kit';
import type { Logger } from '@svc/service-kit';
import { WebSocketServer } from 'ws';
import { presentedCredentials } from '../auth/callers';
import type { ConsoleCallers } from '../auth/callers';
import { TerminalSession } from './session';
import type { TerminalSettings, TerminalSize } from './session';

export const TERMINAL_PATH = '/terminal';
/** Who may open a terminal (the contract's `x-svc-actors` of `openAgentTerminal`): participants only. */
const TERMINAL_ACCESS = { actors: ['participant'] as const, scopes: [] };
/** Largest frame a client may send (keystrokes and pastes). */
const MAX_FRAME_BYTES = 1024 * 1024;

export interface TerminalUpgradeDeps {
  callers: ConsoleCallers;
  settings: TerminalSettings;
  logger: Logger;
  /** Open sessions, so the console can end them at shutdown. */
  sessions: Set<TerminalSession>;
}

function dimension(query: URLSearchParams, name: 'cols' | 'rows', fallback: number): number {
  const raw = query.get(name);
  if (raw === null) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < 1 || value > 1000) {
    throw new AppError({
      status: 400,
      code: 'validation_failed',
      detail: `query/${name} must be an integer from 1 to 1000`,
      extra: { errors: [{ location: `query/${name}`, message: 'must be an integer from 1 to 1000' }] },
    });
  }
  return value;
}

/** Answers a refused upgrade the way every other refusal is answered: problem+json, then the socket closes. */
function refuse(socket: Duplex, error: unknown, requestId: string, logger: Logger): void {
  const problem = toProblem(error, requestId);
  if (problem.internal) logger.error({ err: error, request_id: requestId }, 'terminal upgrade failed');
  const body = JSON.stringify(problem.body);
  const headers = {
    'Content-Type': 'application/problem+json',
    'Content-Length': String(Buffer.byteLength(body)),
    'X-Request-Id': requestId,
    Connection: 'close',
    ...problem.headers,
  };
  const head = [
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? 'Error'}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ].join('\r\n');
  if (socket.writable) socket.end(`${head}\r\n\r\n${body}`);
  // Never leave the socket to the peer: destroy it shortly even if it does not read the answer.
  setTimeout(() => socket.destroy(), 1_000).unref();
}

/**
 * The `upgrade` listener of the console's HTTP server. Only `/terminal` upgrades; the caller is authenticated
 * exactly as on the HTTP routes (ticket, own agent token, or the router's proxy key) and must be a participant;
 * then the query is checked and the WebSocket handshake completes into a {@link TerminalSession}. Every refusal
 * is a JSON HTTP answer on the socket, which is then closed.
 */
export function createTerminalUpgrade(deps: TerminalUpgradeDeps) {
  const { callers, settings, logger, sessions } = deps;
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  wss.on('error', (error) => logger.warn({ err: error }, 'terminal WebSocket server error'));

  async function admit(req: IncomingMessage, socket: Duplex, head: Buffer, requestId: string) {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== TERMINAL_PATH) {
      throw new AppError({
        status: 404,
        code: 'route_not_found',
        detail: `No WebSocket route for ${url.pathname}.`,
      });
    }
    const actor: Actor | undefined = await callers.identify(
      presentedCredentials(req.headers, url.searchParams),
    );
    const denied = checkAccess(actor, TERMINAL_ACCESS);
    if (denied) throw denied;
    const size: TerminalSize = {
      cols: dimension(url.searchParams, 'cols', 80),
      rows: dimension(url.searchParams, 'rows', 24),
    };
    if (socket.destroyed) return;
    wss.handleUpgrade(req, socket, head, (ws) => {
      const session = new TerminalSession(ws, settings, size, logger);
      sessions.add(session);
      void session.ended.then(() => sessions.delete(session));
      logger.info(
        {
          request_id: requestId,
          pid: session.pid,
          caller: actor?.kind === 'participant' ? actor.participantId : null,
        },
        'terminal opened',
      );
    });
  }

  return (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', (error) => logger.debug({ err: error }, 'terminal upgrade socket error'));
    const incoming = req.headers['x-request-id'];
    const requestId =
      typeof incoming === 'string' && /^[A-Za-z0-9._:-]{8,128}$/.test(incoming) ? incoming : newRequestId();
    admit(req, socket, head, requestId).catch((error: unknown) => refuse(socket, error, requestId, logger));
  };
}
