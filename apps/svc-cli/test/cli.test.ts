import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

const appDir = path.resolve(__dirname, '..');
const bin = path.join(appDir, 'bin', 'run.js');

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node bin/run.js …` as a real process with a throw-away HOME, so the default
 * config directory never points at the developer's own ~/.config/svc.
 */
async function svc(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, HOME: home, NO_COLOR: '1' };
  delete childEnv.SVC_CONFIG_DIR;
  delete childEnv.DEBUG;
  Object.assign(childEnv, env);
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [bin, ...args], {
      cwd: appDir,
      env: childEnv,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

let home: string;

beforeAll(() => {
  // The CLI runs from dist/, exactly as installed; the README's test command builds it first.
  if (!fs.existsSync(path.join(appDir, 'dist', 'main.js'))) {
    throw new Error('apps/svc-cli/dist is missing: run `pnpm build` first (the README test command does)');
  }
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-home-'));
});

afterAll(() => {
  fs.rmSync(home, { recursive: true, force: true });
});

describe('svc', () => {
  jest.setTimeout(30_000);

  it('when bin/run.js is checked, then it is executable with a node shebang', () => {
    expect(fs.statSync(bin).mode & 0o111).not.toBe(0);
    expect(fs.readFileSync(bin, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
  });

  it('when called with --version, then it prints name/version, platform and node version and exits 0', async () => {
    const result = await svc(['--version']);

    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(
      `@svc/cli/0.1.0 ${process.platform}-${process.arch} node-${process.version}`,
    );
  });

  it('when called with --help, then it lists the config topic and exits 0', async () => {
    const result = await svc(['--help']);

    expect(result.code).toBe(0);
    expect(result.stdout).toContain('USAGE\n  $ svc [COMMAND]');
    expect(result.stdout).toMatch(/TOPICS\n\s+config\s+Inspect and manage local svc configuration\./);
    expect(result.stderr).toBe('');
  });

  it('when the config topic is asked for help, then it lists "config path"', async () => {
    const result = await svc(['config', '--help']);

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /COMMANDS\n(?:.*\n)*?\s+config path\s+Print where svc keeps its configuration\./,
    );
  });

  it('when "config path --json" runs without flags, then it prints the default directory and profile as JSON', async () => {
    const result = await svc(['config', 'path', '--json']);

    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      ok: true,
      result: {
        config_dir: path.join(home, '.config', 'svc'),
        profile: 'default',
        profile_path: path.join(home, '.config', 'svc', 'profiles', 'default.json'),
        runtime_env_path: path.join(home, '.config', 'svc', 'profiles', 'default.runtime.env'),
        state_dir: path.join(home, '.config', 'svc', 'run', 'default'),
      },
    });
  });

  it('when SVC_CONFIG_DIR is set, then it is the config directory', async () => {
    const result = await svc(['config', 'path', '--json'], { SVC_CONFIG_DIR: '/srv/svc/config' });

    expect(JSON.parse(result.stdout)).toMatchObject({ result: { config_dir: '/srv/svc/config' } });
  });

  it('when --config-dir and SVC_CONFIG_DIR are both given, then the flag wins', async () => {
    const result = await svc(['config', 'path', '--json', '--config-dir', '/opt/svc'], {
      SVC_CONFIG_DIR: '/srv/svc/config',
    });

    expect(JSON.parse(result.stdout)).toMatchObject({ result: { config_dir: '/opt/svc' } });
  });

  it('when global flags come before the command, then they apply to it', async () => {
    const result = await svc(['--profile', 'staging', '--config-dir=/opt/svc', 'config', 'path', '--json']);

    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      ok: true,
      result: { config_dir: '/opt/svc', profile: 'staging', profile_path: '/opt/svc/profiles/staging.json' },
    });
  });

  it('when "config path" runs without --json, then it prints one labelled path per line and creates nothing', async () => {
    const configDir = path.join(home, 'not-created');
    const result = await svc(['config', 'path', '--config-dir', configDir]);

    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')).toEqual([
      `config_dir    ${configDir}`,
      'profile       default',
      `profile_path  ${path.join(configDir, 'profiles', 'default.json')}`,
      '',
    ]);
    expect(fs.existsSync(configDir)).toBe(false);
  });

  it('when the profile name could escape the config directory, then it fails with a clear message', async () => {
    const result = await svc(['config', 'path', '--profile', '../etc']);

    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('invalid profile name "../etc"');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('when the command is unknown, then it exits non-zero with a clear message and no stack trace', async () => {
    const result = await svc(['no-such-command']);

    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('command no-such-command not found');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
