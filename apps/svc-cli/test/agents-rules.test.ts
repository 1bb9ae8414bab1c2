import { CliError } from '../src/domain/cli-error';
import {
  checkPlacement,
  checkRegisteredWorkdir,
  checkRuntimeInstanceId,
  checkServePublicBaseUrl,
  checkSpawnReady,
  checkWorkdirRoot,
  parseCapabilities,
} from '../src/domain/direct-start-rules';
import { splitCommand } from '../src/domain/split-command';

/** The code (and exit) of the CliError `run` throws; fails when it throws nothing or something else. */
function refusal(run: () => unknown): { code: string; exit: number; fix: string | undefined } {
  try {
    run();
  } catch (error) {
    if (error instanceof CliError) return { code: error.code, exit: error.exit, fix: error.fix };
    throw error;
  }
  throw new Error('expected a refusal, got none');
}

describe('splitCommand (no shell)', () => {
  it('when words are quoted or escaped, then they are split as a POSIX shell splits them, without expansion', () => {
    expect(splitCommand('node  agent.js --flag value')).toEqual(['node', 'agent.js', '--flag', 'value']);
    expect(splitCommand(`node -e "console.log(\\"hi\\")"`)).toEqual(['node', '-e', 'console.log("hi")']);
    expect(splitCommand(`printf '%s $HOME' a\\ b`)).toEqual(['printf', '%s $HOME', 'a b']);
    expect(splitCommand('echo "$HOME" *.js ~')).toEqual(['echo', '$HOME', '*.js', '~']);
    expect(splitCommand(`a"b c"'d'`)).toEqual(['ab cd']);
  });

  it('when the command has unquoted shell operators, an open quote, an empty word or nothing, then it is a usage error', () => {
    for (const command of [
      'a | b',
      'a; b',
      'a && b',
      'a > out',
      'a $(b)',
      '`b`',
      'a "b',
      "a 'b",
      'a \\',
      '',
      '   ',
      'a ""',
    ]) {
      expect(refusal(() => splitCommand(command))).toMatchObject({ code: 'command_invalid', exit: 2 });
    }
  });
});

