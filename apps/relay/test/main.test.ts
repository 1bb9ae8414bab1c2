import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { exitWithin, freePort, startBuiltEntryPoint, waitUntilLive } from '@svc/testing';

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

  test('when RELAY_PORT is not a number, then it exits 1 with one line on stderr naming it', async () => {
    const relay = startBuiltEntryPoint(appDir, 'dist/main.js', { RELAY_PORT: 'abc' });

    expect(await exitWithin(relay, 10_000)).toBe(1);
    const lines = relay.stderr().trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^relay: invalid configuration: RELAY_PORT: /);
    expect(relay.stdout()).toBe('');
  });
});
