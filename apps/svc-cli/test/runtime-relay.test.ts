import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { eventually, freePort } from '@svc/testing';
import { assertBuilt, isAlive, modeOf, runSvc, startSvc } from './support/cli';
import { HubStack, tempProfile } from './support/stack';
import type { RuntimeConfig } from './support/stack';

/** `svc internal relay start|status|health` with the real relay build, configured from a real hub's runtime config. */
describe('svc internal relay', () => {
  jest.setTimeout(120_000);

  let stack: HubStack;
  let config: RuntimeConfig;
  let relayPort: number;
  const configured = tempProfile('svc-relay-');
  let daemonPid: number | undefined;

  beforeAll(async () => {
    assertBuilt('internal/relay/start', 'the relay commands');
    stack = await HubStack.start('rt-relay', { projectCode: 'RT' });
    const host = await stack.registerHost('relay-host', os.tmpdir());
    relayPort = host.relayPort;
    config = await stack.writeProfile(configured.paths, host.id);
  });

  afterAll(async () => {
    if (daemonPid && isAlive(daemonPid)) process.kill(daemonPid, 'SIGKILL');
    await stack?.close();
  });

  it('when no SVC_RELAY_TOKEN is available, then start exits 4 naming it', async () => {
    const bare = tempProfile('svc-relay-bare-');

    const result = await runSvc(
      ['internal', 'relay', 'start', '--port', String(await freePort()), '--json'],
      bare.home,
    );

    expect(result.code).toBe(4);
    expect(JSON.parse(result.stdout).error).toMatchObject({
      code: 'auth_required',
      message: expect.stringContaining('SVC_RELAY_TOKEN'),
    });
  });

  it('when no relay runs, then health and status exit 1 with relay_not_running', async () => {
    const health = await runSvc(['internal', 'relay', 'health', '--json'], configured.home);
    const status = await runSvc(['internal', 'relay', 'status', '--json'], configured.home);

    expect([health.code, JSON.parse(health.stdout).error.code]).toEqual([1, 'relay_not_running']);
    expect([status.code, JSON.parse(status.stdout).error.code]).toEqual([1, 'relay_not_running']);
  });

  it('when started with --daemon, then it runs detached with a 0600 pid file and log, and is healthy and ready', async () => {
    const start = await runSvc(['internal', 'relay', 'start', '--daemon', '--json'], configured.home);

    expect(start.code).toBe(0);
    const started = JSON.parse(start.stdout).result;
    daemonPid = started.pid;
    expect(started).toMatchObject({ mode: 'daemon', url: `http://127.0.0.1:${relayPort}` });
    expect(fs.readFileSync(started.pid_file, 'utf8').trim()).toBe(String(started.pid));
    expect([modeOf(started.pid_file), modeOf(started.log_file)]).toEqual([0o600, 0o600]);

    const health = await eventually(
      async () => {
        const r = await runSvc(['internal', 'relay', 'health', '--json'], configured.home);
        return r.code === 0 ? JSON.parse(r.stdout).result : undefined;
      },
      60_000,
      'the relay is ready',
      { intervalMs: 250 },
    );
    expect(health).toMatchObject({ live: true, ready: true, checks: { hub: 'ok', workspace_api_key: 'ok' } });

    const status = await runSvc(['internal', 'relay', 'status', '--json'], configured.home);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout).result).toMatchObject({
      daemon: { pid: started.pid },
      status: { pid: started.pid, port: relayPort },
    });

    const again = await runSvc(['internal', 'relay', 'start', '--daemon', '--json'], configured.home);
    expect([again.code, JSON.parse(again.stdout).error.code]).toEqual([1, 'relay_already_running']);

    const secrets = [config.auth.relay_token, config.auth.workspace_api_key];
    for (const output of [start, status, again])
      for (const s of secrets) expect(output.stdout + output.stderr).not.toContain(s);
    for (const s of secrets) expect(fs.readFileSync(started.log_file, 'utf8')).not.toContain(s);
  });

  it('when run in the foreground without a workspace key, then health exits 1 not ready, and SIGTERM stops it', async () => {
    const bare = tempProfile('svc-relay-fg-');
    const port = await freePort();
    const relay = startSvc(
      ['internal', 'relay', 'start', '--host', '127.0.0.1', '--port', String(port)],
      bare.home,
      {
        SVC_RELAY_TOKEN: `rly_${randomBytes(24).toString('base64url')}`,
      },
    );

    const notReady = await eventually(
      async () => {
        const r = await runSvc(['internal', 'relay', 'health', '--port', String(port), '--json'], bare.home);
        const error = JSON.parse(r.stdout).error;
        return r.code === 1 && error.code === 'relay_not_ready' ? error : undefined;
      },
      60_000,
      'the foreground relay answers',
      { intervalMs: 250, describe: relay.output },
    );
    expect(notReady.checks).toMatchObject({
      workspace_api_key: expect.stringContaining('missing SVC_WORKSPACE_API_KEY'),
    });

    relay.child.kill('SIGTERM');
    expect(await relay.exited).toBe(0);
    const after = await runSvc(['internal', 'relay', 'health', '--port', String(port), '--json'], bare.home);
    expect(JSON.parse(after.stdout).error.code).toBe('relay_not_running');
  });

  it('when the terminal of a foreground relay goes away (SIGHUP), then the relay stops too', async () => {
    const bare = tempProfile('svc-relay-hup-');
    const port = await freePort();
    const relay = startSvc(
      ['internal', 'relay', 'start', '--host', '127.0.0.1', '--port', String(port)],
      bare.home,
      { SVC_RELAY_TOKEN: `rly_${randomBytes(24).toString('base64url')}` },
    );
    await eventually(
      async () => {
        const r = await runSvc(['internal', 'relay', 'health', '--port', String(port), '--json'], bare.home);
        return JSON.parse(r.stdout).error?.code === 'relay_not_ready' ? true : undefined;
      },
      60_000,
      'the foreground relay answers',
      { intervalMs: 250, describe: relay.output },
    );

    // The relay itself takes SIGHUP as "re-read the key file"; svc hands it on as a stop.
    relay.child.kill('SIGHUP');
    expect(await relay.exited).toBe(0);
    const after = await runSvc(['internal', 'relay', 'health', '--port', String(port), '--json'], bare.home);
    expect(JSON.parse(after.stdout).error.code).toBe('relay_not_running');
  });
});
