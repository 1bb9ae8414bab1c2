import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Checks of the service layout (decision 29) over the source tree of one app: which layer may import which, no
 * import cycles, no long file without a stated reason. Reads files as text; runs none of them.
 */

export interface SourceFile {
  /** Path relative to the app's `src/`, with `/` separators. */
  path: string;
  text: string;
  /** Relative imports resolved to other files of the same `src/` (value and type imports alike). */
  imports: string[];
  /** The same, value imports only (`import type` and `export type` left out). */
  valueImports: string[];
  /** Imports of packages and Node's built-in modules (every specifier that is not relative). */
  modules: ModuleImport[];
}

export interface ModuleImport {
  /** As written: `node:net`, `net`, `bullmq`, `@svc/service-kit/http`. */
  specifier: string;
  /** `import type` / `export type`, or a clause whose every name is marked `type`: nothing is loaded. */
  typeOnly: boolean;
  /**
   * The value names taken from the module (`import { isIP } from 'node:net'` → `['isIP']`, under their
   * exported names), or undefined when the whole module is taken: a default or namespace import, `export *`,
   * a bare import for its effects, `require` or `import()`.
   */
  names?: string[];
}

export interface LayoutViolation {
  file: string;
  rule: string;
  detail: string;
}

const SOURCE = /\.ts$/;
const SKIPPED_DIRS = new Set(['generated', 'node_modules', 'dist']);
const IMPORT =
  /(?:^|\n)\s*(import|export)\s+(type\s+)?(?:([^'";]*?)\sfrom\s+)?['"]([^'"]+)['"]|\brequire\(\s*['"]([^'"]+)['"]\s*\)|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

function walk(dir: string, base: string, out: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) walk(path.join(dir, entry.name), base, out);
    } else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) {
      out.push(path.relative(base, path.join(dir, entry.name)).split(path.sep).join('/'));
    }
  }
}

function resolveRelative(srcDir: string, from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = path.join(srcDir, path.dirname(from), specifier.replace(/\.js$/, ''));
  for (const candidate of [`${target}.ts`, path.join(target, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) {
      const relative = path.relative(srcDir, candidate).split(path.sep).join('/');
      return relative.startsWith('..') ? undefined : relative;
    }
  }
  return undefined;
}

/**
 * What an import clause takes from its module: `{ a, b as c, type D }` → the value names `a` and `b` (type-only
 * when every name is marked `type`); a default or namespace binding, or `export *`, takes the whole module.
 */
function clauseOf(clause: string | undefined): Pick<ModuleImport, 'typeOnly' | 'names'> {
  const braces = clause?.trim().match(/^\{([^}]*)\}$/);
  if (!braces) return { typeOnly: false };
  const specifiers = braces[1]!
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  const names = specifiers
    .filter((part) => !/^type\s/.test(part))
    .map((part) => part.split(/\s+as\s+/)[0]!.trim());
  // `import {} from 'x'` still loads the module, for its effects.
  if (specifiers.length === 0) return { typeOnly: false };
  return { typeOnly: names.length === 0, names };
}

/** Every `.ts` file under `srcDir` (generated code left out) with its resolved relative imports. */
export function readSourceTree(srcDir: string): SourceFile[] {
  const paths: string[] = [];
  walk(srcDir, srcDir, paths);
  return paths.sort().map((file) => {
    const text = readFileSync(path.join(srcDir, file), 'utf8');
    const imports = new Set<string>();
    const valueImports = new Set<string>();
    const modules: ModuleImport[] = [];
    for (const match of text.matchAll(IMPORT)) {
      const specifier = match[4] ?? match[5] ?? match[6];
      if (!specifier) continue;
      if (!specifier.startsWith('.')) {
        if (match[4] === undefined) modules.push({ specifier, typeOnly: false });
        else if (match[2]) modules.push({ specifier, typeOnly: true });
        else modules.push({ specifier, ...clauseOf(match[3]) });
        continue;
      }
      const resolved = resolveRelative(srcDir, file, specifier);
      if (!resolved) continue;
      imports.add(resolved);
      if (!match[2]) valueImports.add(resolved);
    }
    return { path: file, text, imports: [...imports], valueImports: [...valueImports], modules };
  });
}

