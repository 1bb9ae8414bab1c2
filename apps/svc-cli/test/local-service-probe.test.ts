import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { probe } from '../src/data/local-service-probe';

/** The runtime's probes of its relay and console router, against a real HTTP server. */
describe('local service probe', () => {
  let server: Server | undefined;

  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  async function listen(port: number): Promise<boolean> {
    server = createServer((req, res) => {
      res.writeHead(req.url === '/readyz' ? 200 : 503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: req.url === '/readyz' ? 'ready' : 'draining' }));
    });
    return new Promise((resolve) => {
      server!.once('error', () => resolve(false));
      server!.listen(port, '127.0.0.1', () => resolve(true));
    });
  }

  test('when the service listens on a port the global fetch refuses (10080), then the probe still reaches it', async () => {
    // Skipped only when another process on this machine holds the port (the test servers never take it).
    if (!(await listen(10_080))) return;
    await expect(probe('http://127.0.0.1:10080/readyz')).resolves.toMatchObject({
      ok: true,
      status: 200,
      body: { status: 'ready' },
    });
  });

  test('when the service answers an error, then the probe says its status in one line', async () => {
    await listen(0);
    const { port } = server!.address() as { port: number };
    await expect(probe(`http://127.0.0.1:${port}/other`)).resolves.toMatchObject({
      ok: false,
      status: 503,
      detail: 'HTTP 503',
    });
  });

  test('when nothing listens, then the probe says not answering with the system error', async () => {
    await listen(0);
    const { port } = server!.address() as { port: number };
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = undefined;
    await expect(probe(`http://127.0.0.1:${port}/readyz`)).resolves.toMatchObject({
      ok: false,
      status: null,
      detail: 'not answering (ECONNREFUSED)',
    });
  });
});
