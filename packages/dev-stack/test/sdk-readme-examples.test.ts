/**
 * Every code example of packages/sdk/README.md runs, as a partner gets the SDK:
 * - the SDK is packed (`pnpm pack`) and the tarball installed with plain `npm install` into a fresh project
 *   outside the workspace, together with the oldest and the newest TypeScript the README names (one install,
 *   shared by every check of the run);
 * - every TypeScript block is a complete module whose first line names its file (the README's convention);
 *   the blocks are written into an ES module project (`"type": "module"`) as they are, and into a CommonJS
 *   project with what follows the imports inside an `async function main()`, as the README says;
 * - both projects are type-checked (strict, without `skipLibCheck`) and compiled by both TypeScript versions;
 * - the programs run in README order against a real stack (hub, Workflow API, worker): setup, then the agent
 *   of the README in the background (it serves every run), the five steps, handles, run(), errors, the raw
 *   client, pagination and the delivery receiver; the ES module build of the newest TypeScript and the
 *   CommonJS build of the oldest.
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, startRunStack } from '@svc/testing';
import type { RunStack } from '@svc/testing';
import { codeBlocks } from './support/markdown';
import type { CodeBlock } from './support/markdown';

const REPO = path.resolve(__dirname, '../../..');
const SDK_DIR = path.join(REPO, 'packages', 'sdk');
const README = readFileSync(path.join(SDK_DIR, 'README.md'), 'utf8');
const exec = promisify(execFile);
jest.setTimeout(420_000);

/** A fenced code block with the file a TypeScript block names on its first line (`// name.ts`). */
interface Block extends CodeBlock {
  file: string;
}

const blocks: Block[] = codeBlocks(README).map((block) => ({
  ...block,
  file: /^\/\/ ([\w-]+\.ts)$/.exec(block.code.split('\n')[0] ?? '')?.[1] ?? '',
}));
const tsBlocks = blocks.filter((b) => b.lang === 'ts');
/** The TypeScript versions the README names: "TypeScript <oldest> to <newest>". */
const named = /TypeScript (\d+\.\d+) to (\d+\.\d+)/.exec(README);
const TS = { old: named?.[1] ?? 'missing', new: named?.[2] ?? 'missing' };
/** Modules the programs import; every other block is a program run below. */
const LIBRARIES = ['client.ts', 'events.ts'];
/** The programs run in this order (the agent and the receiver run beside the others). */
const PROGRAMS = [
  'setup.ts',
  'five-steps.ts',
  'handles.ts',
  'run.ts',
  'retry.ts',
  'errors.ts',
  'raw.ts',
  'unwrap.ts',
  'pagination.ts',
];
const SERVERS = ['agent.ts', 'receiver.ts'];

let root: string;
let stack: RunStack;
let agentToken: string;
const compiled: Record<string, { status: 'ok' } | { status: 'failed'; output: string }> = {};

/** The CommonJS form of a block: imports stay at the top, the rest runs inside `async function main()`. */
function commonJs(code: string): string {
  if (/^export /m.test(code)) return code;
  const lines = code.split('\n');
  let i = 0;
  let inImport = false;
  while (i < lines.length) {
    const line = lines[i]!;
    if (inImport) inImport = !/from '[^']+';/.test(line);
    else if (/^import /.test(line)) inImport = !/from '[^']+';|^import '[^']+';/.test(line);
    else if (!/^\s*(\/\/.*)?$/.test(line)) break;
    i += 1;
  }
  const body = lines.slice(i).join('\n');
  return `${lines.slice(0, i).join('\n')}\n\nasync function main(): Promise<void> {\n${body}\n}\n\nmain().catch((error: unknown) => {\n  console.error(error);\n  process.exitCode = 1;\n});\n`;
}

/**
 * One program per TypeScript version over both projects: `nodenext` reads each file's format from its
 * project's `package.json`, and the SDK's declarations are checked once per version instead of once per kind.
 */
function tsconfig(outDir: string) {
  return JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      lib: ['ES2022', 'DOM'],
      module: 'nodenext',
      moduleResolution: 'nodenext',
      strict: true,
      skipLibCheck: false,
      types: ['node'],
      rootDir: '.',
      outDir,
    },
    include: ['esm/*.ts', 'cjs/*.ts'],
  });
}

