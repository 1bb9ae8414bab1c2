import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseEnvFile } from '../src/data/profile-store';
import { resolveConfigPaths } from '../src/domain/config-paths';
import { startBuiltEntryPoint, waitUntilReady } from '@svc/testing';
import type { NodeProcess } from '@svc/testing';
import { assertBuilt, jsonOf, modeOf, runSvc, tempHome } from './support/cli';
import type { CliResult } from './support/cli';
import { HubStack } from './support/stack';
import type { StackHost } from './support/stack';

jest.setTimeout(120_000);

const CHECK_IDS = [
  'hub_reachable',
  'participant_credential',
  'runtime_config',
  'runtime_key',
  'runtime_instance_id',
  'agent_workdir_root',
  'relay_ready',
  'console_router_ready',
  'heartbeat_fresh',
  'file_modes',
  'clock_skew',
] as const;
type CheckId = (typeof CHECK_IDS)[number];

interface Check {
  id: string;
  status: 'pass' | 'warn' | 'fail';
  detail: string;
  fix: string | null;
}

let stack: HubStack;
let host: StackHost;
let home: string;
let configDir: string;
let relay: NodeProcess | undefined;
let router: NodeProcess | undefined;
const appsDir = path.resolve(__dirname, '..', '..');

const paths = () => resolveConfigPaths({ configDir, profile: 'default' });

function svc(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  return runSvc(args, home, {
    SVC_CONFIG_DIR: configDir,
    SVC_RUNTIME_INSTANCE_ID: host.id,
    SVC_AGENT_WORKDIR_ROOT: host.workdirRoot,
    ...env,
  });
}

/** The checks of a doctor --json run, whether it passed (result) or failed (error). */
function checksOf(result: CliResult): Record<CheckId, Check> {
  const doc = jsonOf(result);
  const checks = ((doc.ok ? doc.result : doc.error) as { checks: Check[] }).checks;
  expect(checks.map((c) => c.id)).toEqual(CHECK_IDS);
  for (const check of checks) {
    expect(['pass', 'warn', 'fail']).toContain(check.status);
    expect(check.detail).not.toContain('\n');
    if (check.status === 'pass') expect(check.fix).toBeNull();
    else expect(check.fix).toEqual(expect.any(String));
  }
  return Object.fromEntries(checks.map((c) => [c.id, c])) as Record<CheckId, Check>;
}

function statuses(checks: Record<CheckId, Check>): Record<string, string> {
  return Object.fromEntries(Object.values(checks).map((c) => [c.id, c.status]));
}

/** The host's relay and console router, started from their builds with the pulled runtime config. */
async function startLocalServices(): Promise<void> {
  const secrets = parseEnvFile(fs.readFileSync(paths().runtime_env_path, 'utf8'));
  relay = startBuiltEntryPoint(
    path.join(appsDir, 'relay'),
    'dist/main.js',
    {
      RELAY_HOST: '127.0.0.1',
      RELAY_PORT: String(host.relayPort),
      SVC_HUB_URL: stack.hubUrl,
      SVC_WORKSPACE: stack.slug,
      SVC_WORKSPACE_API_KEY: secrets.SVC_WORKSPACE_API_KEY!,
      SVC_RELAY_TOKEN: secrets.SVC_RELAY_TOKEN!,
      LOG_LEVEL: 'warn',
    },
    { name: 'the relay' },
  );
  router = startBuiltEntryPoint(
    path.join(appsDir, 'console-router'),
    'dist/main.js',
    {
      CONSOLE_ROUTER_HOST: '127.0.0.1',
      CONSOLE_ROUTER_PORT: String(host.routerPort),
      HUB_URL: stack.hubUrl,
      SVC_RUNTIME_INSTANCE_ID: host.id,
      SVC_WORKSPACE_API_KEY: secrets.SVC_WORKSPACE_API_KEY!,
      CONSOLE_ROUTER_PUBLIC_BASE_URL: `http://127.0.0.1:${host.routerPort}`,
      CONSOLE_ROUTER_UPSTREAM_SECRET: randomBytes(32).toString('base64url'),
      LOG_LEVEL: 'warn',
    },
    { name: 'the console router' },
  );
  await waitUntilReady(relay, `http://127.0.0.1:${host.relayPort}`);
  await waitUntilReady(router, `http://127.0.0.1:${host.routerPort}`);
}

