/**
 * The problem code registry against the services' sources: every code the hub and the Workflow API can answer
 * in a problem+json (thrown as an AppError, by a helper that builds one, or by the auth layer) has an entry
 * with a meaning and a fix.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { PROBLEM_CODES, problemCodeDoc, problemTypeUrl } from './problem-codes';

const REPO = path.resolve(__dirname, '../../..');
/** Where the public services' problems come from. */
const SOURCES = [
  'apps/hub-api/src',
  'apps/workflow-api/src',
  'apps/relay/src',
  'packages/service-kit/src',
  'packages/auth/src',
];
/** Functions whose first argument is the problem code of the AppError (or auth error) they build. */
const CODE_FIRST = new Set([
  'badRequest',
  'unauthorized',
  'forbidden',
  'notFound',
  'conflict',
  'unavailable',
  'invalid',
  'AuthError',
  'DeliveryUrlError',
]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory())
      return ['generated', 'test-support', 'node_modules'].includes(entry.name) ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')
      ? [full]
      : [];
  });
}

/** Each literal problem code in the sources, with the files it is thrown from. */
function thrownCodes(): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  const add = (code: string, file: string) => {
    if (!found.has(code)) found.set(code, new Set());
    found.get(code)!.add(path.relative(REPO, file));
  };
  for (const dir of SOURCES) {
    for (const file of sourceFiles(path.join(REPO, dir))) {
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isObjectLiteralExpression(node)) {
          const code = node.properties.find(
            (p): p is ts.PropertyAssignment =>
              ts.isPropertyAssignment(p) && p.name.getText(source) === 'code',
          );
          if (code && ts.isStringLiteralLike(code.initializer)) {
            let owner: ts.Node | undefined = node.parent;
            while (
              owner &&
              !ts.isCallExpression(owner) &&
              !ts.isNewExpression(owner) &&
              !ts.isSourceFile(owner)
            )
              owner = owner.parent;
            const callee =
              owner && (ts.isCallExpression(owner) || ts.isNewExpression(owner))
                ? owner.expression.getText(source)
                : undefined;
            // `new AppError({ code })`, `super({ code })` of an AppError subclass, and the body-parser table.
            const bodyErrorTable =
              callee === undefined && file.endsWith(path.join('service-kit', 'src', 'errors.ts'));
            if (callee === 'AppError' || callee === 'super' || bodyErrorTable)
              add(code.initializer.text, file);
          }
        }
        if ((ts.isCallExpression(node) || ts.isNewExpression(node)) && node.arguments) {
          const callee = node.expression.getText(source);
          const [first, second] = node.arguments;
          if (CODE_FIRST.has(callee) && first && ts.isStringLiteralLike(first)) add(first.text, file);
          // toProblem's own answers: base(status, code, detail).
          if (callee === 'base' && second && ts.isStringLiteralLike(second)) add(second.text, file);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
  }
  return found;
}

describe('problem code registry', () => {
  const thrown = thrownCodes();

  test('when the sources are scanned, then they throw a plausible number of codes', () => {
    // The scan itself is checked: it finds the codes of each layer.
    for (const code of [
      'route_not_found',
      'scope_missing',
      'malformed_json',
      'internal_error',
      'launch_blocked',
    ])
      expect(thrown.has(code)).toBe(true);
    expect(thrown.size).toBeGreaterThan(100);
  });

  test('when a service throws a code, then the registry documents it', () => {
    const missing = [...thrown.keys()].filter((code) => !problemCodeDoc(code));
    expect(missing.map((code) => `${code} (${[...thrown.get(code)!].join(', ')})`)).toEqual([]); // add an entry to packages/contracts/src/problem-codes.ts
  });

  test('when an entry is read, then it is unique, snake_case and has a status, a meaning and a fix', () => {
    const codes = PROBLEM_CODES.map((d) => d.code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const doc of PROBLEM_CODES) {
      expect(doc.code).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(doc.status.length).toBeGreaterThan(0);
      for (const status of doc.status) expect(status >= 400 && status <= 599).toBe(true);
      expect(doc.title.length).toBeGreaterThan(5);
      expect(doc.meaning.length).toBeGreaterThan(10);
      expect(doc.fix.length).toBeGreaterThan(5);
    }
  });

  test('when a type URL is built, then it is the code page path', () => {
    expect(problemTypeUrl('scope_missing')).toBe('/docs/errors/scope_missing');
  });
});