async function sh(command: string, args: string[], cwd: string, timeout = 240_000) {
  try {
    return await exec(command, args, { cwd, timeout, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed:\n${e.stdout ?? ''}\n${e.stderr ?? e.message}`, {
      cause: error,
    });
  }
}

function settings(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? os.homedir(),
    WORKFLOW_URL: stack.workflowUrl,
    HUB_URL: stack.hubUrl,
    SVC_API_KEY: stack.apiKey,
    SVC_PROJECT_ID: stack.project.id,
    SVC_WORKSPACE_ID: stack.workspace.id,
    ...extra,
  };
}

/** Runs one compiled program to its end; its output, or an error with everything it printed. */
async function runProgram(dir: string, file: string): Promise<string> {
  const child = spawn(process.execPath, [file.replace(/\.ts$/, '.js')], {
    cwd: dir,
    env: settings(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { code, stdout, stderr } = await collect(child, 180_000);
  if (code !== 0) throw new Error(`${file} (${dir}) exited ${code}:\n${stdout}\n${stderr}`);
  return stdout;
}

function collect(child: ChildProcess, timeoutMs: number) {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

async function waitForOutput(read: () => string, pattern: RegExp, what: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(read())) {
    if (Date.now() > deadline) throw new Error(`${what}: no ${pattern} within ${timeoutMs} ms:\n${read()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'svc-sdk-readme-'));
  const startStack = startRunStack({
    env: {
      WORKFLOW_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      WORKFLOW_DELIVERY_ALLOW_LOOPBACK: 'true',
      WORKFLOW_STAGE_STALL_SECONDS: '120',
    },
  });
  const began = Date.now();
  const phases: Record<string, number> = {};
  const mark = (phase: string) => (phases[phase] = Math.round((Date.now() - began) / 1000));
  // While the stack starts: pack the SDK from its build and install it, once, with both compilers.
  const install = (async () => {
    await sh(process.execPath, ['scripts/generate.mjs'], SDK_DIR);
    await sh(process.execPath, ['scripts/build.mjs'], SDK_DIR);
    await sh('pnpm', ['pack', '--pack-destination', root], SDK_DIR);
    const tarball = readdirSync(root).find((f) => f.endsWith('.tgz'));
    if (!tarball) throw new Error('pnpm pack produced no tarball');
    writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'partner', private: true }));
    await sh(
      'npm',
      [
        'install',
        `./${tarball}`,
        `ts-old@npm:typescript@~${TS.old}.0`,
        `ts-new@npm:typescript@~${TS.new}.0`,
        '@types/node@20',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
      ],
      root,
    );
    mark('packed and installed');
    for (const kind of ['esm', 'cjs'] as const) {
      const dir = path.join(root, kind);
      mkdirSync(dir);
      writeFileSync(
        path.join(dir, 'package.json'),
        JSON.stringify({ private: true, type: kind === 'esm' ? 'module' : 'commonjs' }),
      );
      for (const block of tsBlocks) {
        writeFileSync(path.join(dir, block.file), kind === 'esm' ? block.code : commonJs(block.code));
      }
      for (const version of ['old', 'new'] as const) {
        // The compiled files keep their project's module format.
        mkdirSync(path.join(root, `out-${version}`, kind), { recursive: true });
        writeFileSync(
          path.join(root, `out-${version}`, kind, 'package.json'),
          readFileSync(path.join(dir, 'package.json')),
        );
      }
    }
    // Both versions at once, each over both module kinds; a diagnostic counts against the kind of its file
    // (one outside both, e.g. in a declaration of the SDK, against both).
    await Promise.all(
      (['old', 'new'] as const).map(async (version) => {
        writeFileSync(path.join(root, `tsconfig.${version}.json`), tsconfig(`out-${version}`));
        const tsc = path.join(root, 'node_modules', `ts-${version}`, 'bin', 'tsc');
        let output = '';
        try {
          await exec(process.execPath, [tsc, '-p', `tsconfig.${version}.json`], {
            cwd: root,
            timeout: 300_000,
          });
        } catch (error) {
          const e = error as { stdout?: string; stderr?: string; message: string };
          output = `${e.stdout ?? ''}${e.stderr ?? ''}` || e.message;
        }
        for (const kind of ['esm', 'cjs']) {
          const other = kind === 'esm' ? 'cjs/' : 'esm/';
          const mine = output
            .split('\n')
            .filter((line) => line.trim() !== '' && !line.startsWith(other) && !line.startsWith(' '));
          compiled[`${kind} ${version}`] =
            mine.length === 0 ? { status: 'ok' } : { status: 'failed', output };
        }
      }),
    );
    mark('compiled');
  })();
  void startStack.then(
    () => mark('stack started'),
    () => undefined,
  );
  const [started, failure] = await Promise.all([startStack, install.catch((error: unknown) => error)]);
  stack = started;
  if (failure) throw failure; // afterAll closes the stack
  // The README's agent takes the `report` stages; it is registered and started at the hub, which hands out
  // its token, as `svc start` does.
  agentToken = (await stack.addAgent(['report'], { start: false })).token;
  process.stdout.write(`sdk readme examples, seconds since the start: ${JSON.stringify(phases)}\n`);
}, 420_000);

afterAll(async () => {
  await stack?.close();
  if (root) rmSync(root, { recursive: true, force: true });
}, 60_000);

