import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@svc/service-kit';
import { loadStageHandler } from './stage-handler-module';
import type { StageContext } from '../domain/stage-handler';

describe('loadStageHandler', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'reference-agent-handlers-'));
    writeFileSync(
      join(dir, 'default-export.cjs'),
      'exports.default = async () => ({ summary: "from default" });\n',
    );
    writeFileSync(
      join(dir, 'handle-export.cjs'),
      'exports.handle = async () => ({ summary: "from handle" });\n',
    );
    writeFileSync(
      join(dir, 'module-function.cjs'),
      'module.exports = async () => ({ summary: "from module" });\n',
    );
    writeFileSync(join(dir, 'no-function.cjs'), 'exports.handler = "not a function";\n');
    writeFileSync(join(dir, 'broken.cjs'), 'throw new Error("syntax is fine but it throws");\n');
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const run = async (path: string, cwd?: string) =>
    (await loadStageHandler(path, cwd)({} as StageContext)).summary;

  it('when the module has a default export, a handle export or is a function, then that function is the handler', async () => {
    expect(await run(join(dir, 'default-export.cjs'))).toBe('from default');
    expect(await run(join(dir, 'handle-export.cjs'))).toBe('from handle');
    expect(await run(join(dir, 'module-function.cjs'))).toBe('from module');
  });

  it('when the path is relative, then it is resolved against the working directory', async () => {
    expect(await run('./handle-export.cjs', dir)).toBe('from handle');
  });

  it('when the module exports no function, then it is refused with a ConfigError naming the path', () => {
    expect(() => loadStageHandler(join(dir, 'no-function.cjs'))).toThrow(ConfigError);
    expect(() => loadStageHandler(join(dir, 'no-function.cjs'))).toThrow(
      /no-function\.cjs exports no handler function/,
    );
  });

  it('when the module is missing or throws while loading, then it is refused with one line', () => {
    expect(() => loadStageHandler(join(dir, 'missing.cjs'))).toThrow(
      /missing\.cjs cannot be loaded: Cannot find module/,
    );
    expect(() => loadStageHandler(join(dir, 'broken.cjs'))).toThrow(
      /broken\.cjs cannot be loaded: syntax is fine but it throws$/,
    );
  });
});
