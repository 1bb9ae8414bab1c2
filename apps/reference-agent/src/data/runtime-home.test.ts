import { mkdtempSync, rmSync } from 'node:fs';
import { chmod, mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { RUNTIME_STATE_FILE, RuntimeHome } from './runtime-home';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'runtime-home-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const mode = async (file: string) => (await stat(file)).mode & 0o777;

describe('RuntimeHome', () => {
  it('when the directory is missing, then prepare creates it owner-only and read finds no state', async () => {
    const home = new RuntimeHome(path.join(root, 'agents', 'a1'));
    await home.prepare();
    expect(await mode(home.dir)).toBe(0o700);
    expect(await home.read()).toEqual({});
  });

  it('when the directory is open to others, then prepare makes it owner-only again', async () => {
    const dir = path.join(root, 'open');
    await mkdir(dir);
    await chmod(dir, 0o755);
    await new RuntimeHome(dir).prepare();
    expect(await mode(dir)).toBe(0o700);
  });

  it('when the path is a file, then prepare refuses it', async () => {
    const file = path.join(root, 'file');
    await writeFile(file, 'x');
    await expect(new RuntimeHome(file).prepare()).rejects.toThrow(/AGENT_RUNTIME_HOME/);
  });

  it('when the state is written, then it is 0600 JSON with the model and time, read back as written, and no temporary file is left', async () => {
    const home = new RuntimeHome(path.join(root, 'home'));
    await home.prepare();
    const at = new Date('2026-01-02T03:04:05.000Z');
    await home.write('local/echo', at);
    expect(await mode(home.file)).toBe(0o600);
    expect(JSON.parse(await readFile(home.file, 'utf8'))).toEqual({
      model: 'local/echo',
      updated_at: '2026-01-02T03:04:05.000Z',
    });
    await home.write('anthropic/claude-sonnet-4-5', new Date(at.getTime() + 1000));
    expect(await home.read()).toEqual({
      state: { model: 'anthropic/claude-sonnet-4-5', updated_at: '2026-01-02T03:04:06.000Z' },
    });
    expect(await readdir(home.dir)).toEqual([RUNTIME_STATE_FILE]);
  });

  it('when the state file is readable by others, then reading makes it 0600', async () => {
    const home = new RuntimeHome(path.join(root, 'loose'));
    await home.prepare();
    await writeFile(home.file, JSON.stringify({ model: 'local/echo', updated_at: 'x' }), { mode: 0o644 });
    await chmod(home.file, 0o644);
    expect((await home.read()).state?.model).toBe('local/echo');
    expect(await mode(home.file)).toBe(0o600);
  });

  it('when the state file is not JSON or has no model, then it is reported as a problem, not used', async () => {
    const home = new RuntimeHome(path.join(root, 'bad'));
    await home.prepare();
    await writeFile(home.file, '{ nope', { mode: 0o600 });
    expect(await home.read()).toEqual({ problem: `${RUNTIME_STATE_FILE} is not valid JSON` });
    await writeFile(home.file, JSON.stringify({ model: '' }), { mode: 0o600 });
    expect(await home.read()).toEqual({ problem: `${RUNTIME_STATE_FILE} has no usable model` });
  });
});
