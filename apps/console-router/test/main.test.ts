import path from 'node:path';
import { exitWithin, freePort, startBuiltEntryPoint, waitUntilLive } from '@svc/testing';
import { fakeHubEnv, startFakeHub } from './support/fake-hub';

const appDir = path.resolve(__dirname, '..');
// The entry point runs from dist/ exactly as deployed (the README's test command builds first).

describe('console router entry point (node dist/main.js)', () => {
  jest.setTimeout(30_000);

  test('when started, then it answers /healthz and /readyz and exits 0 on SIGTERM within 5 s', async () => {
    const hub = await startFakeHub();
    const port = await freePort();
    const router = startBuiltEntryPoint(appDir, 'dist/main.js', {
      ...fakeHubEnv(hub.url),
      CONSOLE_ROUTER_PORT: String(port),
    });
    const url = `http://127.0.0.1:${port}`;

    try {
      await waitUntilLive(router, url);
      expect((await fetch(`${url}/readyz`)).status).toBe(200);

      router.child.kill('SIGTERM');
      expect(await exitWithin(router, 5_000)).toBe(0);
      expect(router.stdout()).toContain('"msg":"stopped"');
    } finally {
      router.child.kill('SIGKILL');
      await hub.close();
    }
  });

  test('when CONSOLE_ROUTER_PORT is not a number, then it exits 1 with one line on stderr naming it', async () => {
    const router = startBuiltEntryPoint(appDir, 'dist/main.js', {
      CONSOLE_ROUTER_PORT: 'abc',
      HUB_URL: 'http://127.0.0.1:1',
    });

    expect(await exitWithin(router, 10_000)).toBe(1);
    const lines = router.stderr().trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^console-router: invalid configuration: CONSOLE_ROUTER_PORT: /);
    expect(router.stdout()).toBe('');
  });

  test('when HUB_URL is missing, then it exits 1 with one line on stderr naming it', async () => {
    const router = startBuiltEntryPoint(appDir, 'dist/main.js', {});

    expect(await exitWithin(router, 10_000)).toBe(1);
    const lines = router.stderr().trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^console-router: invalid configuration: HUB_URL: /);
  });
});
