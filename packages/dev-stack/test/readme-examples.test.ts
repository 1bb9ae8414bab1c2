/**
 * Every code example of README.md runs, as written, against a real stack started the way `pnpm start` starts
 * it (the dev-stack launcher from its build, on its own databases, ports and state directory):
 * - the first two blocks are the install-and-start and the test commands, kept exactly as they are (the first
 *   is what this test starts, the second is what runs this test);
 * - the JSON block has the shape of the real `.svc/dev-stack.json`;
 * - the TypeScript blocks are one program in README order: type-checked (strict) and run with `@svc/sdk`;
 * - the other bash blocks run in order in one shell, as a reader pastes them into one terminal.
 * Examples run in a scratch directory that holds the stack's `.svc`, the repository's `apps` and the SDK as
 * an installed package, as the repository root does for a reader.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DevStackSettings, NodeProcess } from '@svc/testing';
import { devStackSettings, removeDevStack, startDevStack } from '@svc/testing';
import { codeBlocks } from './support/markdown';

const REPO = path.resolve(__dirname, '../../..');
jest.setTimeout(600_000);

const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');
const blocks = codeBlocks(readme);
// The reader's repository root: the stack's state in its `.svc`, the repository's apps, the SDK installed.
const workDir = mkdtempSync(path.join(os.tmpdir(), 'svc-readme-run-'));
const stateDir = path.join(workDir, '.svc');
let settings: DevStackSettings;
let stack: NodeProcess | undefined;

/** Keys of every object, recursively (array items by their first element), as sorted paths. */
function shape(value: unknown, prefix = ''): string[] {
  if (Array.isArray(value)) return value.length > 0 ? shape(value[0], `${prefix}[]`) : [`${prefix}[]`];
  if (value && typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>)
      .flatMap(([key, inner]) => [`${prefix}${key}`, ...shape(inner, `${prefix}${key}.`)])
      .sort();
  }
  return [];
}

function run(command: string, args: string[], timeoutMs: number) {
  const result = spawnSync(command, args, {
    cwd: workDir,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.homedir() },
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: 16 * 1024 * 1024,
  });
  const output = `${result.stdout ?? ''}\n${result.stderr ?? ''}`;
  return { status: result.status, stdout: result.stdout ?? '', output };
}

beforeAll(async () => {
  settings = await devStackSettings('readme', stateDir);
  stack = await startDevStack(settings.env);
  symlinkSync(path.join(REPO, 'apps'), path.join(workDir, 'apps'));
  mkdirSync(path.join(workDir, 'node_modules', '@svc'), { recursive: true });
  symlinkSync(path.join(REPO, 'packages', 'sdk'), path.join(workDir, 'node_modules', '@svc', 'sdk'));
  symlinkSync(path.join(REPO, 'node_modules', '@types'), path.join(workDir, 'node_modules', '@types'));
  writeFileSync(path.join(workDir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
}, 180_000);

afterAll(async () => {
  await removeDevStack(settings, stack);
  rmSync(workDir, { recursive: true, force: true });
});

describe('README examples', () => {
  test('when the README is read, then it opens with the install-and-start and the test commands, unchanged', () => {
    expect(blocks[0]).toMatchObject({
      lang: 'bash',
      code: 'npm install -g pnpm@10.34.9 && pnpm install --frozen-lockfile && pnpm start',
    });
    expect(blocks[1]).toMatchObject({ lang: 'bash', code: 'pnpm test' });
    // Every block says what it is: code is run below, output and data are marked as such.
    for (const block of blocks) expect(['bash', 'ts', 'json', 'text']).toContain(block.lang);
  });

  test('when the dev-stack.json example is compared with the real file, then it has the same shape', () => {
    const documented = blocks.filter((b) => b.lang === 'json');
    expect(documented).toHaveLength(1);
    const real = JSON.parse(readFileSync(path.join(stateDir, 'dev-stack.json'), 'utf8'));
    expect(shape(JSON.parse(documented[0]!.code))).toEqual(shape(real));
  });

  test('when the TypeScript blocks are type-checked and run as one program, then the five steps complete and the delivery arrives', () => {
    const program = blocks
      .filter((b) => b.lang === 'ts')
      .map((b) => `// README.md line ${b.line}\n${b.code}`)
      .join('\n\n');
    writeFileSync(path.join(workDir, 'readme.ts'), program);
    writeFileSync(
      path.join(workDir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2023', 'DOM'],
          types: ['node'],
          noEmit: true,
          skipLibCheck: true,
        },
        files: ['readme.ts'],
      }),
    );
    const tsc = run(
      process.execPath,
      [path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'],
      120_000,
    );
    expect({ status: tsc.status, output: tsc.output.trim() }).toEqual({ status: 0, output: '' });

    // eslint-disable-next-line @typescript-eslint/no-require-imports -- esbuild is the SDK's build tool
    const esbuild = require(require.resolve('esbuild', { paths: [path.join(REPO, 'packages', 'sdk')] })) as {
      transformSync(code: string, options: Record<string, unknown>): { code: string };
    };
    const js = esbuild.transformSync(program, { loader: 'ts', format: 'esm', target: 'node20' }).code;
    writeFileSync(path.join(workDir, 'readme.mjs'), js);
    const result = run(process.execPath, ['readme.mjs'], 300_000);
    if (result.status !== 0)
      throw new Error(`the README program failed (${result.status}):\n${result.output}`);
    const out = result.stdout;
    expect(out).toMatch(/^me: admin@dev\.svc\.local \[ 'dev:owner' \]$/m);
    expect(out).toMatch(/^error: 403 scope_missing http:\/\/127\.0\.0\.1:\d+\/docs\/errors\/scope_missing$/m);
    expect(out).toMatch(/^contract: wfc_\w+$/m);
    expect(out).toMatch(/^resolve: true /m);
    expect(out).toMatch(/^preflight: true \[\]$/m);
    expect(out).toMatch(/^invoke: inv_\w+ received false$/m);
    expect(out).toMatch(/^launch: accepted$/m);
    expect(out).toMatch(/^artifact: art_\w+ \{/m);
    const invoked = /^invoke: (inv_\w+) /m.exec(out)?.[1];
    const ran = /^run: (inv_\w+) \{/m.exec(out)?.[1];
    expect(invoked).toBeDefined();
    expect(ran).toBeDefined();
    // The receiver verified the signed completion delivery of both runs.
    const deliveries = out.slice(out.indexOf('deliveries:'));
    expect(deliveries).toContain(`invocation.completed ${invoked}`);
    expect(deliveries).toContain(`invocation.completed ${ran}`);
  });

  test('when the bash blocks after the first two run in order in one shell, then each command succeeds', () => {
    const script = blocks
      .slice(2)
      .filter((b) => b.lang === 'bash')
      .map((b) => `echo '### README.md line ${b.line}'\n${b.code}`)
      .join('\n');
    writeFileSync(path.join(workDir, 'readme.sh'), `set -euo pipefail\n${script}\n`);
    const result = run('bash', ['readme.sh'], 300_000);
    if (result.status !== 0)
      throw new Error(`the README commands failed (${result.status}):\n${result.output}`);
    const out = result.stdout;
    expect(out).toContain('/docs/errors/credential_missing');
    expect(out).toContain('<h1><code>credential_missing</code></h1>');
    expect(out).toContain('admin@dev.svc.local');
    expect(out).toContain('incident-writer');
    expect(out).toMatch(/"code": "credential_missing"/);
  });
});
