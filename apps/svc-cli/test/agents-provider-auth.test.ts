import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { agentRuntimeHome } from '../src/data/agent-state';
import {
  AGENT_AUTH_LINK,
  CANONICAL_AUTH_FILE,
  LOCK_FILE,
  materializeProviderAuth,
  providerAuthDir,
} from '../src/data/provider-auth-materializer';
import { CliError } from '../src/domain/cli-error';
import { modeOf } from './support/cli';

describe('server-local provider auth materializer (real files)', () => {
  let root: string;
  let stateDir: string;
  let source: string;

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-provider-auth-'));
    stateDir = path.join(root, 'run', 'default');
    source = path.join(root, 'host-auth.json');
    fs.writeFileSync(source, '{"api_key":"sk-host-one-0123456789"}', { mode: 0o644 });
  });

  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  const materialize = (
    agentName: string,
    extra: { provider?: string; sourceFile?: string; waitMs?: number } = {},
  ) =>
    materializeProviderAuth({
      stateDir,
      agentName,
      runtimeHome: agentRuntimeHome(stateDir, agentName),
      provider: extra.provider ?? 'anthropic',
      sourceFile: extra.sourceFile ?? source,
      waitMs: extra.waitMs ?? 0,
    });

  async function refusal(run: Promise<unknown>): Promise<CliError> {
    try {
      await run;
    } catch (error) {
      if (error instanceof CliError) return error;
      throw error;
    }
    throw new Error('expected a refusal');
  }

  it('when two agents are materialized, then one canonical 0600 file in an owner-only directory exists and both auth paths link to it', async () => {
    const first = await materialize('alpha');
    const second = await materialize('beta');
    const canonical = path.join(providerAuthDir(stateDir), CANONICAL_AUTH_FILE);
    expect(first).toMatchObject({ canonical_file: canonical, written: true, provider: 'anthropic' });
    expect(second).toMatchObject({ canonical_file: canonical, written: false, identity: first.identity });
    expect(modeOf(canonical)).toBe(0o600);
    expect(modeOf(providerAuthDir(stateDir))).toBe(0o700);
    expect(fs.readFileSync(canonical, 'utf8')).toBe(fs.readFileSync(source, 'utf8'));
    for (const name of ['alpha', 'beta']) {
      const link = path.join(agentRuntimeHome(stateDir, name), AGENT_AUTH_LINK);
      expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
      expect(fs.readlinkSync(link)).toBe(canonical);
      expect(modeOf(agentRuntimeHome(stateDir, name))).toBe(0o700);
    }
    // The identity names the material without revealing it; the lock is gone.
    expect(first.identity).toMatch(/^anthropic:sha256:[0-9a-f]{16}$/);
    expect(first.identity).not.toContain('sk-host');
    expect(fs.existsSync(path.join(providerAuthDir(stateDir), LOCK_FILE))).toBe(false);
  });

  it('when a second provider identity (other secret or other provider) is materialized, then it is refused and the file is unchanged', async () => {
    await materialize('alpha');
    const canonical = path.join(providerAuthDir(stateDir), CANONICAL_AUTH_FILE);
    const before = fs.readFileSync(canonical, 'utf8');
    const other = path.join(root, 'other-auth.json');
    fs.writeFileSync(other, '{"api_key":"sk-someone-else-987654"}');

    const secret = await refusal(materialize('beta', { sourceFile: other }));
    expect(secret.code).toBe('provider_identity_conflict');
    const provider = await refusal(materialize('gamma', { provider: 'openai' }));
    expect(provider.code).toBe('provider_identity_conflict');
    expect(fs.readFileSync(canonical, 'utf8')).toBe(before);
    expect(fs.existsSync(path.join(agentRuntimeHome(stateDir, 'beta'), AGENT_AUTH_LINK))).toBe(false);
    expect(secret.message).not.toContain('sk-');
  });

  it('when another live process holds the materialization lock, then a second agent is refused (never two at once)', async () => {
    fs.mkdirSync(providerAuthDir(stateDir), { recursive: true, mode: 0o700 });
    // A live process (this test's own) holds the lock, as another `svc start` in the middle of it would.
    const livePid = process.pid;
    const lock = path.join(providerAuthDir(stateDir), LOCK_FILE);
    fs.writeFileSync(lock, JSON.stringify({ pid: livePid, agent: 'alpha', at: new Date().toISOString() }));

    const refused = await refusal(materialize('beta', { waitMs: 300 }));
    expect(refused.code).toBe('provider_auth_materializing');
    expect(refused.message).toContain('alpha');
    expect(fs.existsSync(path.join(providerAuthDir(stateDir), CANONICAL_AUTH_FILE))).toBe(false);
    expect(fs.existsSync(lock)).toBe(true);
  });

  it('when the lock was left by a process that is gone, then it is stale and taken over', async () => {
    fs.mkdirSync(providerAuthDir(stateDir), { recursive: true, mode: 0o700 });
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    const deadPid = Number(gone.stdout.toString());
    const lock = path.join(providerAuthDir(stateDir), LOCK_FILE);
    fs.writeFileSync(lock, JSON.stringify({ pid: deadPid, agent: 'crashed', at: new Date().toISOString() }));

    const done = await materialize('beta');
    expect(done.written).toBe(true);
    expect(fs.existsSync(lock)).toBe(false);
  });

  it('when two materializations race in one runtime, then they run one after the other and both link to the one file', async () => {
    const results = await Promise.all([
      materializeProviderAuth({
        stateDir,
        agentName: 'a1',
        runtimeHome: agentRuntimeHome(stateDir, 'a1'),
        provider: 'anthropic',
        sourceFile: source,
        waitMs: 10_000,
      }),
      materializeProviderAuth({
        stateDir,
        agentName: 'a2',
        runtimeHome: agentRuntimeHome(stateDir, 'a2'),
        provider: 'anthropic',
        sourceFile: source,
        waitMs: 10_000,
      }),
    ]);
    expect(results.filter((r) => r.written)).toHaveLength(1);
    expect(new Set(results.map((r) => r.canonical_file)).size).toBe(1);
  });

  it('when the source file is missing or empty, then it is a named error', async () => {
    expect((await refusal(materialize('alpha', { sourceFile: path.join(root, 'nope') }))).code).toBe(
      'server_local_provider_auth_source_unreadable',
    );
    fs.writeFileSync(source, '');
    expect((await refusal(materialize('alpha'))).code).toBe('server_local_provider_auth_source_unreadable');
  });
});
