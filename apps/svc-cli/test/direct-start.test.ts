import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { eventually } from '@svc/testing';
import { agentRuntimeHome } from '../src/data/agent-state';
import { resolveConfigPaths } from '../src/domain/config-paths';
import { isAlive, jsonOf, modeOf, runSvc, runtimeOutputOf, startSvc, stopSvc, tempHome } from './support/cli';
import type { CliResult, SvcProcess } from './support/cli';
import { HubStack } from './support/stack';
import type { HubAgent, StackHost } from './support/stack';
import type { AskAgentResult } from '../src/use-cases/agents/ask-agent';
import type { ListAgentInboxResult } from '../src/use-cases/agents/list-agent-inbox';
import type { ListAgentsResult } from '../src/use-cases/agents/list-agents';
import type { InternalStatus } from '../src/use-cases/runtime/read-internal-status';
import type { StartAgentResult } from '../src/use-cases/agents/start-agent';
import type { StopAgentResult } from '../src/use-cases/agents/stop-agent';

/**
 * End to end on a real hub: `svc login --pull-runtime`, `svc runtime up` in the foreground, then direct starts
 * of the reference agent and of other commands through it, `list`, `ask`, `internal inbox` and `stop`, and every
 * direct start rule broken one by one (refused with its code before anything is written at the hub).
 */
jest.setTimeout(300_000);

let stack: HubStack;
let host: StackHost;
let home: string;
let configDir: string;
let runtime: SvcProcess | undefined;
let teamId: string;
let hostEnv: Record<string, string>;

const paths = () => resolveConfigPaths({ configDir, profile: 'default' });

const svc = (args: string[], env: Record<string, string | undefined> = {}) =>
  runSvc(args, home, { SVC_CONFIG_DIR: configDir, ...hostEnv, ...env });

