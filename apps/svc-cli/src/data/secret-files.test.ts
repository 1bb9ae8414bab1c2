import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { modeOf } from '../../test/support/cli';
import { ensureOwnerOnlyDir, writeSecretFile } from './secret-files';

describe('secret files', () => {
  let root: string;

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-secret-files-'));
  });

  afterEach(() => {
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('when the directory is missing, then it is created with mode 0700 along with its parents', async () => {
    const dir = path.join(root, 'a', 'b', 'svc');

    await ensureOwnerOnlyDir(dir);

    expect(modeOf(dir)).toBe(0o700);
    expect(modeOf(path.join(root, 'a'))).toBe(0o700);
  });

  it('when the directory exists with looser permissions, then it is tightened to 0700', async () => {
    const dir = path.join(root, 'svc');
    fs.mkdirSync(dir, { mode: 0o755 });
    fs.chmodSync(dir, 0o755);

    await ensureOwnerOnlyDir(dir);

    expect(modeOf(dir)).toBe(0o700);
  });

  it('when the path is a regular file, then it is rejected', async () => {
    const file = path.join(root, 'not-a-dir');
    fs.writeFileSync(file, 'x');

    await expect(ensureOwnerOnlyDir(file)).rejects.toThrow();
  });

  it('when a secret is written, then the file has mode 0600, its directory 0700, and it holds the contents', async () => {
    const file = path.join(root, 'svc', 'profiles', 'default.json');

    await writeSecretFile(file, '{"token":"t0p-secret"}');

    expect(modeOf(file)).toBe(0o600);
    expect(modeOf(path.dirname(file))).toBe(0o700);
    expect(fs.readFileSync(file, 'utf8')).toBe('{"token":"t0p-secret"}');
  });

  it('when the file already exists world-readable, then it is replaced by a 0600 file and no temporary file is left', async () => {
    const dir = path.join(root, 'svc');
    fs.mkdirSync(dir, { mode: 0o700 });
    const file = path.join(dir, 'runtime.env');
    fs.writeFileSync(file, 'OLD=1\n', { mode: 0o644 });
    fs.chmodSync(file, 0o644);

    await writeSecretFile(file, Buffer.from('NEW=2\n'));

    expect(modeOf(file)).toBe(0o600);
    expect(fs.readFileSync(file, 'utf8')).toBe('NEW=2\n');
    expect(fs.readdirSync(dir)).toEqual(['runtime.env']);
  });

  it('when the process umask is permissive, then new files and directories still get 0600 and 0700', async () => {
    const previous = process.umask(0);
    try {
      const file = path.join(root, 'open-umask', 'secret');
      await writeSecretFile(file, 'x');

      expect(modeOf(file)).toBe(0o600);
      expect(modeOf(path.dirname(file))).toBe(0o700);
    } finally {
      process.umask(previous);
    }
  });
});
