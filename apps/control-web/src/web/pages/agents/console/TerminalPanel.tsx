import { useEffect, useId, useRef, useState } from 'react';
import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { ProblemMessage } from '../../../components/ProblemMessage';
import { routeInlineStylesToConstructedSheets } from './constructed-styles';
import type { TicketSource } from './tickets';
import { withTicket } from './tickets';

type Phase =
  | { kind: 'connecting' }
  | { kind: 'open' }
  | { kind: 'closed'; code: number; reason: string }
  | { kind: 'failed'; error: unknown };

const SIZES = { small: 'Small', medium: 'Medium', large: 'Large' } as const;
type Size = keyof typeof SIZES;

/** `http(s)://…` → `ws(s)://…` */
function webSocketBase(consoleUrl: string): string {
  return consoleUrl.replace(/^http/, 'ws');
}

/**
 * A real terminal in the agent's workdir: xterm.js over the console router's WebSocket
 * (`{console}/terminal?ticket=…&cols=&rows=`, a fresh 60 s ticket per connection). Terminal bytes go both
 * ways as binary frames; when the panel changes size the terminal is refitted and the new size is sent as
 * `{"type":"resize","cols":N,"rows":M}`, which resizes the pty. Closing the panel closes the socket (the agent
 * then ends the shell).
 */
export function TerminalPanel({ consoleUrl, tickets }: { consoleUrl: string; tickets: TicketSource }) {
  const [open, setOpen] = useState(false);
  const [size, setSize] = useState<Size>('medium');
  const sizeId = useId();
  return (
    <section aria-labelledby="terminal-title" className="console-panel console-terminal">
      <div className="console-panel-head">
        <h3 id="terminal-title">Terminal</h3>
        {open && (
          <span className="terminal-size">
            <label htmlFor={sizeId}>Size</label>
            <select id={sizeId} value={size} onChange={(e) => setSize(e.target.value as Size)}>
              {Object.entries(SIZES).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </span>
        )}
        {open ? (
          <button type="button" onClick={() => setOpen(false)}>
            Close terminal
          </button>
        ) : (
          <button type="button" className="button-primary" onClick={() => setOpen(true)}>
            Open terminal
          </button>
        )}
      </div>
      {open ? (
        <TerminalView consoleUrl={consoleUrl} tickets={tickets} size={size} />
      ) : (
        <p className="muted">A shell in the agent&apos;s working directory on its runtime host.</p>
      )}
    </section>
  );
}

function TerminalView({
  consoleUrl,
  tickets,
  size,
}: {
  consoleUrl: string;
  tickets: TicketSource;
  size: Size;
}) {
  const screen = useRef<HTMLDivElement>(null);
  const [phase, setPhase] = useState<Phase>({ kind: 'connecting' });
  const [dims, setDims] = useState<{ cols: number; rows: number }>();

  useEffect(() => {
    const element = screen.current;
    if (!element) return;
    const release = routeInlineStylesToConstructedSheets();
    const term = new Terminal({ cursorBlink: true, fontSize: 14, scrollback: 2000 });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(element);
    fit.fit();
    setDims({ cols: term.cols, rows: term.rows });
    let socket: WebSocket | undefined;
    let disposed = false;
    const encoder = new TextEncoder();
    const send = (data: string | Uint8Array) => {
      if (socket?.readyState === WebSocket.OPEN) socket.send(data);
    };
    const subscriptions = [
      term.onData((data) => send(encoder.encode(data))),
      term.onBinary((data) => send(Uint8Array.from(data, (c) => c.charCodeAt(0)))),
      term.onResize(({ cols, rows }) => {
        setDims({ cols, rows });
        send(JSON.stringify({ type: 'resize', cols, rows }));
      }),
    ];
    let frame = 0;
    const observer = new ResizeObserver(() => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => fit.fit());
    });
    observer.observe(element);

    tickets
      .fresh()
      .then((ticket) => {
        if (disposed) return;
        const url = withTicket(webSocketBase(consoleUrl), '/terminal', ticket, {
          cols: term.cols,
          rows: term.rows,
        });
        const ws = new WebSocket(url);
        ws.binaryType = 'arraybuffer';
        socket = ws;
        ws.onopen = () => {
          setPhase({ kind: 'open' });
          term.focus();
        };
        ws.onmessage = (event: MessageEvent<ArrayBuffer | string>) => {
          term.write(typeof event.data === 'string' ? event.data : new Uint8Array(event.data));
        };
        ws.onclose = (event) => {
          if (disposed) return;
          setPhase({ kind: 'closed', code: event.code, reason: event.reason });
          term.write('\r\n\x1b[2m[connection closed]\x1b[0m\r\n');
        };
      })
      .catch((error: unknown) => {
        if (!disposed) setPhase({ kind: 'failed', error });
      });

    return () => {
      disposed = true;
      observer.disconnect();
      cancelAnimationFrame(frame);
      for (const s of subscriptions) s.dispose();
      socket?.close(1000, 'closed by the page');
      term.dispose();
      release();
    };
  }, [consoleUrl, tickets]);

  return (
    <div className="terminal-wrap">
      <p className="terminal-state" role="status" data-testid="terminal-state">
        {phase.kind === 'connecting' && 'Connecting…'}
        {phase.kind === 'open' && `Connected${dims ? ` · ${dims.cols}×${dims.rows}` : ''}`}
        {phase.kind === 'closed' &&
          `Disconnected (${phase.code}${phase.reason ? `: ${phase.reason}` : ''})${
            phase.code === 1006 ? ' — the console router refused or dropped the connection' : ''
          }`}
        {phase.kind === 'failed' && 'Could not connect'}
      </p>
      {phase.kind === 'failed' && <ProblemMessage error={phase.error} context="No console ticket" />}
      <div
        ref={screen}
        className={`terminal-screen terminal-${size}`}
        data-testid="terminal-screen"
        aria-label="Terminal"
      />
    </div>
  );
}
