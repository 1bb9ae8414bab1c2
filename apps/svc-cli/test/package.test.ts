import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { eventually, freePort } from '@svc/testing';
import { BaseCommand } from '../src/base-command';
import { GLOBAL_OPTION_FLAGS } from '../src/main';

const execFileAsync = promisify(execFile);

const appDir = path.resolve(__dirname, '..');
const bin = path.join(appDir, 'bin', 'run.js');
const pkg = JSON.parse(fs.readFileSync(path.join(appDir, 'package.json'), 'utf8')) as {
  version: string;
  files: string[];
  scripts: Record<string, string>;
};

interface ManifestCommand {
  id: string;
  relativePath?: string[];
}
interface OclifManifest {
  version: string;
  commands: Record<string, ManifestCommand>;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(
  file: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd: string },
): Promise<Run> {
  try {
    const { stdout, stderr } = await execFileAsync(file, args, {
      ...options,
      maxBuffer: 64 * 1024 * 1024,
      timeout: 240_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number | string; stdout?: string; stderr?: string };
    return {
      code: typeof failed.code === 'number' ? failed.code : -1,
      stdout: failed.stdout ?? '',
      stderr: `${failed.stderr ?? ''}${typeof failed.code === 'string' ? ` (${failed.code})` : ''}`,
    };
  }
}

/** The command ids compiled under dist/commands (`config/path.js` → `config:path`). */
function compiledCommandIds(): string[] {
  const root = path.join(appDir, 'dist', 'commands');
  const ids: string[] = [];
  const visit = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(full);
      else if (entry.name.endsWith('.js')) {
        ids.push(path.relative(root, full).slice(0, -'.js'.length).split(path.sep).join(':'));
      }
    }
  };
  visit(root);
  return ids.sort();
}

function readManifest(): OclifManifest {
  return JSON.parse(fs.readFileSync(path.join(appDir, 'oclif.manifest.json'), 'utf8')) as OclifManifest;
}

/** The real npm CLI behind `npm` on PATH (a symlink to npm-cli.js). */
function npmCli(): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'npm');
    if (dir && fs.existsSync(candidate)) return fs.realpathSync(candidate);
  }
  throw new Error('npm is not on PATH');
}

beforeAll(() => {
  // The package is tested as built; the README's test command builds it first.
  for (const required of ['dist/main.js', 'oclif.manifest.json']) {
    if (!fs.existsSync(path.join(appDir, required))) {
      throw new Error(
        `apps/svc-cli/${required} is missing: run \`pnpm build\` first (the README test command does)`,
      );
    }
  }
});

describe('svc CLI package: oclif manifest', () => {
  it('when the package is built, then its build script writes the manifest and the package ships it', () => {
    expect(pkg.scripts.build).toMatch(/^tsc -p tsconfig\.build\.json && node scripts\/manifest\.mjs$/);
    expect(pkg.files).toEqual(expect.arrayContaining(['bin', 'dist', 'oclif.manifest.json']));
  });

  it('when the manifest is read, then it lists exactly the commands compiled in dist/commands', () => {
    const manifest = readManifest();
    const compiled = compiledCommandIds();
    expect(compiled.length).toBeGreaterThan(0);
    expect(Object.keys(manifest.commands).sort()).toEqual(compiled);
    expect(manifest.version).toBe(pkg.version);
    for (const [id, command] of Object.entries(manifest.commands)) {
      expect(command.id).toBe(id);
      // oclif loads a command from the manifest's path without scanning dist/commands.
      expect(command.relativePath).toBeDefined();
      expect(fs.existsSync(path.join(appDir, ...(command.relativePath ?? [])))).toBe(true);
    }
  });

  it('when main hoists global flags, then its list is exactly the option flags of the base command', () => {
    const optionFlags = Object.entries(BaseCommand.baseFlags)
      .filter(([, flag]) => flag.type === 'option')
      .map(([name]) => name)
      .sort();
    expect([...GLOBAL_OPTION_FLAGS].sort()).toEqual(optionFlags);
  });
});

