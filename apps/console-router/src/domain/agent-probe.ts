import net from 'node:net';

/**
 * Whether something accepts a TCP connection on 127.0.0.1:`port` within `timeoutMs`: how the router tells a
 * stopped agent (503) from a live one before it answers a request it refuses anyway (401/403).
 */
export function isListening(port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (listening: boolean) => {
      socket.removeAllListeners();
      socket.on('error', () => undefined);
      socket.destroy();
      resolve(listening);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