describe('direct start rules', () => {
  it('rule 2: SVC_RUNTIME_INSTANCE_ID must be the pulled host rti_ id, never a wrt_ bundle id', () => {
    expect(checkRuntimeInstanceId('rti_abc', 'rti_abc')).toBe('rti_abc');
    expect(refusal(() => checkRuntimeInstanceId(undefined, 'rti_abc')).code).toBe(
      'runtime_instance_id_missing',
    );
    expect(refusal(() => checkRuntimeInstanceId('', 'rti_abc')).code).toBe('runtime_instance_id_missing');
    expect(refusal(() => checkRuntimeInstanceId('wrt_abc', 'rti_abc')).code).toBe(
      'runtime_bundle_id_not_allowed',
    );
    expect(refusal(() => checkRuntimeInstanceId('host-1', 'rti_abc')).code).toBe(
      'runtime_instance_id_invalid',
    );
    expect(refusal(() => checkRuntimeInstanceId('rti_other', 'rti_abc')).code).toBe(
      'runtime_instance_id_mismatch',
    );
    expect(refusal(() => checkRuntimeInstanceId(undefined, 'rti_abc')).fix).toContain(
      'SVC_RUNTIME_INSTANCE_ID=rti_abc',
    );
  });

  it('rule 3: SVC_AGENT_WORKDIR_ROOT is needed when the workspace default differs, and must equal the host root when set', () => {
    expect(checkWorkdirRoot(undefined, '/srv/agents', '/srv/agents')).toBe('/srv/agents');
    expect(checkWorkdirRoot(undefined, '/srv/agents', undefined)).toBe('/srv/agents');
    expect(checkWorkdirRoot('/srv/agents/', '/srv/agents', 'C:\\agents')).toBe('/srv/agents');
    expect(refusal(() => checkWorkdirRoot(undefined, '/srv/agents', 'C:\\agents')).code).toBe(
      'agent_workdir_root_missing',
    );
    expect(refusal(() => checkWorkdirRoot('/opt/agents', '/srv/agents', '/srv/agents')).code).toBe(
      'agent_workdir_root_mismatch',
    );
  });

  it("rule 4: --serve-public-base-url must be the server's console_public_base_url", () => {
    expect(() => checkServePublicBaseUrl(undefined, 'https://c.example', 'https://c.example')).not.toThrow();
    expect(() =>
      checkServePublicBaseUrl('https://c.example/', 'https://c.example', 'https://c.example'),
    ).not.toThrow();
    expect(
      refusal(() =>
        checkServePublicBaseUrl('https://other.example', 'https://c.example', 'https://c.example'),
      ).code,
    ).toBe('serve_public_base_url_mismatch');
  });

  it('rule 5: project or workdir, never both; new workers need project and team; workdir strictly inside the root', () => {
    const base = { teamId: undefined, worker: false, isNew: true, workdirRoot: '/srv/agents' };
    expect(() => checkPlacement({ ...base, project: 'WEB', workdir: undefined })).not.toThrow();
    expect(() => checkPlacement({ ...base, project: undefined, workdir: '/srv/agents/a' })).not.toThrow();
    expect(refusal(() => checkPlacement({ ...base, project: 'WEB', workdir: '/srv/agents/a' })).code).toBe(
      'project_and_workdir_exclusive',
    );
    expect(refusal(() => checkPlacement({ ...base, project: undefined, workdir: undefined })).code).toBe(
      'project_or_workdir_required',
    );
    // An existing agent keeps its placement.
    expect(() =>
      checkPlacement({ ...base, isNew: false, project: undefined, workdir: undefined }),
    ).not.toThrow();
    for (const workdir of ['/srv/agents', '/srv/agents/../x', '/srv/agentsx/a', '/tmp/a']) {
      expect(refusal(() => checkPlacement({ ...base, project: undefined, workdir })).code).toBe(
        'workdir_outside_root',
      );
    }
    expect(refusal(() => checkPlacement({ ...base, project: undefined, workdir: 'rel/dir' })).code).toBe(
      'workdir_not_absolute',
    );
    const worker = { ...base, worker: true };
    expect(refusal(() => checkPlacement({ ...worker, project: 'WEB', workdir: undefined })).code).toBe(
      'worker_requires_project_and_team',
    );
    expect(() =>
      checkPlacement({ ...worker, teamId: 'tm_1', project: 'WEB', workdir: undefined }),
    ).not.toThrow();
    expect(() =>
      checkPlacement({ ...worker, isNew: false, project: undefined, workdir: undefined }),
    ).not.toThrow();
  });

  it('an existing agent keeps its registered workdir: a different --workdir is refused', () => {
    expect(() => checkRegisteredWorkdir('a', undefined, '/srv/agents/a')).not.toThrow();
    expect(() => checkRegisteredWorkdir('a', '/srv/agents/a/', '/srv/agents/a')).not.toThrow();
    expect(() => checkRegisteredWorkdir('a', '/srv/agents/b', null)).not.toThrow();
    expect(refusal(() => checkRegisteredWorkdir('a', '/srv/agents/b', '/srv/agents/a')).code).toBe(
      'agent_workdir_registered',
    );
  });

  it('rule 6: a host that is not spawn ready (stale heartbeat or relay not ready) is refused with the reasons', () => {
    expect(() => checkSpawnReady('rti_a', { spawn_ready: true, reasons: [] })).not.toThrow();
    const refused = refusal(() =>
      checkSpawnReady('rti_a', {
        spawn_ready: false,
        reasons: ['no heartbeat for 120 s', 'relay not ready'],
      }),
    );
    expect(refused).toMatchObject({ code: 'runtime_host_not_ready', exit: 1 });
    expect(refused.fix).toContain('svc runtime up');
  });

  it('capabilities are trimmed, sorted and without duplicates; a bad one is a usage error', () => {
    expect(parseCapabilities(' review, build,review ,,')).toEqual(['build', 'review']);
    expect(parseCapabilities(undefined)).toEqual([]);
    expect(refusal(() => parseCapabilities('ok,not ok'))).toMatchObject({
      code: 'capability_invalid',
      exit: 2,
    });
  });
});
