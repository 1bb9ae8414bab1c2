/**
 * The SDK as a partner gets it: packed, installed from the tarball into a project outside the workspace,
 * a strict program type-checked under `nodenext` and `bundler` resolution, then run as an ES module and as
 * CommonJS against a real stack (hub, Workflow API, worker, a reference agent and an agent written with the
 * SDK). Also measures the bundle a partner ships (minified, gzip).
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type * as Esbuild from 'esbuild';
import { startRunStack } from '@svc/testing';
import type { RunStack } from '@svc/testing';

const SDK_DIR = join(__dirname, '..');
const WORKSPACE = join(SDK_DIR, '../..');
const TSC = join(WORKSPACE, 'node_modules/typescript/bin/tsc');
const TYPE_ROOTS = join(WORKSPACE, 'node_modules/@types');

let app: string;
let tarball: string;
let stack: RunStack;
let programEnv: Record<string, string>;

function run(command: string, args: string[], cwd: string, timeout = 240_000): string {
  try {
    return execFileSync(command, args, { cwd, encoding: 'utf8', timeout, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed:\n${e.stdout ?? ''}\n${e.stderr ?? e.message}`, {
      cause: error,
    });
  }
}

function tsconfig(name: string, options: Record<string, unknown>, include: string[]) {
  writeFileSync(
    join(app, name),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        lib: ['ES2022', 'DOM'],
        strict: true,
        noUncheckedIndexedAccess: true,
        exactOptionalPropertyTypes: true,
        noImplicitOverride: true,
        skipLibCheck: false,
        types: ['node'],
        typeRoots: [TYPE_ROOTS],
        ...options,
      },
      include,
    }),
  );
}

beforeAll(async () => {
  run(process.execPath, ['scripts/generate.mjs'], SDK_DIR);
  run(process.execPath, ['scripts/build.mjs'], SDK_DIR);
  app = mkdtempSync(join(tmpdir(), 'svc-sdk-partner-'));
  run('pnpm', ['pack', '--pack-destination', app], SDK_DIR);
  const packed = readdirSync(app).find((f) => f.endsWith('.tgz'));
  if (!packed) throw new Error('pnpm pack produced no tarball');
  tarball = join(app, packed);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'partner-app', private: true, version: '1.0.0' }),
  );
  run('npm', ['install', tarball, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], app);
  copyFileSync(join(__dirname, 'partner/program.ts'), join(app, 'main.mts'));
  copyFileSync(join(__dirname, 'partner/program.ts'), join(app, 'main.cts'));

  stack = await startRunStack({
    env: {
      WORKFLOW_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      WORKFLOW_DELIVERY_ALLOW_LOOPBACK: 'true',
      WORKFLOW_DELIVERY_RETRY_SCHEDULE: '0.2,0.5,1,1,1',
      WORKFLOW_DELIVERY_TIMEOUT_MS: '3000',
      WORKFLOW_STAGE_STALL_SECONDS: '120',
    },
  });
  const reference = await stack.seedRoute({ intent: 'partner five steps' });
  const sdkRoute = await stack.seedRoute({
    intent: 'written by the sdk agent',
    stages: [{ key: 'write', title: 'Write', required_capabilities: ['sdk-writer'] }],
  });
  await stack.seedRoute({ intent: 'needs a human approval', approval: true });
  await stack.addAgent([]);
  const sdkAgent = await stack.addAgent(['sdk-writer'], { start: false });
  programEnv = {
    WORKFLOW_URL: stack.workflowUrl,
    HUB_URL: stack.hubUrl,
    SVC_API_KEY: stack.apiKey,
    PROJECT_ID: stack.project.id,
    WORKSPACE_ID: stack.workspace.id,
    INTENT: `${reference.intent} for the platform team`,
    SCHEMA_NAME: reference.schemaName,
    AGENT_INTENT: `${sdkRoute.intent}, please`,
    APPROVAL_INTENT: 'needs a human approval first',
    AGENT_TOKEN: sdkAgent.token,
  };
}, 420_000);

afterAll(async () => {
  await stack?.close();
  if (app && existsSync(app)) rmSync(app, { recursive: true, force: true });
}, 60_000);

describe('the packed SDK in a partner project', () => {
  it('ships built files, a README and a licence, and no source-only export condition', () => {
    const files = run('tar', ['-tzf', tarball], app).split('\n').filter(Boolean);
    expect(files).toEqual(
      expect.arrayContaining(['package/README.md', 'package/LICENSE', 'package/package.json']),
    );
    expect(files.every((f) => /^package\/(dist\/|README\.md$|LICENSE$|package\.json$)/.test(f))).toBe(true);
    expect(files.some((f) => f.includes('/src/') || f.endsWith('.yaml'))).toBe(false);
    const manifest = readFileSync(join(app, 'node_modules/@svc/sdk/package.json'), 'utf8');
    const targets = [...manifest.matchAll(/"(\.\/[^"]+)"/g)]
      .map((m) => m[1]!)
      .filter((t) => t !== './package.json');
    for (const target of targets.filter((t) => t.startsWith('./dist'))) {
      expect(existsSync(join(app, 'node_modules/@svc/sdk', target))).toBe(true);
    }
    expect(manifest).not.toContain('svc-source');
    expect(manifest).not.toContain('workspace:');
    const { dependencies = {}, peerDependencies = {} } = JSON.parse(manifest) as Record<
      string,
      Record<string, string>
    >;
    expect(Object.keys({ ...dependencies, ...peerDependencies })).toEqual(['openapi-fetch']);
    // No Node.js module is loaded by the shipped code (Web Crypto and fetch only).
    for (const format of ['esm', 'cjs']) {
      const dir = join(app, 'node_modules/@svc/sdk/dist', format);
      for (const file of readdirSync(dir).filter((f) => f.endsWith('.js'))) {
        expect(readFileSync(join(dir, file), 'utf8')).not.toMatch(
          /["']node:|require\(["'](crypto|http|https|fs)["']\)|from ["'](crypto|http|fs)["']/,
        );
      }
    }
  });

  it('type-checks a strict program under nodenext (ESM and CommonJS) and bundler resolution', () => {
    tsconfig('tsconfig.nodenext.json', { module: 'nodenext', moduleResolution: 'nodenext', outDir: 'out' }, [
      'main.mts',
      'main.cts',
    ]);
    tsconfig('tsconfig.bundler.json', { module: 'esnext', moduleResolution: 'bundler', noEmit: true }, [
      'main.mts',
    ]);
    run(process.execPath, [TSC, '-p', 'tsconfig.bundler.json'], app);
    run(process.execPath, [TSC, '-p', 'tsconfig.nodenext.json'], app);
    expect(existsSync(join(app, 'out/main.mjs'))).toBe(true);
    expect(existsSync(join(app, 'out/main.cjs'))).toBe(true);
    expect(readFileSync(join(app, 'out/main.cjs'), 'utf8')).toContain('require("@svc/sdk")');
  }, 180_000);

  it('a program with a type error against the SDK is refused (the check can fail)', () => {
    writeFileSync(
      join(app, 'wrong.mts'),
      "import { Workflow } from '@svc/sdk';\nconst w = new Workflow({ baseUrl: 'http://x' });\nvoid w.invocations.create({ intnt: 'typo' });\n",
    );
    tsconfig('tsconfig.wrong.json', { module: 'nodenext', moduleResolution: 'nodenext', noEmit: true }, [
      'wrong.mts',
    ]);
    expect(() => run(process.execPath, [TSC, '-p', 'tsconfig.wrong.json'], app)).toThrow(/intnt/);
  }, 120_000);

  async function runProgram(file: string, mode: string): Promise<Record<string, unknown>> {
    const child = spawn(process.execPath, [file], {
      cwd: app,
      env: { PATH: process.env.PATH ?? '', ...programEnv, MODE: mode },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    if (code !== 0) throw new Error(`${file} exited ${code}:\n${stdout}\n${stderr}`);
    return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
  }

  function expectFiveSteps(result: Record<string, unknown>) {
    const version = JSON.parse(readFileSync(join(SDK_DIR, 'package.json'), 'utf8')).version as string;
    expect(result).toMatchObject({
      userAgent: `svc-sdk-js/${version}`,
      resolved: true,
      created: false,
      replayed: true,
      sameInvocation: true,
      state: 'completed',
      run: { state: 'completed', byAgent: true },
      attention: 'approval_required',
      contract: { priority: 0, fallback: false, active: true, deactivated: true, listed: true },
      notFound: { status: 404 },
      invalid: { code: expect.any(String) },
      listedIncludes: true,
      firstPage: { size: 1, hasNext: true },
      delivery: { type: 'invocation.completed', state: 'completed' },
      rejectedDeliveries: 0,
    });
    // On a loaded machine an owner's presence can be late: the launch is then accepted and waits for it
    // (`waits_for_owner` blockers only), and the run still completes.
    expect(['accepted', 'accepted_waiting_for_owner']).toContain(result.launch);
    for (const blocker of [
      ...(result.preflightBlockers as string[]),
      ...(result.launchBlockers as string[]),
    ]) {
      expect(blocker).toMatch(/^waits_for_owner:/);
    }
    if (result.launch === 'accepted') expect(result.preflight).toBe(true);
    process.stdout.write(
      `five steps: launch ${String(result.launch)}, preflight blockers ${JSON.stringify(result.preflightBlockers)}\n`,
    );
    expect((result.notFound as { requestId?: string }).requestId).toEqual(expect.any(String));
    expect(result.payload).toEqual(expect.objectContaining({ title: expect.any(String) }));
    expect((result.run as { payload: unknown }).payload).toEqual({
      title: 'Weekly',
      summary: 'All good.',
      items: [{ name: 'uptime', score: 99 }],
    });
    expect(result.listed as number).toBeGreaterThanOrEqual(3);
  }

  it('runs as an ES module through the five steps, run(), a receiver and an agent', async () => {
    expectFiveSteps(await runProgram('out/main.mjs', 'esm'));
  }, 400_000);

  it('runs as CommonJS through the same', async () => {
    expectFiveSteps(await runProgram('out/main.cjs', 'cjs'));
  }, 400_000);

  it('bundles the workflow client with webhooks under 40 kB gzip', async () => {
    const esbuild: typeof Esbuild = await import('esbuild');
    const size = async (contents: string) => {
      const out = await esbuild.build({
        stdin: { contents, resolveDir: app, loader: 'ts' },
        bundle: true,
        minify: true,
        format: 'esm',
        platform: 'neutral',
        mainFields: ['module', 'main'],
        conditions: ['import'],
        write: false,
      });
      const code = out.outputFiles[0]!.contents;
      return { minified: code.length, gzip: gzipSync(code).length };
    };
    const client = await size("export { Workflow, Webhook, verifyEnvelope } from '@svc/sdk';");
    const everything = await size("export * from '@svc/sdk';");
    const webhooks = await size("export { Webhook } from '@svc/sdk/webhooks';");
    process.stdout.write(`sdk bundle sizes (bytes): ${JSON.stringify({ client, everything, webhooks })}\n`);
    writeFileSync(
      join(SDK_DIR, 'bundle-size.json'),
      `${JSON.stringify({ client, everything, webhooks }, null, 2)}\n`,
    );
    expect(client.gzip).toBeLessThan(40 * 1024);
    expect(webhooks.gzip).toBeLessThan(client.gzip);
  }, 120_000);
});
