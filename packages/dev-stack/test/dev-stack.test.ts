import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  devStackSettings,
  exitWithin,
  removeDevStack,
  startBuiltEntryPoint,
  startDevStack,
} from '@svc/testing';
import type { DevStackSettings, NodeProcess } from '@svc/testing';
import { formatLogLine } from '../src/processes';
import type { DevStackFile } from '../src/state';

const packageDir = path.resolve(__dirname, '..');
jest.setTimeout(120_000);

const stateDir = mkdtempSync(path.join(os.tmpdir(), 'svc-dev-stack-'));
let settings: DevStackSettings | undefined;

/**
 * The stack's settings: a second start of the same state uses the same ports, as a restart does (the hub
 * keeps the development host's relay and console router ports).
 */
async function env(): Promise<Record<string, string>> {
  settings ??= await devStackSettings('devstack', stateDir);
  return settings.env;
}

const startUntilReady = (vars: Record<string, string>) => startDevStack(vars, 90_000);

/** Stops the stack with `signal` and expects exit 0; a failure shows how its shutdown went. */
async function expectCleanStop(stack: NodeProcess, signal: NodeJS.Signals): Promise<void> {
  stack.child.kill(signal);
  const code = await exitWithin(stack, 60_000);
  if (code !== 0) {
    const tail = stack.stdout().slice(stack.stdout().lastIndexOf('[dev-stack]        stopping'));
    throw new Error(
      `the stack exited with ${code} after ${signal}:\n${tail.slice(-6000)}\n${stack.stderr()}`,
    );
  }
}

const readFile = () =>
  JSON.parse(readFileSync(path.join(stateDir, 'dev-stack.json'), 'utf8')) as DevStackFile;

afterAll(async () => {
  if (settings) await removeDevStack(settings, undefined);
  else rmSync(stateDir, { recursive: true, force: true });
});

