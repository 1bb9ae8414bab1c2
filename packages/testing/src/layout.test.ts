import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { readdirSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CROSS_WORKSPACE_EXCEPTIONS,
  checkLayout,
  findCrossWorkspaceImports,
  findImportCycles,
  LONG_FILE_MARKER,
  readSourceTree,
} from './layout';

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'layout-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

describe('the layout checker', () => {
  test('when two modules import each other (even for types), then the cycle is reported', () => {
    const dir = tree({
      'auth/a.ts': "import type { B } from './b';\nexport type A = B;\n",
      'auth/b.ts': "import { a } from './a.js';\nexport const b = a;\n",
      'auth/c.ts': "export { b } from './b';\n",
    });
    expect(findImportCycles(readSourceTree(dir))).toEqual([['auth/a.ts', 'auth/b.ts']]);
  });

  test('when layers import against the rule, then each violation is named', () => {
    const dir = tree({
      'routes/things.routes.ts':
        "import { listThings } from '../use-cases/things/list-things';\nexport const h = (deps: { db: unknown }) => deps.db;\nvoid listThings;\n",
      'use-cases/things/list-things.ts':
        "import { present } from '../../presenters/things';\nexport const listThings = present;\n",
      'use-cases/loose.ts': 'export const loose = 1;\n',
      'presenters/things.ts': 'export const present = 1;\n',
      'domain/rule.ts': "import { db } from '../db';\nexport const rule = db;\n",
      'db.ts': 'export const db = 1;\n',
    });
    const rules = checkLayout(dir).map((v) => `${v.file}: ${v.rule}`);
    expect(rules).toEqual(
      expect.arrayContaining([
        'routes/things.routes.ts: routes must not query the database',
        'use-cases/things/list-things.ts: use-cases must not import presenters',
        'use-cases/loose.ts: use cases live in a domain folder (use-cases/<domain>/<verb-noun>.ts)',
        'domain/rule.ts: domain must not use the database',
      ]),
    );
    expect(rules).toHaveLength(4);
  });

  test('when a domain file loads a network or queue client, then it is refused; type imports and address predicates are not', () => {
    const dir = tree({
      'domain/sockets.ts': "import net from 'node:net';\nexport const s = net;\n",
      'domain/http.ts': "import { request } from 'http';\nexport const r = request;\n",
      'domain/queue.ts': "import { Queue } from 'bullmq';\nexport const q = Queue;\n",
      'domain/redis.ts': "const Redis = require('ioredis');\nexport const r = Redis;\n",
      'domain/tls.ts': "export * from 'node:tls';\n",
      'domain/mixed.ts': "import { isIP, connect } from 'node:net';\nexport const m = [isIP, connect];\n",
      'domain/lazy.ts': "export const later = () => import('node:https');\n",
      'domain/guard.ts':
        "import { isIP, isIPv4 as v4, isIPv6 } from 'node:net';\nexport const g = [isIP, v4, isIPv6];\n",
      'domain/typed.ts':
        "import type { IncomingHttpHeaders } from 'node:http';\nimport { type Socket } from 'node:net';\nimport type { ConnectionOptions } from 'bullmq';\nexport type T = [IncomingHttpHeaders, Socket, ConnectionOptions];\n",
      'domain/other.ts': "import { createHash } from 'node:crypto';\nexport const h = createHash;\n",
      'transport/client.ts': "import http from 'node:http';\nexport const c = http;\n",
      'data/queue.ts': "import { Queue } from 'bullmq';\nexport const q = Queue;\n",
    });
    expect(checkLayout(dir).map((v) => `${v.file}: ${v.rule}: ${v.detail}`)).toEqual([
      'domain/http.ts: domain must not do network I/O: http (request)',
      'domain/lazy.ts: domain must not do network I/O: node:https',
      'domain/mixed.ts: domain must not do network I/O: node:net (connect)',
      'domain/queue.ts: domain must not do network I/O: bullmq (Queue)',
      'domain/redis.ts: domain must not do network I/O: ioredis',
      'domain/sockets.ts: domain must not do network I/O: node:net',
      'domain/tls.ts: domain must not do network I/O: node:tls',
    ]);
  });

  test('when transport is imported, then only the wiring, routes, use cases and other transport may', () => {
    const dir = tree({
      'transport/sender.ts':
        "import { rule } from '../domain/rule';\nimport { env } from '../env';\nexport const send = [rule, env];\n",
      'transport/pool.ts': "import { send } from './sender';\nexport const pool = send;\n",
      'transport/leaky.ts': "import { store } from '../data/store';\nexport const leaky = store;\n",
      'domain/rule.ts': 'export const rule = 1;\n',
      'domain/uses-sender.ts':
        "import type { send } from '../transport/sender';\nexport type S = typeof send;\n",
      'data/store.ts': "import { pool } from '../transport/pool';\nexport const store = pool;\n",
      'workers/job.worker.ts': "import { send } from '../transport/sender';\nexport const job = send;\n",
      'routes/proxy.routes.ts': "import { send } from '../transport/sender';\nexport const proxy = send;\n",
      'use-cases/things/send-thing.ts':
        "import { send } from '../../transport/sender';\nexport const sendThing = send;\n",
      'app.ts': "import { pool } from './transport/pool';\nexport const app = pool;\n",
      'env.ts': 'export const env = 1;\n',
    });
    expect(checkLayout(dir).map((v) => `${v.file}: ${v.rule}`)).toEqual([
      'data/store.ts: data must not import transport',
      'domain/uses-sender.ts: domain must not import transport',
      'transport/leaky.ts: transport must not import data',
      'workers/job.worker.ts: workers must not import transport',
    ]);
  });

  test('when a file is long, then it needs its reason at the top', () => {
    const body = 'export const x = 1;\n'.repeat(420);
    const dir = tree({
      'domain/long.ts': body,
      'domain/kept.ts': `// ${LONG_FILE_MARKER} it is one table.\n${body}`,
    });
    expect(checkLayout(dir).map((v) => v.file)).toEqual(['domain/long.ts']);
  });
});

