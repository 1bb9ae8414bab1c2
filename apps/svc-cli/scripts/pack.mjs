// Packs the svc CLI into one tarball that installs on a runtime host without the monorepo:
//   node apps/svc-cli/scripts/pack.mjs [--out <dir>]      → <dir>/svc-cli-<version>.tgz (default: apps/svc-cli)
//   npm install -g ./svc-cli-<version>.tgz && svc --help
// The workspace packages the CLI runs (contracts, auth, relay, console router and what they import) and every
// third-party dependency are bundled in the tarball (bundleDependencies), so installing it needs no registry
// and no pnpm. The bundle holds JavaScript only: optional native add-ons are left out (see OPTIONAL_NATIVE) and
// packing fails if any other native module shows up, so one tarball installs on any platform Node runs on.
//
// Why the bundle is staged with copied files: pnpm links package files from its content-addressed store
// (hard links), so identical files (licences, `{"type":"commonjs"}` markers, .d.ts files) share one inode.
// A tarball made from such a tree stores every second copy as a hard-link entry, and npm skips link entries
// when it extracts a package, so those files vanish at install (and npm's own tar writer stalls on them,
// which is what crashes `npm pack` with "Exit handler never called"). Every staged file is therefore a
// separate regular file before `npm pack` runs.
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const appDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = path.resolve(appDir, '..', '..');

/**
 * Optional native add-ons that the bundled packages use when present and replace with JavaScript when absent
 * (msgpackr, under bullmq, falls back to its pure-JS codec). They are removed from the bundle, and from the
 * optionalDependencies of the packages that name them, so that npm neither builds nor fetches them.
 */
const OPTIONAL_NATIVE = [/^msgpackr-extract$/, /^@msgpackr-extract\//];

function fail(message) {
  console.error(`svc pack: ${message}`);
  process.exit(1);
}

function parseOutDir(argv) {
  const index = argv.indexOf('--out');
  if (index === -1) return appDir;
  const value = argv[index + 1];
  if (!value || value.startsWith('--')) fail('--out needs a directory');
  return path.resolve(value);
}

function readJson(file) {
  return JSON.parse(readFileSync(file, 'utf8'));
}

/**
 * Writes through a new file renamed over the old name, never into the old file: a file of the staged tree can
 * still be a hard link to the workspace's own file (pnpm imports packages by linking), and writing into it
 * would rewrite the monorepo's package.json.
 */
function writeJson(file, value) {
  const temporary = `${file}.svc-pack-tmp`;
  writeFileSync(temporary, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(temporary, file);
}

/** The package directories under a node_modules directory (scoped ones included), recursively. */
function packageDirs(nodeModules) {
  if (!existsSync(nodeModules)) return [];
  const dirs = [];
  for (const entry of readdirSync(nodeModules, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const full = path.join(nodeModules, entry.name);
    const names = entry.name.startsWith('@')
      ? readdirSync(full, { withFileTypes: true })
          .filter((scoped) => scoped.isDirectory())
          .map((scoped) => ({ name: `${entry.name}/${scoped.name}`, dir: path.join(full, scoped.name) }))
      : [{ name: entry.name, dir: full }];
    for (const pkg of names) {
      dirs.push(pkg);
      dirs.push(...packageDirs(path.join(pkg.dir, 'node_modules')));
    }
  }
  return dirs;
}

/** Walks a tree; calls visit(file, stat) for every entry that is not a directory. */
function walk(dir, visit) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, visit);
    else visit(full, lstatSync(full));
  }
}

/** Asserts that oclif.manifest.json describes exactly the commands compiled in dist/commands. */
function assertManifestFresh() {
  const manifest = readJson(path.join(appDir, 'oclif.manifest.json'));
  const compiled = [];
  const commandsDir = path.join(appDir, 'dist', 'commands');
  walk(commandsDir, (file) => {
    if (file.endsWith('.js')) {
      compiled.push(path.relative(commandsDir, file).slice(0, -'.js'.length).split(path.sep).join(':'));
    }
  });
  const listed = Object.keys(manifest.commands ?? {});
  const missing = compiled.filter((id) => !listed.includes(id));
  const extra = listed.filter((id) => !compiled.includes(id));
  if (missing.length > 0 || extra.length > 0) {
    fail(
      `oclif.manifest.json is stale (not listed: ${missing.join(', ') || '-'}; no longer built: ` +
        `${extra.join(', ') || '-'}); run \`pnpm --filter @svc/cli build\``,
    );
  }
}

/**
 * Pins dependency specs that mean nothing outside the monorepo (`workspace:*`, or the `file:` paths into it
 * that pnpm writes for injected workspace packages) to the version of the copy bundled beside them.
 */
function pinWorkspaceRanges(pkg, nodeModules) {
  for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies']) {
    for (const [name, spec] of Object.entries(pkg[field] ?? {})) {
      if (!/^(workspace:|file:|link:)/.test(String(spec)) && !String(spec).startsWith(`${name}@`)) continue;
      const bundled = path.join(nodeModules, name, 'package.json');
      if (!existsSync(bundled)) fail(`${pkg.name} depends on ${name}, which is not in the bundle`);
      pkg[field][name] = readJson(bundled).version;
    }
  }
}