/**
 * Import cycles, each as the list of files in one strongly connected component (Tarjan), plus files that
 * import themselves. Type-only imports count too: a cycle of types still ties two modules together.
 */
export function findImportCycles(files: SourceFile[]): string[][] {
  const graph = new Map(files.map((f) => [f.path, f.imports]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let counter = 0;

  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

type Layer =
  | 'routes'
  | 'use-cases'
  | 'data'
  | 'domain'
  | 'transport'
  | 'presenters'
  | 'workers'
  | 'auth'
  | 'wiring'
  | 'other';

const LAYER_DIRS: Record<string, Layer> = {
  routes: 'routes',
  /** A command line's commands are its routes: thin, one per file, calling use cases. */
  commands: 'routes',
  'use-cases': 'use-cases',
  data: 'data',
  domain: 'domain',
  /** Network protocol code: sockets, HTTP parsing and forwarding, outgoing HTTP clients. */
  transport: 'transport',
  presenters: 'presenters',
  workers: 'workers',
  auth: 'auth',
};

/** Entry points and wiring at the top of `src/`; other top-level files (env, deps, db, …) are plain modules. */
const WIRING_FILES = new Set([
  'main.ts',
  'worker-main.ts',
  'app.ts',
  'worker.ts',
  'bootstrap.ts',
  'migrate.ts',
]);

export function layerOf(file: string): Layer {
  const first = file.split('/')[0] ?? '';
  if (first in LAYER_DIRS) return LAYER_DIRS[first]!;
  return WIRING_FILES.has(file) ? 'wiring' : 'other';
}

/** What presenters may name (`import type`) but never call: a use case's result type, a row type. */
const FORBIDDEN_VALUES: Partial<Record<Layer, Layer[]>> = {
  presenters: ['use-cases', 'data'],
};

/**
 * What each layer may not import (value or type), per decision 29. Presenters may name a use case's result type
 * (`import type`), never call one: see {@link FORBIDDEN_VALUES}.
 *
 * `transport/` speaks the network's protocols for the layers above it and decides nothing itself: it may import
 * domain rules, other transport modules and the plain top-level modules (env, …), nothing that holds data or
 * answers a request. It may be imported by the wiring, by use cases (a delivery attempt sends through the HTTP
 * sender) and by routes, which hand a client's request or socket over to it (the console router's agent
 * routes). Domain, data, auth, presenters and workers may not: the rules stay free of sockets, the data layer
 * talks to its stores through their own clients, and a worker reaches the network only through a use case.
 */
const FORBIDDEN: Partial<Record<Layer, Layer[]>> = {
  'use-cases': ['routes', 'presenters', 'workers', 'wiring'],
  data: ['routes', 'presenters', 'workers', 'use-cases', 'transport', 'wiring'],
  domain: ['routes', 'presenters', 'workers', 'use-cases', 'data', 'transport', 'auth', 'wiring'],
  transport: ['routes', 'presenters', 'workers', 'use-cases', 'data', 'auth', 'wiring'],
  presenters: ['routes', 'workers', 'auth', 'transport', 'wiring'],
  routes: ['workers', 'data', 'wiring'],
  workers: ['routes', 'transport', 'wiring'],
  auth: ['routes', 'presenters', 'workers', 'transport', 'wiring'],
};

/**
 * Modules that do network I/O, which `domain/` may not load: Node's sockets and HTTP (with or without the
 * `node:` prefix) and the Redis and queue clients. Their place is `transport/` (protocols) or `data/` (stores
 * and queues).
 */
const IO_MODULES = new Set(['http', 'https', 'net', 'tls', 'dgram', 'bullmq', 'ioredis']);

/**
 * Value imports of an I/O module `domain/` may still make, by name: `node:net`'s address predicates, which
 * read a string and open nothing (the URL and host guards judge addresses with them).
 */
const PURE_IO_EXPORTS: Record<string, ReadonlySet<string>> = {
  net: new Set(['isIP', 'isIPv4', 'isIPv6']),
};

/**
 * Why a domain file's import of a module breaks the no-I/O rule, or undefined when it does not. A type-only
 * import counts as none: it is erased when compiled, loads nothing and can open nothing, and a rule may well
 * describe what it judges in the types of the protocol it came by (a request's headers as `node:http` types
 * them), as the database rule lets `domain/` name Prisma's row types. Whether the module is loaded is what
 * matters, so a value import is refused unless each name it takes is one of {@link PURE_IO_EXPORTS}.
 */
function ioImportProblem(imported: ModuleImport): string | undefined {
  const name = imported.specifier.replace(/^node:/, '');
  if (!IO_MODULES.has(name) || imported.typeOnly) return undefined;
  if (!imported.names) return imported.specifier;
  const allowed = PURE_IO_EXPORTS[name];
  const refused = imported.names.filter((n) => !allowed?.has(n));
  return refused.length === 0 ? undefined : `${imported.specifier} (${refused.join(', ')})`;
}

/** Lines a source file may have before it must say at its top why it is one file. */
export const LONG_FILE_LINES = 400;
/** The phrase a long file's opening comment carries, followed by its reason. */
export const LONG_FILE_MARKER = 'One file because';

/**
 * Violations of the layout rule in one app's source tree: forbidden imports between layers, database access in
 * route handlers, value imports of the database or of network I/O modules in `domain/`, loose files directly
 * under `use-cases/`, files over {@link LONG_FILE_LINES} lines without a reason at the top, and import cycles.
 */
export function checkLayout(srcDir: string): LayoutViolation[] {
  const files = readSourceTree(srcDir);
  const violations: LayoutViolation[] = [];
  for (const file of files) {
    if (file.path.endsWith('.test.ts')) continue;
    const layer = layerOf(file.path);
    const forbidden = FORBIDDEN[layer] ?? [];
    const forbiddenValues = FORBIDDEN_VALUES[layer] ?? [];
    for (const target of file.imports) {
      const targetLayer = layerOf(target);
      if (forbidden.includes(targetLayer))
        violations.push({ file: file.path, rule: `${layer} must not import ${targetLayer}`, detail: target });
      else if (forbiddenValues.includes(targetLayer) && file.valueImports.includes(target))
        violations.push({ file: file.path, rule: `${layer} must not call ${targetLayer}`, detail: target });
    }
    if (layer === 'routes' && /\bdeps\.db\b|\.\$queryRaw|\.\$transaction/.test(file.text))
      violations.push({ file: file.path, rule: 'routes must not query the database', detail: 'deps.db' });
    if (layer === 'domain') {
      for (const target of file.valueImports)
        if (target === 'db.ts')
          violations.push({ file: file.path, rule: 'domain must not use the database', detail: target });
      if (/from\s+['"][^'"]*generated\/prisma\/client['"]/.test(file.text.replace(/import type[^;]*;/g, '')))
        violations.push({
          file: file.path,
          rule: 'domain must not use the database',
          detail: 'generated Prisma client (value import)',
        });
      for (const imported of file.modules) {
        const problem = ioImportProblem(imported);
        if (problem)
          violations.push({ file: file.path, rule: 'domain must not do network I/O', detail: problem });
      }
    }
    if (layer === 'use-cases' && file.path.split('/').length < 3)
      violations.push({
        file: file.path,
        rule: 'use cases live in a domain folder (use-cases/<domain>/<verb-noun>.ts)',
        detail: file.path,
      });
    const lines = file.text.split('\n').length;
    if (lines > LONG_FILE_LINES && !file.text.split('\n').slice(0, 15).join('\n').includes(LONG_FILE_MARKER))
      violations.push({
        file: file.path,
        rule: `a file over ${LONG_FILE_LINES} lines says at its top why ("${LONG_FILE_MARKER} …")`,
        detail: `${lines} lines`,
      });
  }
  for (const cycle of findImportCycles(files.filter((f) => !f.path.endsWith('.test.ts'))))
    violations.push({ file: cycle[0]!, rule: 'no import cycles', detail: cycle.join(' → ') });
  return violations;
}

/** One workspace (an app or a package) of the repository: its folder relative to the root, e.g. `apps/relay`. */
const WORKSPACE_GROUPS = ['apps', 'packages'];
const WORKSPACE_SOURCE = /\.(?:ts|tsx|mts|cts|mjs|cjs|js)$/;
const WORKSPACE_SKIPPED = new Set(['node_modules', 'dist', 'generated', 'coverage', '.turbo']);

/**
 * Files that reach into another workspace by path, with the reason each may. Only a package the test toolkit
 * itself depends on can be here: giving it `@svc/testing` as a dependency would close a cycle.
 */
export const CROSS_WORKSPACE_EXCEPTIONS: Record<string, string> = {
  'packages/db-kit/src/databases.test.ts':
    '@svc/testing depends on db-kit; it reads the test servers by path',
  'packages/db-kit/src/drift.test.ts': '@svc/testing depends on db-kit; it reads the test servers by path',
  'packages/db-kit/src/migrator.test.ts': '@svc/testing depends on db-kit; it reads the test servers by path',
  'packages/db-kit/src/pool.test.ts': '@svc/testing depends on db-kit; it reads the test servers by path',
  'packages/service-kit/src/credential-notices.test.ts':
    '@svc/testing depends on service-kit; it reads the test servers by path',
  'packages/service-kit/src/metrics.test.ts':
    '@svc/testing depends on service-kit; it reads the test servers by path',
  'packages/service-kit/src/worker.test.ts':
    '@svc/testing depends on service-kit; it reads the test servers by path',
};

function workspaceOf(file: string): string | undefined {
  const [group, name] = file.split('/');
  return group && name && WORKSPACE_GROUPS.includes(group) ? `${group}/${name}` : undefined;
}

function walkWorkspace(root: string, dir: string, out: string[]): void {
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!WORKSPACE_SKIPPED.has(entry.name)) walkWorkspace(root, relative, out);
    } else if (WORKSPACE_SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(relative);
  }
}

/**
 * Imports (and `require`s) by relative path that leave the importing app or package for another one: an app's
 * sources read by a package, a package's test helpers read by an app. Workspaces reach each other through
 * their package names and exports only, so every such edge is a dependency the package manager and the build
 * order know about. Paths are relative to `root`, the repository.
 */
export function findCrossWorkspaceImports(root: string): LayoutViolation[] {
  const files: string[] = [];
  for (const group of WORKSPACE_GROUPS)
    for (const entry of readdirSync(path.join(root, group), { withFileTypes: true }))
      if (entry.isDirectory()) walkWorkspace(root, `${group}/${entry.name}`, files);
  const violations: LayoutViolation[] = [];
  for (const file of files.sort()) {
    if (file in CROSS_WORKSPACE_EXCEPTIONS) continue;
    const text = readFileSync(path.join(root, file), 'utf8');
    for (const match of text.matchAll(IMPORT)) {
      const specifier = match[4] ?? match[5] ?? match[6];
      if (!specifier?.startsWith('.')) continue;
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier));
      const targetWorkspace = workspaceOf(target);
      if (targetWorkspace !== workspaceOf(file))
        violations.push({
          file,
          rule: 'workspaces import each other by package name, not by path',
          detail: specifier,
        });
    }
  }
  return violations;
}
