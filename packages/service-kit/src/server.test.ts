import http from 'node:http';
import net from 'node:net';
import express from 'express';
import { startHttpServer } from './server';

/** Requests `/slow` on a keep-alive agent; resolves with the answer's `connection` header. */
function getSlow(url: string, agent: http.Agent): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    http
      .get(`${url}/slow`, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.headers.connection));
      })
      .on('error', reject);
  });
}

describe('HTTP server shutdown', () => {
  const app = express();
  app.get('/slow', (_req, res) => void setTimeout(() => res.json({ ok: true }), 300));
  app.get('/fast', (_req, res) => void res.json({ ok: true }));

  test('when closed with a request in flight, an idle keep-alive connection and a connection that never sent a request, then the request is answered and close ends well before the grace period', async () => {
    const server = await startHttpServer(app, { host: '127.0.0.1', port: 0 });
    const silent = net.connect(server.port, '127.0.0.1');
    await new Promise((resolve) => silent.once('connect', resolve));
    const silentEnded = new Promise((resolve) => silent.once('close', resolve));
    const idleAgent = new http.Agent({ keepAlive: true });
    await new Promise<void>((resolve) =>
      http.get(`${server.url}/fast`, { agent: idleAgent }, (res) => res.resume().on('end', resolve)),
    );
    const busyAgent = new http.Agent({ keepAlive: true });
    const answer = getSlow(server.url, busyAgent);
    await new Promise((resolve) => setTimeout(resolve, 50));

    const started = Date.now();
    await server.close(10_000);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await answer).toBe('close');
    await silentEnded;
    idleAgent.destroy();
    busyAgent.destroy();
  });

  test('when a request outlives the grace period, then its connection is cut when the grace period ends', async () => {
    const hanging = express();
    hanging.get('/hang', () => undefined);
    const server = await startHttpServer(hanging, { host: '127.0.0.1', port: 0 });
    const failed = new Promise<string>((resolve) => {
      http.get(`${server.url}/hang`, () => resolve('answered')).on('error', (e) => resolve(e.message));
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await server.close(300);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(await failed).toBe('socket hang up');
  });

  test('when a connection was upgraded, then close leaves it to whoever took the upgrade', async () => {
    const server = await startHttpServer(express(), { host: '127.0.0.1', port: 0 });
    const upgraded: net.Socket[] = [];
    server.server.on('upgrade', (_req, socket: net.Socket) => {
      socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n');
      upgraded.push(socket);
    });
    const client = net.connect(server.port, '127.0.0.1');
    await new Promise((resolve) => client.once('connect', resolve));
    client.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n');
    await new Promise((resolve) => client.once('data', resolve));
    const closing = server.close(10_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(client.destroyed).toBe(false);
    // The owner of the upgrade ends it (as the agent console ends its terminals): then the server closes.
    const ended = new Promise((resolve) => client.once('close', resolve));
    upgraded[0]!.end();
    await ended;
    await closing;
  });
});
