import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { readdirSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkLayout, findImportCycles, LONG_FILE_MARKER, readSourceTree } from './layout';

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

  test('when a file is long, then it needs its reason at the top', () => {
    const body = 'export const x = 1;\n'.repeat(420);
    const dir = tree({
      'domain/long.ts': body,
      'domain/kept.ts': `// ${LONG_FILE_MARKER} it is one table.\n${body}`,
    });
    expect(checkLayout(dir).map((v) => v.file)).toEqual(['domain/long.ts']);
  });
});

const appsDir = path.resolve(__dirname, '..', '..', '..', 'apps');
const apps = readdirSync(appsDir).filter((app) => existsSync(path.join(appsDir, app, 'src')));

describe.each(apps)('apps/%s', (app) => {
  test('when its source tree is read, then it follows the layout rule and has no import cycle', () => {
    expect(checkLayout(path.join(appsDir, app, 'src'))).toEqual([]);
  });
});