describe('imports between workspaces', () => {
  test('when a workspace reaches into another by path, then each import is named', () => {
    const root = tree({
      'apps/web/src/ok.ts': "import { a } from './a';\nimport { b } from '@svc/b';\n",
      'apps/web/test/support/stack.ts': "import { s } from '../../../../packages/kit/test/support/s';\n",
      'packages/check/src/apps.ts':
        "import { env } from '../../../apps/web/src/env';\n" +
        // Split so that this file's own text holds no such require.
        'const r = req' +
        "uire('../../kit/scripts/r.cjs');\n",
      'packages/kit/src/index.ts': "export { x } from './x';\n",
    });
    expect(findCrossWorkspaceImports(root).map((v) => `${v.file}: ${v.detail}`)).toEqual([
      'apps/web/test/support/stack.ts: ../../../../packages/kit/test/support/s',
      'packages/check/src/apps.ts: ../../../apps/web/src/env',
      'packages/check/src/apps.ts: ../../kit/scripts/r.cjs',
    ]);
  });

  test('when the repository is read, then apps and packages reach each other only by package name', () => {
    const root = path.resolve(__dirname, '..', '..', '..');
    expect(findCrossWorkspaceImports(root)).toEqual([]);
    for (const file of Object.keys(CROSS_WORKSPACE_EXCEPTIONS))
      expect(existsSync(path.join(root, file))).toBe(true);
  });
});

const appsDir = path.resolve(__dirname, '..', '..', '..', 'apps');
const apps = readdirSync(appsDir).filter((app) => existsSync(path.join(appsDir, app, 'src')));

describe.each(apps)('apps/%s', (app) => {
  test('when its source tree is read, then it follows the layout rule and has no import cycle', () => {
    expect(checkLayout(path.join(appsDir, app, 'src'))).toEqual([]);
  });
});
