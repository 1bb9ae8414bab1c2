import fs from 'node:fs';
import path from 'node:path';
import { createHubClient, unwrap } from '@svc/contracts';
import { readAgentState, writeAgentState } from '../src/data/agent-state';
import type { AgentLocalState } from '../src/data/agent-state';
import { resolveConfigPaths } from '../src/domain/config-paths';
import { assertBuilt, jsonOf, modeOf, runSvc, tempHome } from './support/cli';
import type { CliResult } from './support/cli';
import { HubStack } from './support/stack';
import type { StackHost } from './support/stack';

jest.setTimeout(120_000);

/** What `config show` / `config redact` print, as far as these tests read it. */
interface ConfigDocument {
  profile: { participant: Record<string, unknown>; runtime: Record<string, unknown> };
  runtime_env: Record<string, string> | null;
  environment: Record<string, string | null>;
  agents: Array<Record<string, unknown>>;
}

let stack: HubStack;
let host: StackHost;
let home: string;
let configDir: string;

const svc = (args: string[], options: { env?: Record<string, string | undefined>; stdin?: string } = {}) =>
  runSvc(args, home, { SVC_CONFIG_DIR: configDir, ...options.env }, options.stdin);

const paths = () => resolveConfigPaths({ configDir, profile: 'default' });

function expectNoStack(result: CliResult): void {
  expect(result.stderr).not.toMatch(/\n\s+at /);
  expect(result.stdout).not.toMatch(/\n\s+at /);
}

async function login(extra: string[] = [], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  return svc(stack.loginArgs(...extra), { stdin: `${stack.password}\n`, env });
}