/** `svc <args> --json` that must succeed; its result. */
async function ok<T = Record<string, unknown>>(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<T> {
  const result = await svc([...args, '--json'], env);
  const doc = jsonOf(result);
  if (!doc.ok || result.code !== 0) {
    throw new Error(
      `svc ${args.join(' ')} failed (exit ${result.code}): ${result.stdout}\n${result.stderr}\n${runtimeOutput()}`,
    );
  }
  return doc.result as T;
}

function expectClean(result: CliResult): void {
  expect(result.stderr).not.toMatch(/\n\s+at /);
  expect(result.stdout).not.toMatch(/\n\s+at /);
  // No secret reaches the output: agent tokens and runtime credentials are JWTs, keys start with svc_.
  expect(`${result.stdout}${result.stderr}`).not.toMatch(/eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\./);
  expect(`${result.stdout}${result.stderr}`).not.toMatch(/\bsvc_[A-Za-z0-9_-]{16,}/);
}

/**
 * What a start writes at the hub about agents: registrations and starts. Heartbeats of agents that run
 * (`last_heartbeat_at`, `updated_at`, idle/busy) are left out; they move on their own.
 */
const registrations = (agents: HubAgent[]) =>
  agents.map((a) => ({
    id: a.id,
    name: a.name,
    started_at: a.started_at,
    stopped_at: a.stopped_at,
    serve_port: a.serve_port,
  }));

const runtimeOutput = () => runtimeOutputOf(runtime);

beforeAll(async () => {
  stack = await HubStack.start('direct');
  host = await stack.registerHost('direct-host');
  await stack.owner.createProject('DS');
  await stack.owner.createProject('OTHER');
  teamId = await stack.createTeam('reviewers');
  home = tempHome('svc-direct-home-');
  configDir = path.join(home, 'config');
  hostEnv = { SVC_RUNTIME_INSTANCE_ID: host.id };
  const login = await runSvc(
    stack.loginArgs('--pull-runtime', '--json'),
    home,
    { SVC_CONFIG_DIR: configDir },
    `${stack.password}\n`,
  );
  if (login.code !== 0) throw new Error(`login failed: ${login.stdout}${login.stderr}`);
}, 180_000);

afterAll(async () => {
  await stopSvc(runtime, 30_000);
  await stack?.close();
  if (home) fs.rmSync(home, { recursive: true, force: true });
  if (host) fs.rmSync(host.workdirRoot, { recursive: true, force: true });
});

/** A start that must be refused with `code` (and exit `exit`) before any hub write. */
async function expectRefused(
  args: string[],
  code: string,
  env: Record<string, string | undefined> = {},
  exit = 1,
): Promise<void> {
  const agentsBefore = registrations(await stack.agents());
  const auditBefore = await stack.audit();
  const result = await svc(['start', ...args, '--json'], env);
  expectClean(result);
  const doc = jsonOf(result);
  expect({ ok: doc.ok, code: doc.error?.code, exit: result.code }).toEqual({ ok: false, code, exit });
  expect(doc.error?.exit_code).toBe(exit);
  expect(typeof doc.error?.fix).toBe('string');
  expect(doc.error!.fix!.length).toBeGreaterThan(0);
  // Nothing was written at the hub: same agents, not one new audit event.
  expect(registrations(await stack.agents())).toEqual(agentsBefore);
  expect((await stack.audit()).map((e) => e.id)).toEqual(auditBefore.map((e) => e.id));
  // Human mode: one line with the code, and the fix.
  const human = await svc(['start', ...args], env);
  expect(human.code).toBe(exit);
  expect(human.stderr).toContain(`[${code}]`);
  expect(human.stderr).toContain('fix: ');
}

describe('before the runtime is up', () => {
  it('when SVC_RUNTIME_INSTANCE_ID is unset, a bundle id, not an rti_ id or another host, then start is refused (rule 2)', async () => {
    const args = ['--name', 'alpha', '--project', 'DS'];
    await expectRefused(args, 'runtime_instance_id_missing', { SVC_RUNTIME_INSTANCE_ID: undefined });
    await expectRefused(args, 'runtime_bundle_id_not_allowed', { SVC_RUNTIME_INSTANCE_ID: 'wrt_0123456789' });
    await expectRefused(args, 'runtime_instance_id_invalid', { SVC_RUNTIME_INSTANCE_ID: 'host-1' });
    await expectRefused(args, 'runtime_instance_id_mismatch', {
      SVC_RUNTIME_INSTANCE_ID: 'rti_someotherhost',
    });
  });

  it('when the local runtime does not run, then start is refused and says to run svc runtime up (rule 6)', async () => {
    await expectRefused(['--name', 'alpha', '--project', 'DS'], 'runtime_not_running');
    const human = await svc(['start', '--name', 'alpha', '--project', 'DS']);
    expect(human.stderr).toContain('svc runtime up');
  });

  it('when the command line is wrong, then start is refused as a usage error (exit 2)', async () => {
    await expectRefused(['--name', 'Not_Valid', '--project', 'DS'], 'agent_name_invalid', {}, 2);
    await expectRefused(
      ['--name', 'alpha', '--project', 'DS', '--workdir', '/x'],
      'project_and_workdir_exclusive',
      {},
      2,
    );
    await expectRefused(
      ['--name', 'alpha', '--project', 'DS', '--command', 'node a.js | tee x'],
      'command_invalid',
      {},
      2,
    );
    await expectRefused(
      ['--name', 'alpha', '--project', 'DS', '--command', 'node "a.js'],
      'command_invalid',
      {},
      2,
    );
    await expectRefused(['--name', 'alpha', '--project', 'DS', '--model', 'claude'], 'model_invalid', {}, 2);
    await expectRefused(
      ['--name', 'alpha', '--project', 'DS', '--serve-port', '80'],
      'serve_port_invalid',
      {},
      2,
    );
  });

  it('when server-local provider auth is asked for without SVC_ALLOW_SERVER_LOCAL_PROVIDER_AUTH=1, then start is refused', async () => {
    await expectRefused(
      ['--name', 'alpha', '--project', 'DS', '--server-local-provider-auth'],
      'server_local_provider_auth_not_allowed',
    );
  });
});

describe('with svc runtime up', () => {
  beforeAll(async () => {
    runtime = startSvc(['runtime', 'up'], home, { SVC_CONFIG_DIR: configDir, ...hostEnv });
    const socket = path.join(paths().state_dir, 'control.sock');
    await eventually(async () => fs.existsSync(socket), 90_000, 'the control socket', {
      describe: runtimeOutput,
    });
    await eventually(() => stack.spawnReady(host.id), 90_000, 'the host spawn ready at the hub', {
      describe: runtimeOutput,
    });
  }, 180_000);

  it('when a rule of the host is broken, then start is refused with its code before any hub write (rules 3-5)', async () => {
    await expectRefused(['--name', 'alpha', '--project', 'DS'], 'agent_workdir_root_mismatch', {
      SVC_AGENT_WORKDIR_ROOT: '/srv/elsewhere',
    });
    await expectRefused(
      [
        '--name',
        'alpha',
        '--project',
        'DS',
        '--serve',
        '--serve-public-base-url',
        'https://console.example.test',
      ],
      'serve_public_base_url_mismatch',
    );
    await expectRefused(['--name', 'alpha', '--workdir', '/var/tmp/outside'], 'workdir_outside_root');
    await expectRefused(['--name', 'alpha'], 'project_or_workdir_required', {}, 2);
    await expectRefused(['--name', 'nomodel', '--project', 'DS'], 'model_required', {}, 2);
    await expectRefused(
      ['--name', 'alpha', '--worker', '--project', 'DS'],
      'worker_requires_project_and_team',
      {},
      2,
    );
    await expectRefused(
      ['--name', 'alpha', '--worker', '--team-id', teamId],
      'worker_requires_project_and_team',
      {},
      2,
    );
  });

  it('when the workspace default workdir root differs from the host one and SVC_AGENT_WORKDIR_ROOT is unset, then start is refused (rule 3)', async () => {
    // The pulled config names the workspace default; make it differ from the host's root as another OS would.
    const profileFile = paths().profile_path;
    const original = fs.readFileSync(profileFile, 'utf8');
    const profile = JSON.parse(original) as { runtime: { agent_workdir_root: string } };
    profile.runtime.agent_workdir_root = 'C:\\agents';
    fs.writeFileSync(profileFile, JSON.stringify(profile));
    try {
      await expectRefused(['--name', 'alpha', '--project', 'DS'], 'agent_workdir_root_missing');
      // With the host's root exported, the same start passes rule 3 (and stops at rule 4, on purpose).
      await expectRefused(
        ['--name', 'alpha', '--project', 'DS', '--serve-public-base-url', 'https://elsewhere.example.test'],
        'serve_public_base_url_mismatch',
        { SVC_AGENT_WORKDIR_ROOT: host.workdirRoot },
      );
    } finally {
      fs.writeFileSync(profileFile, original, { mode: 0o600 });
    }
  });

  let alphaId: string;
  let alphaPort: number;

  it('when the reference agent is started with --serve, then it listens, is online on the rti_ host, the running count rises, with one runtime credential and no relay launch (rules 7-8)', async () => {
    const before = await stack.runningCount(host.id);
    const result = await svc([
      'start',
      '--name',
      'alpha',
      '--project',
      'DS',
      '--team-id',
      teamId,
      '--model',
      'local/echo',
      '--capabilities',
      'review,ask',
      '--serve',
      '--serve-public-base-url',
      host.consoleBaseUrl,
      '--json',
    ]);
    expectClean(result);
    const doc = jsonOf<StartAgentResult>(result);
    if (!doc.ok) throw new Error(`${result.stdout}\n${runtimeOutput()}`);
    const r = doc.result as StartAgentResult;
    alphaId = r.agent_id;
    alphaPort = r.serve_port!;
    expect(r).toMatchObject({
      name: 'alpha',
      registered: true,
      runtime_instance_id: host.id,
      model: 'local/echo',
      authorization_source: 'hub_managed',
      console_url: `${host.consoleBaseUrl}/${stack.slug}/agents/${alphaId}/global/health`,
      verification: { listener: true, hub_online: true, running_count_rose: true },
    });
    expect(r.runtime_instance_id).toMatch(/^rti_/);
    expect(alphaPort).toBeGreaterThanOrEqual(1024);
    expect(r.workdir).toBe(path.join(host.workdirRoot, 'alpha'));

    // The hub: online on this host's rti_, and the Networks count is up.
    const agent = await stack.agent(alphaId);
    expect(agent).toMatchObject({
      status: expect.stringMatching(/^(online|idle|busy)$/),
      runtime_instance_id: host.id,
      serve_port: alphaPort,
    });
    expect(await stack.runningCount(host.id)).toBeGreaterThan(before);
    // The local listener answers on the serve port.
    const health = await fetch(`http://127.0.0.1:${alphaPort}/`);
    await health.arrayBuffer();
    expect(health.status).toBeGreaterThan(0);

    // Hub audit: exactly one runtime credential issuance for this start, and it was a direct launch.
    const issued = await stack.audit({ action: 'credential.runtime.issued', target_id: alphaId });
    const started = await stack.audit({ action: 'agent.started', target_id: alphaId });
    expect(issued).toHaveLength(1);
    expect(started).toHaveLength(1);
    expect(started[0]!.data).toMatchObject({ launch_path: 'direct', runtime_instance_id: host.id });
    expect(JSON.stringify(issued[0]!.data)).not.toContain('"relay"');
    // Zero relay spawns: no relay launch anywhere in the workspace's audit, and the relay never saw /spawn.
    const everything = await stack.audit();
    expect(
      everything.filter((e) => (e.data as { launch_path?: string } | null)?.launch_path === 'relay'),
    ).toEqual([]);
    const relayLog = path.join(paths().state_dir, 'relay.log');
    if (fs.existsSync(relayLog)) expect(fs.readFileSync(relayLog, 'utf8')).not.toContain('/spawn');
    // The relay's own counts agree: not one spawn request since it started.
    const relayStatus = (await (await fetch(`http://127.0.0.1:${host.relayPort}/status`)).json()) as {
      spawns: Record<string, number>;
    };
    expect(relayStatus.spawns).toEqual({ requested: 0, in_flight: 0, started: 0, failed: 0 });

    // Local state: 0600 in an owner-only directory, never printed.
    const stateFile = path.join(paths().state_dir, 'agents', 'alpha', 'state.json');
    expect(modeOf(stateFile)).toBe(0o600);
    expect(modeOf(path.dirname(stateFile))).toBe(0o700);
    expect(modeOf(agentRuntimeHome(paths().state_dir, 'alpha'))).toBe(0o700);
    const state = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as { agent_token: string; agent_id: string };
    expect(state.agent_id).toBe(alphaId);
    expect(result.stdout).not.toContain(state.agent_token);
  });

  it('when the console router is asked for the agent health route without a credential, then the agent answers 401', async () => {
    const url = `${host.consoleBaseUrl}/${stack.slug}/agents/${alphaId}/global/health`;
    await eventually(
      async () => {
        const res = await fetch(url);
        await res.arrayBuffer();
        return res.status === 401;
      },
      60_000,
      'a 401 from the agent through the console router',
      { describe: runtimeOutput },
    );
  });

  it('when the same agent is started again while it runs, then start is refused with agent_already_running', async () => {
    await expectRefused(['--name', 'alpha', '--project', 'DS', '--serve'], 'agent_already_running');
  });

  it('when --serve-port is the port of another agent, then start is refused with serve_port_taken', async () => {
    await expectRefused(
      ['--name', 'beta', '--project', 'DS', '--model', 'local/echo', '--serve-port', String(alphaPort)],
      'serve_port_taken',
    );
  });

  it('when svc list runs, then it shows the agent with its process, serve port and console URL', async () => {
    const r = await ok<ListAgentsResult>(['list']);
    const alpha = r.agents.find((a) => a.name === 'alpha');
    expect(r.runtime_running).toBe(true);
    expect(alpha).toMatchObject({
      agent_id: alphaId,
      serve_port: alphaPort,
      console_url: `${host.consoleBaseUrl}/${stack.slug}/agents/${alphaId}/global/health`,
      process: { state: 'running' },
      local_state: true,
    });
    expect(isAlive(alpha!.process!.pid!)).toBe(true);
    const human = await svc(['list']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/alpha\s+(online|idle|busy)\s+running/);
  });

  it('when agents share a team, then svc ask --from gets the reply with the same correlation id; a participant ask is answered too', async () => {
    const beta = await ok<StartAgentResult>([
      'start',
      '--name',
      'beta',
      '--worker',
      '--project',
      'OTHER',
      '--team-id',
      teamId,
      '--model',
      'local/echo',
    ]);
    expect(beta.serve_port).toBeNull();
    const asked = await ok<AskAgentResult>([
      'ask',
      'alpha',
      'hello from beta',
      '--from',
      'beta',
      '--timeout-seconds',
      '60',
    ]);
    expect(asked).toMatchObject({
      to: { agent_id: alphaId, name: 'alpha' },
      from: { kind: 'agent', name: 'beta', agent_id: beta.agent_id },
      reply: { body: 'ack: hello from beta' },
    });
    expect(asked.correlation_id).toMatch(/^ask-/);
    const byParticipant = await ok<AskAgentResult>([
      'ask',
      'alpha',
      'hello from the operator',
      '--timeout-seconds',
      '60',
    ]);
    expect(byParticipant).toMatchObject({
      from: { kind: 'participant' },
      reply: { body: 'ack: hello from the operator' },
    });
    expect(byParticipant.correlation_id).not.toBe(asked.correlation_id);

    const human = await svc(['ask', 'alpha', 'plain text please', '--timeout-seconds', '60']);
    expect(human.code).toBe(0);
    expect(human.stdout.trim()).toBe('alpha: ack: plain text please');

    const inbox = await ok<ListAgentInboxResult>(['internal', 'inbox', '--name', 'alpha']);
    const bodies = (inbox.messages as Array<{ body: string; correlation_id: string }>).map((m) => m.body);
    expect(bodies).toEqual(expect.arrayContaining(['hello from beta', 'hello from the operator']));
    expect(inbox.agent_id).toBe(alphaId);
  });

  it('when an unrelated agent asks, then the hub refuses (peer_message_forbidden, exit 1); when nobody answers, then ask exits 5', async () => {
    // A silent agent: no project, no team, a command that never reads its inbox.
    const silent = await ok<StartAgentResult>([
      'start',
      '--name',
      'silent',
      '--workdir',
      path.join(host.workdirRoot, 'silent'),
      '--model',
      'local/echo',
      '--command',
      `${process.execPath} -e "setInterval(() => {}, 1000)"`,
    ]);
    expect(silent.argv).toEqual([process.execPath, '-e', 'setInterval(() => {}, 1000)']);

    const refused = await svc([
      'ask',
      'alpha',
      'let me in',
      '--from',
      'silent',
      '--timeout-seconds',
      '10',
      '--json',
    ]);
    expectClean(refused);
    expect(refused.code).toBe(1);
    expect(jsonOf(refused).error).toMatchObject({ code: 'peer_message_forbidden', exit_code: 1 });
    const denied = await stack.audit({ action: 'message.denied' });
    expect(denied.length).toBeGreaterThanOrEqual(1);

    const timedOut = await svc(['ask', 'silent', 'anyone there?', '--timeout-seconds', '3', '--json']);
    expect(timedOut.code).toBe(5);
    expect(jsonOf(timedOut).error).toMatchObject({ code: 'ask_timeout', exit_code: 5 });
    const badTimeout = await svc(['ask', 'silent', 'hi', '--timeout-seconds', '0', '--json']);
    expect(badTimeout.code).toBe(2);
    expect(jsonOf(badTimeout).error).toMatchObject({ code: 'timeout_invalid', exit_code: 2 });
  });

  it('when svc stop runs, then the process is gone, the hub shows offline, local state is cleared and the id is kept; a new start reuses the id', async () => {
    const listed = await ok<ListAgentsResult>(['list']);
    const pid = listed.agents.find((a) => a.name === 'alpha')!.process!.pid!;
    const stopped = await ok<StopAgentResult>(['stop', 'alpha']);
    expect(stopped).toMatchObject({
      agent_id: alphaId,
      agent_id_kept: true,
      status: 'offline',
      process_stopped: true,
      local_state_cleared: true,
      sandbox_removed: false,
    });
    await eventually(async () => !isAlive(pid), 30_000, 'the agent process gone', {
      describe: runtimeOutput,
    });
    expect((await stack.agent(alphaId)).status).toBe('offline');
    expect(fs.existsSync(path.join(paths().state_dir, 'agents', 'alpha', 'state.json'))).toBe(false);
    const after = await ok<ListAgentsResult>(['list']);
    expect(after.agents.find((a) => a.name === 'alpha')).toMatchObject({
      status: 'offline',
      process: null,
      local_state: false,
    });

    const again = await ok<StartAgentResult>(['start', '--name', 'alpha', '--serve']);
    expect(again).toMatchObject({ agent_id: alphaId, registered: false, verification: { listener: true } });
    expect(await stack.audit({ action: 'credential.runtime.issued', target_id: alphaId })).toHaveLength(2);

    const human = await svc(['stop', 'alpha']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`agent id ${alphaId} is kept`);
  });

  it('when server-local provider auth is allowed and asked for, then the agent auth path links to the one runtime auth file (0600)', async () => {
    const source = path.join(home, 'host-provider-auth.json');
    fs.writeFileSync(source, '{"api_key":"sk-local-development-0123"}', { mode: 0o600 });
    const workdir = path.join(host.workdirRoot, 'local-auth');
    const r = await ok<StartAgentResult>(
      [
        'start',
        '--name',
        'local-auth',
        '--workdir',
        workdir,
        '--model',
        'local/echo',
        '--server-local-provider-auth',
        '--command',
        `${process.execPath} -e "require('fs').writeFileSync('seen', process.env.AGENT_PROVIDER_AUTH_FILE); setInterval(() => {}, 1000)"`,
      ],
      { SVC_ALLOW_SERVER_LOCAL_PROVIDER_AUTH: '1', SVC_SERVER_LOCAL_PROVIDER_AUTH_FILE: source },
    );
    const canonical = path.join(paths().state_dir, 'provider-auth', 'workspace-runtime-auth');
    const link = path.join(agentRuntimeHome(paths().state_dir, 'local-auth'), 'provider-auth');
    expect(r.server_local_provider_auth).toMatchObject({ canonical_file: canonical, agent_auth_path: link });
    expect(JSON.stringify(r)).not.toContain('sk-local');
    expect(modeOf(canonical)).toBe(0o600);
    expect(modeOf(path.dirname(canonical))).toBe(0o700);
    expect(fs.readlinkSync(link)).toBe(canonical);
    const seen = path.join(workdir, 'seen');
    await eventually(async () => fs.existsSync(seen), 30_000, 'the agent saw its auth path', {
      describe: runtimeOutput,
    });
    expect(fs.readFileSync(seen, 'utf8')).toBe(link);
    await ok<StopAgentResult>(['stop', 'local-auth']);
  });

  it('when an unknown agent is stopped, then it is a named error', async () => {
    const result = await svc(['stop', 'nobody', '--json']);
    expect(result.code).toBe(1);
    expect(jsonOf(result).error).toMatchObject({ code: 'agent_not_found' });
  });

  it('when the agent process exits with 78 (ProviderModelNotFoundError), then svc start clears only its runtime home and starts it again', async () => {
    const script = path.join(host.workdirRoot, 'stale-model.js');
    fs.writeFileSync(
      script,
      [
        "const fs = require('node:fs');",
        "const path = require('node:path');",
        "const marker = path.join(process.env.AGENT_RUNTIME_HOME, 'remembered-model');",
        "if (fs.existsSync(marker)) { console.error('ProviderModelNotFoundError: remembered model is gone'); process.exit(78); }",
        'setInterval(() => {}, 1000);',
      ].join('\n'),
    );
    const first = await ok<StartAgentResult>([
      'start',
      '--name',
      'stale',
      '--project',
      'DS',
      '--model',
      'local/echo',
      '--command',
      `${process.execPath} ${script}`,
    ]);
    const home = agentRuntimeHome(paths().state_dir, 'stale');
    const keep = path.join(first.workdir, 'work-in-progress.txt');
    fs.writeFileSync(keep, 'kept');

    // Twice stale: the runtime recovers once by itself; the second time the process keeps exiting 78.
    for (let round = 0; round < 2; round += 1) {
      fs.writeFileSync(path.join(home, 'remembered-model'), 'local/gone');
      // A restart the runtime has under way lists the agent without a pid for a moment.
      const pid = await eventually(
        async () => {
          const p = (await ok<ListAgentsResult>(['list'])).agents.find((a) => a.name === 'stale')!.process;
          return p?.state === 'running' && p.pid;
        },
        30_000,
        'the agent running',
        { intervalMs: 250, describe: runtimeOutput },
      );
      process.kill(pid, 'SIGKILL');
      if (round === 0) {
        await eventually(
          async () => {
            const l = await ok<ListAgentsResult>(['list']);
            const p = l.agents.find((a) => a.name === 'stale')!.process;
            return (
              p?.state === 'running' && p.pid !== pid && !fs.existsSync(path.join(home, 'remembered-model'))
            );
          },
          60_000,
          'the runtime recovered the agent once',
          { intervalMs: 250, describe: runtimeOutput },
        );
      }
    }
    await eventually(
      async () => {
        const l = await ok<ListAgentsResult>(['list']);
        const p = l.agents.find((a) => a.name === 'stale')!.process;
        return p?.last_exit?.code === 78 && fs.existsSync(path.join(home, 'remembered-model'));
      },
      60_000,
      'the process exits 78 again',
      { intervalMs: 250, describe: runtimeOutput },
    );

    const recovered = await ok<StartAgentResult>(['start', '--name', 'stale']);
    expect(recovered).toMatchObject({
      agent_id: first.agent_id,
      registered: false,
      recovered_from_provider_model_not_found: true,
    });
    expect(fs.existsSync(path.join(home, 'remembered-model'))).toBe(false);
    expect(fs.readFileSync(keep, 'utf8')).toBe('kept');
    const listed = await ok<ListAgentsResult>(['list']);
    expect(listed.agents.find((a) => a.name === 'stale')!.process!.state).toBe('running');
    await ok<StopAgentResult>(['stop', 'stale']);
  });

  it('when the runtime was killed with its agent running and comes up again, then an immediate svc start marks the gone instance stopped at the hub and starts it', async () => {
    const first = await ok<StartAgentResult>([
      'start',
      '--name',
      'phoenix',
      '--project',
      'DS',
      '--model',
      'local/echo',
    ]);
    runtime!.child.kill('SIGKILL');
    await runtime!.exited;
    runtime = startSvc(['runtime', 'up'], home, { SVC_CONFIG_DIR: configDir, ...hostEnv });
    const pid = runtime.child.pid;
    await eventually(
      async () => {
        const status = await svc(['internal', 'status', '--json']);
        const doc = status.code === 0 ? jsonOf<InternalStatus>(status).result : undefined;
        return doc?.runtime.pid === pid && doc?.runtime.heartbeat.last_ok_at !== null;
      },
      90_000,
      'the new runtime up and heartbeating',
      { describe: runtimeOutput },
    );
    // The new runtime stopped the agent the killed one left (SIGTERM to its group first: the agent's own
    // graceful stop may outlast the new runtime's first heartbeat on a loaded machine); the hub still counts it
    // running (fresh heartbeat).
    await eventually(async () => !isAlive(first.pid!), 30_000, 'the agent the killed runtime left gone', {
      describe: runtimeOutput,
    });
    const before = await stack.agent(first.agent_id);
    expect(before.status).not.toBe('offline');
    expect(Date.now() - Date.parse(before.last_heartbeat_at!)).toBeLessThan(80_000);

    const again = await ok<StartAgentResult>(['start', '--name', 'phoenix']);

    expect(again).toMatchObject({ agent_id: first.agent_id, registered: false });
    expect(again.pid).not.toBe(first.pid);
    const stops = await stack.audit({ action: 'agent.stopped', target_id: first.agent_id });
    expect(stops).toHaveLength(1);
    expect((await stack.agent(first.agent_id)).status).not.toBe('offline');
    await ok<StopAgentResult>(['stop', 'phoenix']);
  });
});

describe('a host that is not spawn ready at the hub', () => {
  it('when the hub has no fresh heartbeat of the host, then start is refused with runtime_host_not_ready before any hub write (rule 6)', async () => {
    // Host B is registered but never heartbeats. Profile "b" is logged in and pulled for it; a control socket
    // answers /status for B, so the local half of rule 6 passes and the hub half decides.
    const hostB = await stack.registerHost('silent-host');
    const envB = { SVC_RUNTIME_INSTANCE_ID: hostB.id };
    const login = await runSvc(
      ['--profile', 'b', ...stack.loginArgs('--pull-runtime', '--json')],
      home,
      { SVC_CONFIG_DIR: configDir, ...envB },
      `${stack.password}\n`,
    );
    expect(login.code).toBe(0);
    const stateB = resolveConfigPaths({ configDir, profile: 'b' }).state_dir;
    fs.mkdirSync(stateB, { recursive: true, mode: 0o700 });
    const status = {
      pid: process.pid,
      started_at: new Date().toISOString(),
      profile: 'b',
      workspace: stack.slug,
      runtime_instance_id: hostB.id,
      relay: { url: 'http://127.0.0.1:1', pid: null, ready: true, detail: null },
      console_router: { url: 'http://127.0.0.1:1', pid: null, ready: true, detail: null },
      heartbeat: { interval_ms: 10_000, last_ok_at: null, last_error: null },
      agents: [],
    };
    const server = http.createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/status') res.end(JSON.stringify(status));
      else {
        res.statusCode = 404;
        res.end(JSON.stringify({ code: 'not_found' }));
      }
    });
    await new Promise<void>((resolve) => server.listen(path.join(stateB, 'control.sock'), resolve));
    try {
      const agentsBefore = registrations(await stack.agents());
      const auditBefore = await stack.audit();
      const result = await runSvc(
        ['--profile', 'b', 'start', '--name', 'never', '--project', 'DS', '--model', 'local/echo', '--json'],
        home,
        { SVC_CONFIG_DIR: configDir, ...envB },
      );
      expect(result.code).toBe(1);
      expect(jsonOf(result).error).toMatchObject({ code: 'runtime_host_not_ready', exit_code: 1 });
      expect(jsonOf(result).error?.fix).toContain('svc runtime up');
      expect(registrations(await stack.agents())).toEqual(agentsBefore);
      expect((await stack.audit()).map((e) => e.id)).toEqual(auditBefore.map((e) => e.id));
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