describe('one-command stack', () => {
  let first: DevStackFile;

  test('when started, then every service is ready and dev-stack.json has the documented shape and working credentials', async () => {
    const stack = await startUntilReady(await env());
    try {
      first = readFile();
      expect(Object.keys(first).sort()).toEqual(
        [
          'agent',
          'api_keys',
          'console_router_url',
          'console_routers',
          'control_web_url',
          'hub_url',
          'participant',
          'project',
          'relay_url',
          'runtime_host',
          'workflow_url',
          'workspace',
        ].sort(),
      );
      expect(Object.keys(first.api_keys).sort()).toEqual([
        'agent_runtime',
        'automation',
        'read_only',
        'workflow_all',
      ]);
      expect(statSync(path.join(stateDir, 'dev-stack.json')).mode & 0o777).toBe(0o600);
      for (const url of [
        first.hub_url,
        first.workflow_url,
        first.relay_url,
        first.console_router_url,
        first.control_web_url,
      ]) {
        expect((await fetch(`${url}/healthz`)).status).toBe(200);
        expect((await fetch(`${url}/readyz`)).status).toBe(200);
      }
      // This machine is the workspace's runtime host, run by `svc runtime up`.
      expect(first.runtime_host).toEqual({
        id: expect.stringMatching(/^rti_/),
        relay_url: first.relay_url,
        console_router_url: first.console_router_url,
        svc_config_dir: path.join(stateDir, 'cli'),
        children_file: path.join(stateDir, 'cli', 'run', 'default', 'children.json'),
      });
      // One console router, at the router URL, named as in the runtime's children.json.
      expect(first.console_routers).toEqual([{ name: 'console-router', url: first.console_router_url }]);
      // The development console agent, started with `svc start`, reached through the console router.
      expect(first.agent).toEqual({
        id: expect.stringMatching(/^agt_/),
        name: 'dev-console-agent',
        console_url: `${first.console_router_url}/${first.workspace.slug}/agents/${first.agent.id}`,
      });
      const health = await fetch(`${first.agent.console_url}/global/health`, {
        headers: { authorization: `Bearer ${first.participant.token}` },
      });
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ agent_id: first.agent.id, name: 'dev-console-agent' });
      const anonymous = await fetch(`${first.agent.console_url}/global/health`);
      expect(anonymous.status).toBe(401);
      expect(await anonymous.json()).toMatchObject({ code: 'credential_missing', agent_id: first.agent.id });
      expect(statSync(path.join(stateDir, 'agents', 'dev-console-agent')).mode & 0o777).toBe(0o700);
      const me = await fetch(`${first.hub_url}/api/v1/me`, {
        headers: { authorization: `Bearer ${first.participant.token}` },
      });
      expect(me.status).toBe(200);
      const contract = (key?: string) =>
        fetch(`${first.hub_url}/api/v1/contract`, { headers: key ? { 'x-api-key': key } : {} });
      expect((await contract(first.api_keys.read_only)).status).toBe(200);
      expect((await contract(first.api_keys.workflow_all)).status).toBe(403);
      expect((await contract()).status).toBe(401);
      const output = stack.stdout();
      expect(output).toMatch(/\[hub-api\] +\d\d:\d\d:\d\d INFO +listening/);
      for (const secret of Object.values(first.api_keys)) expect(output).not.toContain(secret);
      expect(output).not.toContain(first.participant.password);
    } finally {
      await expectCleanStop(stack, 'SIGINT');
    }
    expect(stack.stdout()).toContain('every service exited cleanly');
    // The agent was stopped with `svc stop` (at the hub too, while the hub still ran).
    expect(stack.stdout()).toMatch(/POST path=\/api\/v1\/agents\/agt_\w+\/stop status=200/);
    expect(stack.stdout()).not.toContain('svc stop dev-console-agent:');
  });

  test('when started a second time, then it reuses the same workspace, project, keys and console agent', async () => {
    const stack = await startUntilReady(await env());
    try {
      const second = readFile();
      expect(second.workspace).toEqual(first.workspace);
      expect(second.project).toEqual(first.project);
      expect(second.api_keys).toEqual(first.api_keys);
      expect(second.participant.password).toBe(first.participant.password);
      expect(second.agent.id).toBe(first.agent.id);
      const health = await fetch(`${second.agent.console_url}/global/health`, {
        headers: { authorization: `Bearer ${second.participant.token}` },
      });
      expect(health.status).toBe(200);
      // One development runtime host, registered on the first run and found again: the console router reads
      // its route table (its /readyz checks it).
      const hosts = await fetch(
        `${second.hub_url}/api/v1/workspaces/${second.workspace.slug}/runtime-hosts`,
        {
          headers: { authorization: `Bearer ${second.participant.token}` },
        },
      );
      const names = ((await hosts.json()) as { data: { name: string }[] }).data.map((h) => h.name);
      expect(names).toEqual(['dev-stack-host']);
      const ready = (await (await fetch(`${second.console_router_url}/readyz`)).json()) as {
        checks: Record<string, string>;
      };
      expect(ready.checks).toEqual({ hub_jwks: 'ok', route_table: 'ok', upstream_secret: 'ok' });
      // The host's secrets live where svc keeps them on any runtime host: owner-only files, never printed.
      const runtimeEnv = path.join(stateDir, 'cli', 'profiles', 'default.runtime.env');
      expect(statSync(runtimeEnv).mode & 0o777).toBe(0o600);
      expect(statSync(path.join(stateDir, 'cli')).mode & 0o777).toBe(0o700);
      for (const line of readFileSync(runtimeEnv, 'utf8')
        .split('\n')
        .filter((l) => l.includes('='))) {
        expect(stack.stdout()).not.toContain(line.slice(line.indexOf('=') + 1));
      }
    } finally {
      await expectCleanStop(stack, 'SIGTERM');
    }
  });

  test('when its databases were set up with other secrets (another checkout, or .svc/ removed), then one line says so and how to go on, and nothing starts', async () => {
    const otherState = mkdtempSync(path.join(os.tmpdir(), 'svc-dev-stack-other-'));
    try {
      const vars = await env();
      const stack = startBuiltEntryPoint(packageDir, 'dist/main.js', {
        ...vars,
        SVC_DEV_STATE_DIR: otherState,
      });
      expect(await exitWithin(stack, 20_000)).toBe(1);
      const lines = stack.stderr().trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      const [hubDb, workflowDb] = [vars.SVC_DEV_HUB_DATABASE, vars.SVC_DEV_WORKFLOW_DATABASE];
      const secretsFile = path.join(otherState, 'dev-secrets.json');
      const opening =
        `The databases ${hubDb}, ${workflowDb} were set up with other secrets than ${secretsFile} (by another ` +
        'checkout on this machine, or before .svc/ was removed), so the hub could not open them.';
      expect(lines[0]!.slice(0, opening.length)).toBe(opening);
      const dropdb = (name: string | undefined) => `dropdb -h \\S+ -p \\d+ -U \\S+ ${name}`;
      expect(lines[0]).toMatch(
        new RegExp(`drop them to start afresh: ${dropdb(hubDb)} && ${dropdb(workflowDb)}$`),
      );
      // Nothing was started or migrated: no service logged a line.
      expect(stack.stdout()).toBe('');
      const secrets = readFileSync(secretsFile, 'utf8');
      for (const value of Object.values(JSON.parse(secrets) as Record<string, string>))
        expect(stack.stderr()).not.toContain(value);
    } finally {
      rmSync(otherState, { recursive: true, force: true });
    }
  });

  test('when PostgreSQL is unreachable, then one line says so and how to start it, and the exit code is 1', async () => {
    const stack = startBuiltEntryPoint(packageDir, 'dist/main.js', {
      ...(await env()),
      DATABASE_URL: 'postgresql://postgres@127.0.0.1:1',
    });
    expect(await exitWithin(stack, 20_000)).toBe(1);
    const lines = stack.stderr().trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^PostgreSQL is not reachable at 127\.0\.0\.1:1 .*Start it/);
  });

  test('when Redis is unreachable, then one line says so, and the exit code is 1', async () => {
    const stack = startBuiltEntryPoint(packageDir, 'dist/main.js', {
      ...(await env()),
      REDIS_URL: 'redis://127.0.0.1:1',
    });
    expect(await exitWithin(stack, 20_000)).toBe(1);
    const lines = stack.stderr().trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Redis is not reachable at 127\.0\.0\.1:1 /);
  });
});

describe('log formatting', () => {
  test('when a service prints a pino line, then it becomes time, level, message and fields', () => {
    expect(
      formatLogLine(
        '{"level":"info","time":"2026-11-21T06:52:27.123Z","service":"hub-api","pid":1,"msg":"listening","url":"http://x"}',
      ),
    ).toBe('06:52:27 INFO  listening url=http://x');
    expect(formatLogLine('plain text')).toBe('plain text');
  });
});