const outDir = parseOutDir(process.argv.slice(2));
for (const required of ['dist/main.js', 'oclif.manifest.json']) {
  if (!existsSync(path.join(appDir, required))) fail(`${required} is missing; run \`pnpm build\` first`);
}
assertManifestFresh();
mkdirSync(outDir, { recursive: true });

const work = mkdtempSync(path.join(os.tmpdir(), 'svc-cli-pack-'));
const staged = path.join(work, 'package');
const nodeModules = path.join(staged, 'node_modules');
try {
  // A production-only copy of the package (its "files": bin, dist, the manifest) with a flat node_modules of
  // real directories and the workspace packages injected, at the versions of the workspace lockfile.
  // Everything comes from pnpm's store: no registry.
  try {
    execFileSync(
      'pnpm',
      [
        '--filter',
        '@svc/cli',
        'deploy',
        '--prod',
        '--offline',
        '--config.inject-workspace-packages=true',
        '--config.node-linker=hoisted',
        '--config.package-import-method=copy',
        staged,
      ],
      { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
  } catch (error) {
    process.stderr.write(`${error.stdout ?? ''}${error.stderr ?? ''}`);
    fail('pnpm deploy failed (is `pnpm install` current?)');
  }
  rmSync(path.join(staged, 'pnpm-lock.yaml'), { force: true });
  if (!existsSync(path.join(staged, 'oclif.manifest.json')))
    fail('the deployed package has no oclif.manifest.json');

  // Executable shims of dependencies are not part of the CLI (npm links the CLI's own bin at install).
  for (const pkg of [{ dir: staged }, ...packageDirs(nodeModules)]) {
    rmSync(path.join(pkg.dir, 'node_modules', '.bin'), { recursive: true, force: true });
  }
  rmSync(path.join(nodeModules, '.modules.yaml'), { force: true });
  rmSync(path.join(nodeModules, '.pnpm'), { recursive: true, force: true });

  // Every file a separate regular file before anything in the staged tree is changed: pnpm links the files of
  // store packages and also of the injected workspace packages (their package.json and dist/ are hard links to
  // the monorepo's own files), so a write into a linked file would change the monorepo. Links are also what
  // npm drops at install (see the header).
  walk(staged, (file, stat) => {
    if (stat.isSymbolicLink()) fail(`unexpected symbolic link in the bundle: ${path.relative(staged, file)}`);
    if (stat.isFile() && stat.nlink > 1) {
      const copy = `${file}.svc-pack-copy`;
      copyFileSync(file, copy);
      renameSync(copy, file);
    }
  });

  // Optional native add-ons out; any other native module stops the pack.
  const packages = packageDirs(nodeModules);
  for (const { name, dir } of packages) {
    if (OPTIONAL_NATIVE.some((pattern) => pattern.test(name))) rmSync(dir, { recursive: true, force: true });
  }
  for (const { name, dir } of packageDirs(nodeModules)) {
    const manifestPath = path.join(dir, 'package.json');
    if (!existsSync(manifestPath)) continue;
    const pkg = readJson(manifestPath);
    let changed = false;
    for (const optional of Object.keys(pkg.optionalDependencies ?? {})) {
      if (OPTIONAL_NATIVE.some((pattern) => pattern.test(optional))) {
        delete pkg.optionalDependencies[optional];
        delete pkg.dependencies?.[optional];
        changed = true;
      }
    }
    if (name.startsWith('@svc/')) {
      // Bundled workspace packages: no workspace: ranges, no development metadata.
      pinWorkspaceRanges(pkg, nodeModules);
      delete pkg.devDependencies;
      delete pkg.scripts;
      changed = true;
    }
    if (changed) writeJson(manifestPath, pkg);
  }

  // Type declarations and source maps of the bundled packages are never loaded at run time; leaving them out
  // halves the number of files npm has to write at install.
  walk(nodeModules, (file) => {
    if (/\.d\.[cm]?ts$|\.map$/.test(file)) rmSync(file);
  });

  // No native module left.
  const native = [];
  walk(staged, (file) => {
    if (/\.node$/.test(file) || path.basename(file) === 'binding.gyp')
      native.push(path.relative(staged, file));
  });
  if (native.length > 0) fail(`native modules in the bundle (not supported): ${native.join(', ')}`);

  // The CLI's own manifest: versions instead of workspace: ranges, every dependency bundled.
  const manifestPath = path.join(staged, 'package.json');
  const pkg = readJson(manifestPath);
  pinWorkspaceRanges(pkg, nodeModules);
  delete pkg.private;
  delete pkg.devDependencies;
  delete pkg.scripts;
  pkg.bundleDependencies = Object.keys(pkg.dependencies ?? {});
  writeJson(manifestPath, pkg);

  const packed = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', outDir], {
      cwd: staged,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 256 * 1024 * 1024,
    }),
  );
  const filename = packed[0]?.filename;
  if (!filename) fail('npm pack did not report a tarball');
  // npm names a scoped package's tarball <scope>-<name>-<version>.tgz: for @svc/cli that is svc-cli-<version>.tgz.
  console.log(path.join(outDir, filename));
} finally {
  if (!process.env.SVC_PACK_KEEP) rmSync(work, { recursive: true, force: true });
}
