import net from 'node:net';

/**
 * Whether something accepts a TCP connection on 127.0.0.1:`port` within `timeoutMs`: how the router tells a
 * stopped agent (503) from a live one before it answers a request it refuses anyway (401/403).
 *
 * A stopped agent's port refuses at once, so the timeout only decides for a port that swallows connections.
 * When the timer fires the decision waits one turn of the event loop: on a loaded host the loop can stall
 * past the timeout while the connection has in fact completed, and its event is then still queued behind
 * the timer — it must win.
 */
export function isListening(port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let settled = false;
    const done = (listening: boolean) => {
      if (settled) return;
      settled = true;
      socket.removeAllListeners();
      socket.on('error', () => undefined);
      socket.destroy();
      resolve(listening);
    };
    socket.setTimeout(timeoutMs, () => setImmediate(() => done(false)));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
