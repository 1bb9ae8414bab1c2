import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createLogger } from './logger';
import { reloadRuntimeKey, runtimeKeyAtStart } from './runtime-key-file';

function capturedLogger() {
  const lines: string[] = [];
  const logger = createLogger({
    name: 'runtime-key-test',
    level: 'info',
    destination: new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        lines.push(chunk.toString('utf8'));
        done();
      },
    }),
  });
  return { logger, lines };
}

describe('the runtime key file', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'runtime-key-'));
    file = path.join(dir, 'runtime.key');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('when the file holds a key at start, then it wins over SVC_WORKSPACE_API_KEY', () => {
    fs.writeFileSync(file, 'svc_filekey_secretpart\n', { mode: 0o600 });
    const { logger, lines } = capturedLogger();
    expect(runtimeKeyAtStart(file, 'svc_envkey_other', logger)).toBe('svc_filekey_secretpart');
    expect(runtimeKeyAtStart(undefined, 'svc_envkey_other', logger)).toBe('svc_envkey_other');
    expect(lines).toEqual([]);
  });

  test('when the file is missing or empty at start, then one line says so and SVC_WORKSPACE_API_KEY is used', () => {
    const { logger, lines } = capturedLogger();
    expect(runtimeKeyAtStart(file, 'svc_envkey_other', logger)).toBe('svc_envkey_other');
    fs.writeFileSync(file, '  \n');
    expect(runtimeKeyAtStart(file, undefined, logger)).toBeUndefined();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('ENOENT');
    expect(lines[1]).toContain('the file is empty');
  });

  test('when the file is rewritten and re-read, then the new key is returned once and never logged', async () => {
    fs.writeFileSync(file, 'svc_first_secretone');
    const { logger, lines } = capturedLogger();
    const current = runtimeKeyAtStart(file, undefined, logger);
    expect(await reloadRuntimeKey(file, current, logger)).toBeUndefined();

    fs.writeFileSync(file, 'svc_second_secrettwo\n');
    expect(await reloadRuntimeKey(file, current, logger)).toBe('svc_second_secrettwo');

    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('runtime key unchanged');
    expect(lines[1]).toContain('switched to the runtime key in the file');
    expect(lines[1]).toContain('"key_prefix":"second"');
    expect(lines.join('')).not.toMatch(/secretone|secrettwo/);
  });

  test('when the file cannot be read on re-read, then one line says so and the key in use stays', async () => {
    const { logger, lines } = capturedLogger();
    expect(await reloadRuntimeKey(file, 'svc_kept_secret', logger)).toBeUndefined();
    fs.mkdirSync(file);
    expect(await reloadRuntimeKey(file, 'svc_kept_secret', logger)).toBeUndefined();
    expect(await reloadRuntimeKey(undefined, 'svc_kept_secret', logger)).toBeUndefined();
    expect(lines).toHaveLength(3);
    expect(lines[0]).toContain('ENOENT');
    expect(lines[1]).toContain('EISDIR');
    expect(lines[2]).toContain('no SVC_WORKSPACE_API_KEY_FILE');
    expect(lines.join('')).not.toContain('svc_kept_secret');
  });
});