beforeAll(async () => {
  assertBuilt('login', 'the accounts commands');
  stack = await HubStack.start('doctor', { projectCode: 'ACCT' });
  host = await stack.registerHost('doctor-host', '/srv/doctor-agents');
  await stack.keepHeartbeating(host);
  home = tempHome('svc-doctor-');
  configDir = path.join(home, 'svc-config');
  const login = await runSvc(
    stack.loginArgs('--pull-runtime'),
    home,
    { SVC_CONFIG_DIR: configDir },
    stack.password,
  );
  expect(login.code).toBe(0);
}, 120_000);

afterAll(async () => {
  await relay?.stop();
  await router?.stop();
  await stack?.close();
  if (home) fs.rmSync(home, { recursive: true, force: true });
});

describe('svc config doctor', () => {
  it('when no relay or console router runs on the host, then those checks fail, the rest pass, and it exits 3 with one JSON document', async () => {
    const result = await svc(['config', 'doctor', '--json']);

    expect(result.code).toBe(3);
    const doc = jsonOf(result);
    expect(doc).toMatchObject({
      ok: false,
      error: {
        code: 'doctor_checks_failed',
        exit_code: 3,
        fix: 'start the runtime on this host: svc runtime up',
        summary: { passed: 9, warned: 0, failed: 2 },
        hub_url: stack.hubUrl,
        workspace: stack.slug,
      },
    });
    expect(statuses(checksOf(result))).toEqual({
      hub_reachable: 'pass',
      participant_credential: 'pass',
      runtime_config: 'pass',
      runtime_key: 'pass',
      runtime_instance_id: 'pass',
      agent_workdir_root: 'pass',
      relay_ready: 'fail',
      console_router_ready: 'fail',
      heartbeat_fresh: 'pass',
      file_modes: 'pass',
      clock_skew: 'pass',
    });
    expect(doc.error!.hub_version).toBe('1.0.0');
  });

  it('when the human output is asked for, then there is one line per check with its mark and the fix', async () => {
    const result = await svc(['config', 'doctor']);

    expect(result.code).toBe(3);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(CHECK_IDS.length + 1);
    expect(lines[0]).toMatch(/^✓ hub_reachable: /);
    expect(lines[6]).toMatch(
      /^✗ relay_ready: relay not ready: .* — fix: start the runtime on this host: svc runtime up$/,
    );
    expect(lines[11]).toBe('9 passed, 0 warnings, 2 failed');
    expect(result.stderr).toContain('[doctor_checks_failed]');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  describe('with the relay and console router running', () => {
    beforeAll(async () => {
      await startLocalServices();
    }, 60_000);

    it('when everything is in place, then every check passes and it exits 0', async () => {
      const result = await svc(['config', 'doctor', '--json']);

      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const doc = jsonOf(result);
      expect(doc).toMatchObject({ ok: true, result: { summary: { passed: 11, warned: 0, failed: 0 } } });
      expect(Object.values(statuses(checksOf(result)))).toEqual(CHECK_IDS.map(() => 'pass'));
    });

    it.each([
      ['unset', undefined, /is not set/],
      ['a bundle id', 'wrt_0123abcd', /runtime bundle id/],
      ['not an inventory id', 'host-1', /not an inventory id/],
      ['another host', 'rti_00000000000000000000000000', /pulled runtime config is for/],
    ])(
      'when SVC_RUNTIME_INSTANCE_ID is %s, then that check fails and it exits 3',
      async (_label, value, detail) => {
        const result = await svc(['config', 'doctor', '--json'], { SVC_RUNTIME_INSTANCE_ID: value });

        expect(result.code).toBe(3);
        const checks = checksOf(result);
        expect(checks.runtime_instance_id).toMatchObject({
          status: 'fail',
          detail: expect.stringMatching(detail),
          fix: `export SVC_RUNTIME_INSTANCE_ID=${host.id}`,
        });
        expect(jsonOf(result).error!.summary).toEqual({ passed: 10, warned: 0, failed: 1 });
      },
    );

    it('when SVC_AGENT_WORKDIR_ROOT is not the host workdir_root, then that check fails with the right value as the fix', async () => {
      const result = await svc(['config', 'doctor', '--json'], { SVC_AGENT_WORKDIR_ROOT: '/srv/agents' });

      expect(result.code).toBe(3);
      expect(checksOf(result).agent_workdir_root).toMatchObject({
        status: 'fail',
        fix: `export SVC_AGENT_WORKDIR_ROOT=${host.workdirRoot}`,
      });
    });

    it('when a secret file was loosened, then file_modes fails and doctor leaves the mode as it found it', async () => {
      fs.chmodSync(paths().runtime_env_path, 0o644);
      try {
        const result = await svc(['config', 'doctor', '--json']);

        expect(result.code).toBe(3);
        expect(checksOf(result).file_modes).toMatchObject({
          status: 'fail',
          detail: `${paths().runtime_env_path} is 0644`,
          fix: expect.stringContaining(`chmod 600 ${paths().runtime_env_path}`),
        });
      } finally {
        // doctor reports only; the next write (or read) by svc re-applies 0600.
        expect(modeOf(paths().runtime_env_path)).toBe(0o644);
        fs.chmodSync(paths().runtime_env_path, 0o600);
      }
    });

    it('when the relay stops, then relay_ready fails and it exits 3', async () => {
      await relay!.stop();
      relay = undefined;

      const result = await svc(['config', 'doctor', '--json']);

      expect(result.code).toBe(3);
      const checks = checksOf(result);
      expect(checks.relay_ready).toMatchObject({
        status: 'fail',
        detail: expect.stringContaining('ECONNREFUSED'),
      });
      expect(checks.console_router_ready.status).toBe('pass');
    });

    it('when the runtime key was revoked by a rotation elsewhere (overlap 0), then runtime_key fails', async () => {
      const copy = path.join(home, 'stale-config');
      fs.cpSync(configDir, copy, { recursive: true });
      // A rotation for a leaked key issues a new key for the host and revokes the one in the copy at once.
      expect((await svc(['config', 'pull-runtime', '--rotate-key', '--overlap', '0'])).code).toBe(0);

      const result = await svc(['config', 'doctor', '--json'], { SVC_CONFIG_DIR: copy });

      expect(result.code).toBe(3);
      const checks = checksOf(result);
      expect(checks.runtime_key).toMatchObject({ status: 'fail', fix: 'svc config pull-runtime' });
      expect(checks.participant_credential.status).toBe('pass');
      // (the console router still holds the revoked key too, so it is no longer ready)
    });
  });

  it('when the host never sent a heartbeat, then heartbeat_fresh fails; an old pull only warns', async () => {
    const silent = await stack.registerHost('doctor-silent-host', '/srv/silent');
    const silentDir = path.join(home, 'silent-config');
    fs.cpSync(configDir, silentDir, { recursive: true });
    const env = {
      SVC_CONFIG_DIR: silentDir,
      SVC_RUNTIME_INSTANCE_ID: silent.id,
      SVC_AGENT_WORKDIR_ROOT: '/srv/silent',
    };
    expect((await svc(['config', 'pull-runtime'], env)).code).toBe(0);
    const profileFile = resolveConfigPaths({ configDir: silentDir, profile: 'default' }).profile_path;
    const profile = JSON.parse(fs.readFileSync(profileFile, 'utf8'));
    profile.runtime.pulled_at = new Date(Date.now() - 25 * 3600_000).toISOString();
    fs.writeFileSync(profileFile, JSON.stringify(profile));

    const result = await svc(['config', 'doctor', '--json'], env);

    expect(result.code).toBe(3);
    const checks = checksOf(result);
    expect(checks.heartbeat_fresh).toMatchObject({
      status: 'fail',
      detail: 'the hub has no heartbeat from this host',
      fix: 'start the runtime on this host: svc runtime up',
    });
    expect(checks.runtime_config).toMatchObject({ status: 'warn', fix: 'svc config pull-runtime' });
    expect(checks.runtime_instance_id.status).toBe('pass');
    expect(checks.agent_workdir_root.status).toBe('pass');
  });

  it('when the profile is not logged in, then the hub checks fail with the login fix and it exits 3', async () => {
    const result = await svc(['config', 'doctor', '--json'], { SVC_CONFIG_DIR: path.join(home, 'empty') });

    expect(result.code).toBe(3);
    const checks = checksOf(result);
    expect(checks.hub_reachable).toMatchObject({ status: 'fail', fix: expect.stringContaining('svc login') });
    expect(checks.file_modes.status).toBe('pass');
  });
});