describe('the SDK README', () => {
  test('when its blocks are read, then each TypeScript block names its file and is run or imported below', () => {
    expect(TS.old).toMatch(/^\d+\.\d+$/);
    expect(TS.new).toMatch(/^\d+\.\d+$/);
    for (const block of blocks) expect(['sh', 'ts']).toContain(block.lang);
    expect(blocks.filter((b) => b.lang === 'sh').map((b) => b.code)).toEqual(['npm install @svc/sdk']);
    for (const block of tsBlocks) {
      expect({ line: block.line, file: block.file }).toEqual({ line: block.line, file: expect.any(String) });
      expect(block.file).not.toBe('');
    }
    const files = tsBlocks.map((b) => b.file).sort();
    expect(new Set(files).size).toBe(files.length);
    expect(files).toEqual([...LIBRARIES, ...PROGRAMS, ...SERVERS].sort());
  });

  test.each(['esm old', 'esm new', 'cjs old', 'cjs new'])(
    'when the %s build is type-checked without skipLibCheck, then it compiles',
    (build) => {
      expect(compiled[build]).toEqual({ status: 'ok' });
    },
  );

  async function runAll(kind: 'esm' | 'cjs', version: 'old' | 'new') {
    const dir = path.join(root, `out-${version}`, kind);
    const agent = spawn(process.execPath, ['agent.js'], {
      cwd: dir,
      env: settings({ AGENT_TOKEN: agentToken }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const agentDone = collect(agent, 400_000);
    let agentOut = '';
    agent.stdout.on('data', (c: Buffer) => (agentOut += c.toString('utf8')));
    const out: Record<string, string> = {};
    try {
      for (const program of PROGRAMS) out[program] = await runProgram(dir, program);
      const port = await freePort();
      const receiver = spawn(process.execPath, ['receiver.js'], {
        cwd: dir,
        env: settings({ RECEIVER_URL: `http://127.0.0.1:${port}/svc/deliveries` }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let receiverOut = '';
      receiver.stdout.on('data', (c: Buffer) => (receiverOut += c.toString('utf8')));
      const receiverDone = collect(receiver, 120_000);
      await waitForOutput(
        () => receiverOut,
        /^delivery: test of dsub_\w+$[^]*^test delivery: /m,
        'receiver.js',
      ).catch(async (error: unknown) => {
        receiver.kill('SIGKILL');
        const { stderr } = await receiverDone;
        throw new Error(`${String(error)}\n${stderr}`);
      });
      receiver.kill('SIGINT');
      const ended = await receiverDone;
      out['receiver.ts'] = ended.stdout;
      expect({ code: ended.code, stderr: ended.stderr }).toEqual({ code: 0, stderr: '' });
      // It unsubscribed on its way out.
      const { data } = await stack.wf.GET('/api/v1/projects/{projectId}/workflow/delivery-subscriptions', {
        params: { path: { projectId: stack.project.id } },
      });
      expect(data?.data ?? []).toEqual([]);
    } finally {
      agent.kill('SIGTERM');
    }
    const ended = await agentDone;
    expect({ code: ended.code, stderr: ended.stderr }).toEqual({ code: 0, stderr: '' });
    out['agent.ts'] = ended.stdout;
    return out;
  }

  function expectOutputs(out: Record<string, string>) {
    expect(out['setup.ts']).toMatch(/^contract: wfc_\w+$/m);
    const five = out['five-steps.ts']!;
    expect(five).toMatch(/^resolve: true /m);
    expect(five).toMatch(/^preflight: (true|false) /m);
    expect(five).toMatch(/^invoke: inv_\w+ false$/m);
    expect(five).toMatch(/^launch: accepted/m);
    expect(five).toMatch(/^artifact: Weekly status$/m);
    expect(out['handles.ts']).toMatch(/^result: inv_\w+ Weekly status$/m);
    expect(out['run.ts']).toMatch(/^run: inv_\w+ Weekly status$/m);
    expect(out['retry.ts']).toMatch(/^retry: inv_\w+ retry of inv_\w+$/m);
    expect(out['errors.ts']).toMatch(/^not found: invocation_not_found req_\S+$/m);
    expect(out['errors.ts']).toMatch(/^refused: 400 \w+ \[\s*\{[^]*intent/m);
    expect(out['errors.ts']).toMatch(/^no answer: connection_refused 127\.0\.0\.1:47$/m);
    expect(out['raw.ts']).toMatch(/^contracts: \[ 'Weekly report' \]$/m);
    expect(out['unwrap.ts']).toMatch(/^schemas: \[ 'weekly-report@1\.0\.0' \]$/m);
    const pages = out['pagination.ts']!;
    expect(pages.match(/^inv_\w+ completed$/gm)?.length).toBeGreaterThanOrEqual(3);
    expect(pages).toMatch(/^2 \S+$/m);
    expect(pages).toMatch(/^collected: \d+$/m);
    expect(out['receiver.ts']).toMatch(/^test delivery: true 204$/m);
    // The agent served every run: the five steps, the handle and run().
    expect(out['agent.ts']!.match(/^completed: inv_\w+$/gm)?.length).toBeGreaterThanOrEqual(3);
  }

  test('when the ES module build of the newest TypeScript runs in README order, then every program succeeds', async () => {
    expect(compiled['esm new']).toEqual({ status: 'ok' });
    expectOutputs(await runAll('esm', 'new'));
  });

  test('when the CommonJS build of the oldest TypeScript runs in README order, then every program succeeds', async () => {
    expect(compiled['cjs old']).toEqual({ status: 'ok' });
    expectOutputs(await runAll('cjs', 'old'));
  });
});
