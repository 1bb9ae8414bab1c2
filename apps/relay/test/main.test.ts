import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eventually, exitWithin, freePort, startBuiltEntryPoint, waitUntilLive } from '@svc/testing';

const appDir = path.resolve(__dirname, '..');
// The entry point runs from dist/ exactly as deployed (the README's test command builds first).

describe('relay entry point (node dist/main.js)', () => {
  jest.setTimeout(30_000);

  test('when started, then it answers /healthz and exits 0 on SIGTERM within 5 s, never printing a secret', async () => {
    const port = await freePort();
    const secrets = {
      SVC_WORKSPACE_API_KEY: `key-${randomBytes(24).toString('hex')}`,
      SVC_RELAY_TOKEN: randomBytes(32).toString('hex'),
    };
    const relay = startBuiltEntryPoint(appDir, 'dist/main.js', {
      RELAY_PORT: String(port),
      SVC_HUB_URL: `http://127.0.0.1:${await freePort()}`,
      SVC_WORKSPACE: 'acme',
      ...secrets,
    });
    const url = `http://127.0.0.1:${port}`;

    await waitUntilLive(relay, url);
    const status = (await (await fetch(`${url}/status`)).json()) as { port: number; pid: number };
    expect(status.port).toBe(port);
    expect(status.pid).toBe(relay.child.pid);
    expect((await fetch(`${url}/readyz`)).status).toBe(503);

    relay.child.kill('SIGTERM');
    expect(await exitWithin(relay, 5_000)).toBe(0);

    const output = relay.stdout() + relay.stderr();
    expect(output).toContain('"msg":"stopped"');
    for (const secret of Object.values(secrets)) expect(output).not.toContain(secret);
  });

  test('when SIGHUP arrives, then it re-reads SVC_WORKSPACE_API_KEY_FILE and keeps running, never logging the key', async () => {
    const port = await freePort();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-main-key-'));
    const keyFile = path.join(dir, 'runtime.key');
    const [first, second] = [randomBytes(16).toString('hex'), randomBytes(16).toString('hex')];
    fs.writeFileSync(keyFile, `svc_firstkey_${first}\n`, { mode: 0o600 });
    const relay = startBuiltEntryPoint(appDir, 'dist/main.js', {
      RELAY_PORT: String(port),
      SVC_HUB_URL: `http://127.0.0.1:${await freePort()}`,
      SVC_WORKSPACE: 'acme',
      SVC_WORKSPACE_API_KEY_FILE: keyFile,
    });
    const url = `http://127.0.0.1:${port}`;
    const checks = async () =>
      ((await (await fetch(`${url}/readyz`)).json()) as { checks: Record<string, string> }).checks;

    try {
      await waitUntilLive(relay, url);
      // The key came from the file: it is not reported missing.
      expect((await checks()).workspace_api_key).toBe('ok');

      fs.writeFileSync(keyFile, `svc_secondkey_${second}\n`);
      relay.child.kill('SIGHUP');
      await eventually(
        () => (relay.stdout().includes('switched to the runtime key in the file') ? true : undefined),
        10_000,
        'the relay logs the switch',
      );
      expect(relay.stdout()).toContain('"key_prefix":"secondkey"');

      fs.writeFileSync(keyFile, '');
      relay.child.kill('SIGHUP');
      await eventually(
        () => (relay.stdout().includes('runtime key file not read') ? true : undefined),
        10_000,
        'the relay logs that the file holds no key',
      );
      expect(relay.child.exitCode).toBeNull();
      expect((await checks()).workspace_api_key).toBe('ok');

      relay.child.kill('SIGTERM');
      expect(await exitWithin(relay, 5_000)).toBe(0);
      expect(relay.stdout() + relay.stderr()).not.toMatch(new RegExp(`${first}|${second}`));
    } finally {
      relay.child.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('when RELAY_PORT is not a number, then it exits 1 with one line on stderr naming it', async () => {
    const relay = startBuiltEntryPoint(appDir, 'dist/main.js', { RELAY_PORT: 'abc' });

    expect(await exitWithin(relay, 10_000)).toBe(1);
    const lines = relay.stderr().trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^relay: invalid configuration: RELAY_PORT: /);
    expect(relay.stdout()).toBe('');
  });
});