beforeAll(async () => {
  assertBuilt('login', 'the accounts commands');
  stack = await HubStack.start('accounts', { projectCode: 'ACCT' });
  host = await stack.registerHost('accounts-host', '/srv/agents');
  await stack.keepHeartbeating(host);
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

beforeEach(() => {
  home = tempHome('svc-accounts-');
  configDir = path.join(home, 'svc-config');
});

afterEach(() => {
  fs.rmSync(home, { recursive: true, force: true });
});

describe('svc login', () => {
  it('when the password comes on stdin with --pull-runtime, then the profile and runtime secrets are stored 0600 in a 0700 directory and the pull is audited', async () => {
    const result = await login(['--pull-runtime', '--json']);

    expect(result.code).toBe(0);
    const doc = jsonOf(result);
    expect(doc).toMatchObject({
      ok: true,
      result: {
        hub_url: stack.hubUrl,
        workspace: stack.slug,
        participant: { email: stack.email },
        runtime: {
          runtime_instance_id: host.id,
          stored_secrets: ['SVC_RELAY_TOKEN', 'SVC_WORKSPACE_API_KEY'],
        },
      },
    });
    const p = paths();
    expect(modeOf(configDir)).toBe(0o700);
    expect(modeOf(path.dirname(p.profile_path))).toBe(0o700);
    expect(modeOf(p.profile_path)).toBe(0o600);
    expect(modeOf(p.runtime_env_path)).toBe(0o600);
    const profile = JSON.parse(fs.readFileSync(p.profile_path, 'utf8'));
    expect(profile.participant.token).toMatch(/^eyJ/);
    expect(profile.runtime).toMatchObject({ runtime_instance_id: host.id });
    expect(profile.runtime.auth).toBeUndefined();
    expect(Date.parse(profile.runtime.pulled_at)).toBeGreaterThan(Date.now() - 120_000);
    const envFile = fs.readFileSync(p.runtime_env_path, 'utf8');
    const relayToken = /^SVC_RELAY_TOKEN=(.+)$/m.exec(envFile)?.[1];
    const apiKey = /^SVC_WORKSPACE_API_KEY=(.+)$/m.exec(envFile)?.[1];
    expect(relayToken).toBeTruthy();
    expect(apiKey).toMatch(/^svc_/);
    for (const secret of [relayToken!, apiKey!, profile.participant.token, stack.password]) {
      expect(result.stdout).not.toContain(secret);
      expect(result.stderr).not.toContain(secret);
    }
    // The pulled key works as the runtime's key.
    const asRuntime = createHubClient({ baseUrl: stack.hubUrl, apiKey: apiKey! });
    expect(
      unwrap(await asRuntime.GET('/api/v1/runtime-hosts/{hostId}', { params: { path: { hostId: host.id } } }))
        .id,
    ).toBe(host.id);
    const audit = unwrap(
      await stack.participant.GET('/api/v1/workspaces/{workspace}/audit-events', {
        params: { path: { workspace: stack.slug }, query: { action: 'runtime_config.pulled' } },
      }),
    ) as unknown as Array<{ action: string }>;
    expect(audit.length).toBeGreaterThanOrEqual(1);
  });

  it('when the password is wrong, then it exits 4 with one line and the fix, and no stack trace', async () => {
    const result = await svc(stack.loginArgs(), { stdin: 'not-the-password\n' });

    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    expect(result.stderr.trimEnd().split('\n')).toEqual([
      'svc: the hub refused the email or password [invalid_credentials]',
      expect.stringMatching(/^ {2}fix: /),
    ]);
    expectNoStack(result);
    expect(fs.existsSync(paths().profile_path)).toBe(false);
  });

  it('when the password is wrong with --json, then stdout is one failure document with exit_code 4', async () => {
    const result = await svc(stack.loginArgs('--json'), { stdin: 'not-the-password' });

    expect(result.code).toBe(4);
    expect(jsonOf(result)).toEqual({
      ok: false,
      error: expect.objectContaining({ code: 'invalid_credentials', exit_code: 4, fix: expect.any(String) }),
    });
  });

  it('when stdin is not a terminal and there is no --email, then it exits 2 asking for --email', async () => {
    const result = await svc(['login', '--hub-url', stack.hubUrl, '--workspace', stack.slug, '--json']);

    expect(result.code).toBe(2);
    expect(jsonOf(result).error).toMatchObject({
      code: 'email_required',
      exit_code: 2,
      fix: 'pass --email <address>',
    });
  });

  it('when stdin is not a terminal and there is no --password-stdin, then it exits 2 and never takes a password flag', async () => {
    const result = await svc([
      'login',
      '--hub-url',
      stack.hubUrl,
      '--workspace',
      stack.slug,
      '--email',
      stack.email,
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('[password_required]');

    const flag = await svc([
      'login',
      '--hub-url',
      stack.hubUrl,
      '--workspace',
      stack.slug,
      '--password',
      'x',
    ]);
    expect(flag.code).toBe(2);
    expectNoStack(flag);
  });

  it("when the workspace is not one of the participant's, then it exits 4 and stores nothing", async () => {
    const result = await svc(
      [
        'login',
        '--hub-url',
        stack.hubUrl,
        '--workspace',
        'someone-else',
        '--email',
        stack.email,
        '--password-stdin',
        '--json',
      ],
      { stdin: stack.password },
    );

    expect(result.code).toBe(4);
    expect(jsonOf(result).error).toMatchObject({ code: 'workspace_not_accessible', exit_code: 4 });
    expect(fs.existsSync(paths().profile_path)).toBe(false);
  });
});

describe('svc config pull-runtime', () => {
  it('when the files were loosened by hand, then a pull writes them back 0600 in a 0700 directory', async () => {
    expect((await login()).code).toBe(0);
    const p = paths();
    expect((await svc(['config', 'pull-runtime'])).code).toBe(0);
    fs.chmodSync(p.profile_path, 0o644);
    fs.chmodSync(p.runtime_env_path, 0o666);
    fs.chmodSync(configDir, 0o755);
    const before = fs.readFileSync(p.runtime_env_path, 'utf8');

    const result = await svc(['config', 'pull-runtime', '--json'], {
      env: { SVC_RUNTIME_INSTANCE_ID: host.id },
    });

    expect(result.code).toBe(0);
    expect(jsonOf(result)).toMatchObject({ ok: true, result: { runtime_instance_id: host.id } });
    expect(modeOf(configDir)).toBe(0o700);
    expect(modeOf(p.profile_path)).toBe(0o600);
    expect(modeOf(p.runtime_env_path)).toBe(0o600);
    // The profile holds the host's current runtime key: pulling again keeps it (nothing minted or revoked).
    expect(fs.readFileSync(p.runtime_env_path, 'utf8')).toBe(before);
    expect(jsonOf(result).result).toMatchObject({ runtime_key: { rotated: false } });
  });

  it('when another configuration directory pulls, then a new key is issued and the first one keeps working for the overlap; --overlap 0 revokes it now', async () => {
    expect((await login(['--pull-runtime'])).code).toBe(0);
    const keyIn = (file: string) => /^SVC_WORKSPACE_API_KEY=(.+)$/m.exec(fs.readFileSync(file, 'utf8'))?.[1];
    const first = keyIn(paths().runtime_env_path)!;
    const asKey = (apiKey: string) =>
      createHubClient({ baseUrl: stack.hubUrl, apiKey }).GET('/api/v1/runtime-hosts/{hostId}', {
        params: { path: { hostId: host.id } },
      });
    const elsewhere = path.join(home, 'laptop-config');
    const laptop = (args: string[]) =>
      runSvc(args, home, { SVC_CONFIG_DIR: elsewhere }, `${stack.password}\n`);

    const pulled = await laptop([...stack.loginArgs('--pull-runtime'), '--json']);
    expect(pulled.code).toBe(0);
    const rotation = (jsonOf(pulled).result as { runtime: { runtime_key: Record<string, unknown> } }).runtime
      .runtime_key;
    expect(rotation).toMatchObject({ rotated: true, previous_valid_until: expect.any(String) });
    const hours = (Date.parse(rotation.previous_valid_until as string) - Date.now()) / 3600_000;
    expect(hours).toBeGreaterThan(23.9);
    expect(hours).toBeLessThanOrEqual(24);
    const second = keyIn(resolveConfigPaths({ configDir: elsewhere, profile: 'default' }).runtime_env_path)!;
    expect(second).not.toBe(first);
    // The host's key still works: no outage.
    expect((await asKey(first)).response.status).toBe(200);
    expect((await asKey(second)).response.status).toBe(200);

    const bad = await laptop(['config', 'pull-runtime', '--rotate-key', '--overlap', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('[overlap_invalid]');

    const leaked = await laptop(['config', 'pull-runtime', '--rotate-key', '--overlap', '0', '--json']);
    expect(leaked.code).toBe(0);
    expect(jsonOf(leaked).result).toMatchObject({
      runtime_key: { rotated: true, previous_valid_until: null },
    });
    expect((await asKey(second)).response.status).toBe(401);
    for (const secret of [first, second]) expect(leaked.stdout).not.toContain(secret);
  });

  it('when SVC_RUNTIME_INSTANCE_ID is a bundle id (wrt_), then it is refused by name and nothing changes', async () => {
    expect((await login(['--pull-runtime'])).code).toBe(0);
    const before = fs.readFileSync(paths().runtime_env_path, 'utf8');

    const result = await svc(['config', 'pull-runtime', '--json'], {
      env: { SVC_RUNTIME_INSTANCE_ID: 'wrt_abc123' },
    });

    expect(result.code).toBe(1);
    expect(jsonOf(result).error).toMatchObject({ code: 'runtime_bundle_id_not_allowed', exit_code: 1 });
    expect(fs.readFileSync(paths().runtime_env_path, 'utf8')).toBe(before);
  });

  it('when the profile is not logged in, then it exits 4 with the login fix', async () => {
    const result = await svc(['config', 'pull-runtime']);

    expect(result.code).toBe(4);
    expect(result.stderr).toContain('[auth_required]');
    expect(result.stderr).toContain('fix: svc login');
  });
});

describe('svc profile, config show, config reset', () => {
  it('when logged in and pulled, then profile --json summarizes the hub, workspace, participant and runtime host without secrets', async () => {
    expect((await login(['--pull-runtime'])).code).toBe(0);
    const profile = JSON.parse(fs.readFileSync(paths().profile_path, 'utf8'));

    const result = await svc(['profile', '--json']);

    expect(result.code).toBe(0);
    expect(jsonOf(result)).toEqual({
      ok: true,
      result: {
        profile: 'default',
        profile_path: paths().profile_path,
        logged_in: true,
        hub_url: stack.hubUrl,
        workspace: stack.slug,
        participant: {
          email: stack.email,
          participant_id: profile.participant.participant_id,
          expires_at: profile.participant.expires_at,
          expired: false,
        },
        runtime: {
          pulled_at: profile.runtime.pulled_at,
          runtime_instance_id: host.id,
          agent_workdir_root: host.workdirRoot,
          console_public_base_url: `http://127.0.0.1:${host.routerPort}`,
          console_router_url: `http://127.0.0.1:${host.routerPort}`,
          relay_url: `http://127.0.0.1:${host.relayPort}`,
        },
      },
    });
    expect(result.stdout).not.toContain(profile.participant.token);
  });

  it('when config show runs, then every secret is present or absent and no value is printed', async () => {
    expect((await login(['--pull-runtime'])).code).toBe(0);
    const profile = JSON.parse(fs.readFileSync(paths().profile_path, 'utf8'));
    const envFile = fs.readFileSync(paths().runtime_env_path, 'utf8');

    const result = await svc(['config', 'show', '--json'], { env: { SVC_RUNTIME_INSTANCE_ID: host.id } });
    const human = await svc(['config', 'show']);

    expect(result.code).toBe(0);
    const doc = jsonOf(result).result as unknown as ConfigDocument;
    expect(doc.profile.participant.token).toBe('present');
    expect(doc.runtime_env).toEqual({ SVC_RELAY_TOKEN: 'present', SVC_WORKSPACE_API_KEY: 'present' });
    expect(doc.environment).toMatchObject({
      SVC_RUNTIME_INSTANCE_ID: host.id,
      SVC_WORKSPACE_API_KEY: 'absent',
    });
    expect(doc.profile.runtime.runtime_instance_id).toBe(host.id);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('profile.participant.token');
    for (const secret of [
      profile.participant.token,
      ...envFile
        .split('\n')
        .map((l) => l.split('=')[1])
        .filter(Boolean),
    ]) {
      expect(result.stdout).not.toContain(secret);
      expect(human.stdout).not.toContain(secret);
    }
  });

  it('when config reset --runtime runs, then only the runtime part goes and the login stays', async () => {
    expect((await login(['--pull-runtime'])).code).toBe(0);

    const result = await svc(['config', 'reset', '--runtime', '--json']);

    expect(result.code).toBe(0);
    expect(jsonOf(result)).toEqual({
      ok: true,
      result: { profile: 'default', scope: 'runtime', removed: [paths().runtime_env_path] },
    });
    expect(fs.existsSync(paths().runtime_env_path)).toBe(false);
    const profile = JSON.parse(fs.readFileSync(paths().profile_path, 'utf8'));
    expect(profile.runtime).toBeUndefined();
    expect(profile.participant.email).toBe(stack.email);
    expect(modeOf(paths().profile_path)).toBe(0o600);
  });

  it('when config reset runs without --yes and without a terminal, then it exits 2 and removes nothing; with --yes the profile goes', async () => {
    expect((await login(['--pull-runtime'])).code).toBe(0);

    const refused = await svc(['config', 'reset', '--json']);
    expect(refused.code).toBe(2);
    expect(jsonOf(refused).error).toMatchObject({
      code: 'confirmation_required',
      fix: 'add --yes to confirm',
    });
    expect(fs.existsSync(paths().profile_path)).toBe(true);

    const done = await svc(['config', 'reset', '--yes']);
    expect(done.code).toBe(0);
    expect(fs.existsSync(paths().profile_path)).toBe(false);
    expect(fs.existsSync(paths().runtime_env_path)).toBe(false);
    expect((await svc(['profile', '--json'])).stdout).toContain('"logged_in": false');
  });
});

describe('svc config redact and svc token', () => {
  let counter = 0;

  async function startedAgentState(): Promise<AgentLocalState> {
    counter += 1;
    const name = `acct-agent-${counter}`;
    const { id, started } = await stack.startAgent(name, host.id);
    const state: AgentLocalState = {
      agent_id: id,
      name,
      workspace: stack.slug,
      runtime_instance_id: host.id,
      argv: ['node', 'agent.js'],
      workdir: `${host.workdirRoot}/${name}`,
      serve_port: null,
      serve_public_base_url: null,
      model: started.agent.model ?? null,
      capabilities: started.agent.capabilities,
      project: stack.projectCode,
      team_id: null,
      started_at: started.agent.started_at ?? new Date().toISOString(),
      agent_token: started.agent_token,
      agent_token_expires_at: started.agent_token_expires_at,
      runtime_credential: started.runtime_credential as AgentLocalState['runtime_credential'],
    };
    await writeAgentState(paths().state_dir, state);
    return state;
  }

  it('when config redact --json runs, then no participant token, relay token, API key, agent token or runtime credential survives', async () => {
    expect((await login(['--pull-runtime'])).code).toBe(0);
    const state = await startedAgentState();
    const profile = JSON.parse(fs.readFileSync(paths().profile_path, 'utf8'));
    const envFile = fs.readFileSync(paths().runtime_env_path, 'utf8');
    const extraKey = await stack.owner.createApiKey(['agents:read'], 'redact test');
    const secrets = [
      profile.participant.token,
      /^SVC_RELAY_TOKEN=(.+)$/m.exec(envFile)![1]!,
      /^SVC_WORKSPACE_API_KEY=(.+)$/m.exec(envFile)![1]!,
      state.agent_token,
      state.runtime_credential!.token,
      extraKey,
    ];

    const result = await svc(['config', 'redact', '--json'], { env: { SVC_WORKSPACE_API_KEY: extraKey } });

    expect(result.code).toBe(0);
    const doc = jsonOf(result).result as unknown as ConfigDocument;
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(16);
      expect(result.stdout).not.toContain(secret);
      // nor any long piece of it
      expect(result.stdout).not.toContain(secret.slice(-24));
    }
    expect(doc.profile.participant).toMatchObject({ email: stack.email, token: '[redacted]' });
    expect(doc.runtime_env).toEqual({ SVC_RELAY_TOKEN: '[redacted]', SVC_WORKSPACE_API_KEY: '[redacted]' });
    expect(doc.environment.SVC_WORKSPACE_API_KEY).toBe('[redacted]');
    expect(doc.agents).toHaveLength(1);
    expect(doc.agents[0]).toMatchObject({
      name: state.name,
      agent_id: state.agent_id,
      agent_token: '[redacted]',
      agent_token_expires_at: state.agent_token_expires_at,
      runtime_credential: { token: '[redacted]', provider: 'local' },
    });
  });

  it('when token info runs, then it shows the decoded expiry, subject and audience and never the token', async () => {
    expect((await login()).code).toBe(0);
    const state = await startedAgentState();

    const result = await svc(['token', 'info', '--name', state.name, '--json']);
    const human = await svc(['token', 'info', '--name', state.name]);

    expect(result.code).toBe(0);
    expect(jsonOf(result)).toMatchObject({
      ok: true,
      result: {
        name: state.name,
        agent_id: state.agent_id,
        token: {
          subject: state.agent_id,
          audience: 'agent',
          expires_at: new Date(Date.parse(state.agent_token_expires_at)).toISOString(),
          expired: false,
          scopes: null,
          claims: { runtime_instance_id: host.id, agent_name: state.name },
        },
        runtime_credential: { provider: 'local', model: 'local/echo', expired: false },
      },
    });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`subject      ${state.agent_id}`);
    for (const out of [result.stdout, human.stdout]) {
      expect(out).not.toContain(state.agent_token);
      expect(out).not.toContain(state.runtime_credential!.token);
    }
  });

  it('when token refresh runs, then the hub issues a new token and the local state holds it (0600)', async () => {
    expect((await login()).code).toBe(0);
    const state = await startedAgentState();

    const result = await svc(['token', 'refresh', '--name', state.name, '--json']);

    expect(result.code).toBe(0);
    const stored = (await readAgentState(paths().state_dir, state.name))!;
    expect(stored.agent_token).not.toBe(state.agent_token);
    expect(jsonOf(result)).toEqual({
      ok: true,
      result: expect.objectContaining({
        name: state.name,
        agent_id: state.agent_id,
        previous_expires_at: state.agent_token_expires_at,
        expires_at: stored.agent_token_expires_at,
        supervised: false,
        restarted: false,
      }),
    });
    expect(result.stdout).not.toContain(stored.agent_token);
    expect(modeOf(path.join(paths().state_dir, 'agents', state.name, 'state.json'))).toBe(0o600);
    // The new token is a real one.
    const asAgent = createHubClient({ baseUrl: stack.hubUrl, token: stored.agent_token });
    expect(unwrap(await asAgent.GET('/api/v1/agents/me')).id).toBe(state.agent_id);
    expect((await svc(['token', 'health', '--name', state.name])).code).toBe(0);
  });

  it('when token health runs, then a valid token exits 0, a revoked one exits 4, an expired one exits 4', async () => {
    expect((await login()).code).toBe(0);
    const state = await startedAgentState();

    const valid = await svc(['token', 'health', '--name', state.name, '--json']);
    expect(valid.code).toBe(0);
    expect(jsonOf(valid)).toMatchObject({
      ok: true,
      result: { health: 'valid', hub_status: 200, agent_id: state.agent_id },
    });

    unwrap(
      await stack.participant.POST('/api/v1/agents/{agentId}/evict', {
        params: { path: { agentId: state.agent_id } },
      }),
    );
    const revoked = await svc(['token', 'health', '--name', state.name, '--json']);
    expect(revoked.code).toBe(4);
    expect(jsonOf(revoked).error).toMatchObject({
      code: 'agent_token_revoked',
      exit_code: 4,
      health: 'revoked',
      hub_status: 401,
    });
    const humanRevoked = await svc(['token', 'health', '--name', state.name]);
    expect(humanRevoked.code).toBe(4);
    expect(humanRevoked.stderr.trimEnd().split('\n')).toHaveLength(2);
    expectNoStack(humanRevoked);

    // A token whose expiry has passed (an old local state) is expired without asking the hub.
    const [header, , signature] = state.agent_token.split('.');
    const payload = Buffer.from(
      JSON.stringify({ sub: state.agent_id, aud: 'agent', exp: Math.floor(Date.now() / 1000) - 60 }),
    ).toString('base64url');
    await writeAgentState(paths().state_dir, {
      ...state,
      agent_token: `${header}.${payload}.${signature}`,
      agent_token_expires_at: new Date(Date.now() - 60_000).toISOString(),
    });
    const expired = await svc(['token', 'health', '--name', state.name, '--json']);
    expect(expired.code).toBe(4);
    expect(jsonOf(expired).error).toMatchObject({
      code: 'agent_token_expired',
      health: 'expired',
      hub_status: null,
    });
  });

  it('when the agent has no local state here, then each token command names agent_not_started_here with the fix', async () => {
    expect((await login()).code).toBe(0);
    for (const verb of ['info', 'refresh', 'health']) {
      const result = await svc(['token', verb, '--name', 'never-started', '--json']);
      expect(result.code).toBe(1);
      expect(jsonOf(result).error).toMatchObject({
        code: 'agent_not_started_here',
        fix: expect.stringContaining('svc start --name never-started'),
      });
    }
  });
});