describe('svc CLI package: cold start', () => {
  jest.setTimeout(60_000);

  /** Runs `node bin/run.js <args>` and returns its result with the files of every module it loaded. */
  async function runRecordingModules(args: string[]): Promise<Run & { modules: string[] }> {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-modules-'));
    try {
      const loaded = path.join(work, 'loaded.json');
      const preload = path.join(work, 'record-modules.cjs');
      fs.writeFileSync(
        preload,
        `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(loaded)}, ` +
          'JSON.stringify(Object.keys(require.cache))));\n',
      );
      const env: NodeJS.ProcessEnv = { ...process.env, HOME: work, NO_COLOR: '1' };
      delete env.SVC_CONFIG_DIR;
      const result = await run(process.execPath, ['--require', preload, bin, ...args], { env, cwd: work });
      const modules = fs.existsSync(loaded) ? (JSON.parse(fs.readFileSync(loaded, 'utf8')) as string[]) : [];
      return { ...result, modules };
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  }

  it('when `svc --version` runs, then it prints what oclif would print without loading oclif', async () => {
    const result = await runRecordingModules(['--version']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    // What oclif prints for --version: its Config#userAgent, read in a separate Node process.
    const oclif = await run(
      process.execPath,
      [
        '-e',
        "require('@oclif/core').Config.load(process.cwd()).then((c) => process.stdout.write(c.userAgent))",
      ],
      { env: process.env, cwd: appDir },
    );
    expect(oclif).toMatchObject({ code: 0 });
    expect(oclif.stdout).toMatch(/^@svc\/cli\/\S+ \S+-\S+ node-v\S+$/);
    expect(result.stdout).toBe(`${oclif.stdout}\n`);
    expect(result.modules.filter((file) => /@oclif|[/\\]dist[/\\]/.test(file))).toEqual([]);
  });

  it('when `svc --help` runs, then neither the base command, a command nor the hub contracts are loaded', async () => {
    const result = await runRecordingModules(['--help']);
    expect(result).toMatchObject({ code: 0 });
    expect(result.stdout).toContain('USAGE');
    expect(result.modules.some((file) => file.endsWith(`${path.sep}dist${path.sep}main.js`))).toBe(true);
    const heavy = result.modules.filter((file) =>
      /base-command|[/\\]dist[/\\]commands[/\\]|[/\\]contracts[/\\]|openapi-fetch|ajv/.test(file),
    );
    expect(heavy).toEqual([]);
  });

  it('when a command runs with global flags first, then oclif still gets them (the hoisting is wired in)', async () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-hoist-'));
    try {
      const configDir = path.join(work, 'config');
      const env: NodeJS.ProcessEnv = { ...process.env, HOME: work, NO_COLOR: '1' };
      delete env.SVC_CONFIG_DIR;
      const result = await run(
        process.execPath,
        [bin, '--config-dir', configDir, '--profile', 'prod', 'config', 'path', '--json'],
        { env, cwd: work },
      );
      expect(result).toMatchObject({ code: 0 });
      expect(JSON.parse(result.stdout)).toMatchObject({
        ok: true,
        result: { config_dir: configDir, profile: 'prod' },
      });
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});

describe('svc CLI package: packed tarball installed outside the monorepo', () => {
  // Packing (pnpm deploy + npm pack) and a global install of a few thousand files take about a minute each on
  // a loaded machine; the ceiling is generous, the assertions are not timed.
  jest.setTimeout(480_000);

  let work: string;
  let relayPid: number | undefined;

  beforeAll(() => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-package-'));
  });

  afterAll(() => {
    if (relayPid !== undefined) {
      try {
        process.kill(relayPid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('when packed and installed with npm alone (no pnpm, no registry), then svc runs from the install', async () => {
    const out = path.join(work, 'out');
    const packed = await run(process.execPath, [path.join(appDir, 'scripts', 'pack.mjs'), '--out', out], {
      env: process.env,
      cwd: appDir,
    });
    expect(packed).toMatchObject({ code: 0 });
    const tarball = path.join(out, `svc-cli-${pkg.version}.tgz`);
    expect(packed.stdout.trim().split('\n').pop()).toBe(tarball);

    // Only regular files and directories: npm skips link entries when it extracts a package.
    const listing = await run('tar', ['-tvzf', tarball], { env: process.env, cwd: work });
    expect(listing.code).toBe(0);
    const entries = listing.stdout.split('\n').filter(Boolean);
    expect(entries.filter((line) => !/^[-d]/.test(line))).toEqual([]);
    const names = entries.map((line) => line.split(/\s+/).slice(5).join(' '));
    expect(names).toEqual(
      expect.arrayContaining([
        'package/package.json',
        'package/bin/run.js',
        'package/dist/main.js',
        'package/oclif.manifest.json',
        'package/node_modules/@svc/contracts/package.json',
        'package/node_modules/@svc/relay/dist/main.js',
        'package/node_modules/@svc/console-router/dist/main.js',
        'package/node_modules/@oclif/core/package.json',
      ]),
    );
    expect(names.filter((name) => /\.node$|binding\.gyp$/.test(name))).toEqual([]);

    // The monorepo is left as it was: pnpm links the injected workspace packages' files to the workspace's own,
    // and the pack rewrites the bundled copies of their package.json (no scripts, no workspace: ranges).
    const bundledWorkspace = names
      .map((name) => /^package\/node_modules\/(@svc\/[^/]+)\/package\.json$/.exec(name)?.[1])
      .filter((name): name is string => name !== undefined);
    expect(bundledWorkspace).toEqual(expect.arrayContaining(['@svc/contracts', '@svc/relay']));
    const workspaceManifests = ['apps', 'packages'].flatMap((group) =>
      fs
        .readdirSync(path.join(appDir, '..', '..', group))
        .map((dir) => path.join(appDir, '..', '..', group, dir, 'package.json'))
        .filter((file) => fs.existsSync(file)),
    );
    for (const name of ['@svc/cli', ...bundledWorkspace]) {
      const file = workspaceManifests.find(
        (candidate) => (JSON.parse(fs.readFileSync(candidate, 'utf8')) as { name?: string }).name === name,
      );
      expect(file).toBeDefined();
      const manifest = JSON.parse(fs.readFileSync(file as string, 'utf8')) as {
        scripts?: Record<string, string>;
        bundleDependencies?: unknown;
      };
      expect({ name, build: manifest.scripts?.build !== undefined }).toEqual({ name, build: true });
      expect(manifest.bundleDependencies).toBeUndefined();
    }

    // A clean directory, a PATH holding only node and npm, an empty npm cache, offline, an unreachable registry.
    const tools = path.join(work, 'tools');
    const prefix = path.join(work, 'prefix');
    const home = path.join(work, 'home');
    const cwd = path.join(work, 'host');
    for (const dir of [tools, prefix, home, cwd]) fs.mkdirSync(dir, { recursive: true });
    fs.symlinkSync(process.execPath, path.join(tools, 'node'));
    fs.symlinkSync(npmCli(), path.join(tools, 'npm'));
    const hostEnv: NodeJS.ProcessEnv = { PATH: tools, HOME: home, TMPDIR: os.tmpdir(), NO_COLOR: '1' };
    const install = await run(
      path.join(tools, 'npm'),
      [
        'install',
        '--global',
        '--prefix',
        prefix,
        '--offline',
        '--cache',
        path.join(work, 'npm-cache'),
        '--registry',
        'http://127.0.0.1:9/',
        '--no-audit',
        '--no-fund',
        '--no-update-notifier',
        tarball,
      ],
      { env: hostEnv, cwd },
    );
    expect(install).toMatchObject({ code: 0 });

    const installed = path.join(prefix, 'lib', 'node_modules', '@svc', 'cli');
    const svcBin = path.join(prefix, 'bin', 'svc');
    expect(fs.existsSync(svcBin)).toBe(true);
    // Files that a tarball with hard-link entries lost at install (the CommonJS marker of a dual package).
    expect(
      fs.existsSync(path.join(installed, 'node_modules', 'minimatch', 'dist', 'commonjs', 'package.json')),
    ).toBe(true);
    const installedPkg = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      bundleDependencies: string[];
    };
    for (const spec of Object.values(installedPkg.dependencies))
      expect(spec).not.toMatch(/^(workspace|file|link):/);
    expect(installedPkg.bundleDependencies.sort()).toEqual(Object.keys(installedPkg.dependencies).sort());

    const svc = (args: string[], env: NodeJS.ProcessEnv = {}) =>
      run(svcBin, args, { env: { ...hostEnv, ...env }, cwd });

    const version = await svc(['--version']);
    expect(version).toMatchObject({ code: 0 });
    expect(version.stdout).toContain(`@svc/cli/${pkg.version}`);

    const help = await svc(['--help']);
    expect(help).toMatchObject({ code: 0 });
    const topLevel = new Set(Object.keys(readManifest().commands).map((id) => id.split(':')[0] as string));
    for (const name of topLevel) expect(help.stdout).toMatch(new RegExp(`^\\s+${name}\\s`, 'm'));

    const configDir = path.join(home, 'svc-config');
    const configPath = await svc(['config', 'path', '--json'], { SVC_CONFIG_DIR: configDir });
    expect(configPath).toMatchObject({ code: 0 });
    expect(JSON.parse(configPath.stdout)).toMatchObject({ ok: true, result: { config_dir: configDir } });

    // The relay bundled with the CLI starts from the install (express, the service kit and their dependencies).
    const port = await freePort();
    const relay = await svc(
      ['internal', 'relay', 'start', '--host', '127.0.0.1', '--port', String(port), '--daemon', '--json'],
      {
        SVC_CONFIG_DIR: configDir,
        SVC_RELAY_TOKEN: `relay-${'0'.repeat(32)}`,
      },
    );
    expect(relay).toMatchObject({ code: 0 });
    const started = JSON.parse(relay.stdout) as { ok: boolean; result: { pid: number; url: string } };
    relayPid = started.result.pid;
    expect(started).toMatchObject({ ok: true, result: { url: `http://127.0.0.1:${port}` } });
    await eventually(
      async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok,
      30_000,
      'the relay healthy',
      {
        intervalMs: 250,
      },
    );
  });
});
