import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eventually, exitWithin, freePort, startBuiltEntryPoint, waitUntilLive } from '@svc/testing';
import { FAKE_TABLE_PATH, fakeHubEnv, startFakeHub } from './support/fake-hub';

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

  test('when SIGHUP arrives, then it re-reads SVC_WORKSPACE_API_KEY_FILE and keeps running, never logging the key', async () => {
    const hub = await startFakeHub();
    const port = await freePort();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'router-main-key-'));
    const keyFile = path.join(dir, 'runtime.key');
    fs.writeFileSync(keyFile, 'svc_firstkey_aaaaaaaaaaaaaaaa\n', { mode: 0o600 });
    const { SVC_WORKSPACE_API_KEY: _fromEnv, ...env } = fakeHubEnv(hub.url);
    const router = startBuiltEntryPoint(appDir, 'dist/main.js', {
      ...env,
      SVC_WORKSPACE_API_KEY_FILE: keyFile,
      CONSOLE_ROUTER_PORT: String(port),
    });
    const url = `http://127.0.0.1:${port}`;
    const tableLoads = () => hub.requests.filter((r) => r.startsWith(FAKE_TABLE_PATH)).length;

    try {
      await waitUntilLive(router, url);
      expect((await fetch(`${url}/readyz`)).status).toBe(200);

      fs.writeFileSync(keyFile, 'svc_secondkey_bbbbbbbbbbbbbbbb\n');
      const before = tableLoads();
      router.child.kill('SIGHUP');
      await eventually(
        () => (router.stdout().includes('switched to the runtime key in the file') ? true : undefined),
        10_000,
        'the router logs the switch',
      );
      // The switch reloads the route table once, at once (the poll is 5 s away).
      await eventually(
        () => (tableLoads() > before ? true : undefined),
        5_000,
        'a table load after the switch',
      );
      expect(router.stdout()).toContain('"key_prefix":"secondkey"');

      fs.rmSync(keyFile);
      router.child.kill('SIGHUP');
      await eventually(
        () => (router.stdout().includes('runtime key file not read') ? true : undefined),
        10_000,
        'the router logs that the file could not be read',
      );
      expect(router.child.exitCode).toBeNull();
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
      expect(router.stdout() + router.stderr()).not.toMatch(/aaaaaaaa|bbbbbbbb/);
    } finally {
      router.child.kill('SIGKILL');
      await hub.close();
      fs.rmSync(dir, { recursive: true, force: true });
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
