import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { resolveConfigPaths } from '../src/domain/config-paths';
import { appDir, assertBuilt, bin, modeOf, tempHome } from './support/cli';
import { HubStack } from './support/stack';

jest.setTimeout(120_000);

/**
 * Runs the built CLI on a real pseudo-terminal (util-linux `script`), answering each prompt once it appears, so
 * the terminal's own echo setting is what the test observes.
 */
function onTerminal(
  args: string[],
  env: Record<string, string>,
  answers: Array<[prompt: string, answer: string]>,
): Promise<{ code: number; output: string }> {
  const command = [process.execPath, bin, ...args]
    .map((part) => `'${part.replace(/'/g, `'\\''`)}'`)
    .join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: appDir,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  let next = 0;
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
    while (next < answers.length && output.includes(answers[next]![0])) {
      child.stdin.write(`${answers[next]![1]}\r`);
      next += 1;
    }
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, output }));
  });
}

let stack: HubStack;
let home: string;

beforeAll(async () => {
  assertBuilt('login', 'the accounts commands');
  if (!fs.existsSync('/usr/bin/script'))
    throw new Error('these tests need util-linux `script` for a terminal');
  stack = await HubStack.start('terminal', { projectCode: 'ACCT' });
}, 120_000);

afterAll(async () => {
  await stack?.close();
  if (home) fs.rmSync(home, { recursive: true, force: true });
});

describe('svc on a terminal', () => {
  it('when login prompts for the email and password, then the email is echoed, the password is not, and the profile is stored', async () => {
    home = tempHome('svc-terminal-');
    const configDir = path.join(home, 'cfg');
    const env = { HOME: home, SVC_CONFIG_DIR: configDir };

    const result = await onTerminal(['login', '--hub-url', stack.hubUrl, '--workspace', stack.slug], env, [
      ['Email: ', stack.email],
      ['Password: ', stack.password],
    ]);

    expect(result.code).toBe(0);
    expect(result.output).toContain(stack.email);
    expect(result.output).not.toContain(stack.password);
    expect(result.output).toContain(`Logged in to ${stack.hubUrl} as ${stack.email}`);
    const paths = resolveConfigPaths({ configDir, profile: 'default' });
    expect(modeOf(paths.profile_path)).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(paths.profile_path, 'utf8')).participant.email).toBe(stack.email);

    // config reset asks on a terminal: "n" keeps the profile, "y" removes it.
    const kept = await onTerminal(['config', 'reset'], env, [['[y/N] ', 'n']]);
    expect(kept.code).toBe(1);
    expect(kept.output).toContain('[cancelled]');
    expect(fs.existsSync(paths.profile_path)).toBe(true);

    const removed = await onTerminal(['config', 'reset'], env, [['[y/N] ', 'y']]);
    expect(removed.code).toBe(0);
    expect(fs.existsSync(paths.profile_path)).toBe(false);
  });
});
