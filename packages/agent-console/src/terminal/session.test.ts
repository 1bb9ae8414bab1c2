import { terminalCommand } from './session';

describe('terminalCommand', () => {
  test('when the agent environment holds secrets, then the shell gets only PATH, HOME, LANG, SHELL and TERM', () => {
    const { shell, env } = terminalCommand({
      workdir: '/tmp',
      baseEnv: {
        PATH: '/usr/bin',
        HOME: '/home/agent',
        LANG: 'C.UTF-8',
        SHELL: '/bin/bash',
        AGENT_TOKEN: 'secret',
        AGENT_CONSOLE_PROXY_KEY: 'secret',
        TERM: 'dumb',
      },
    });
    expect(shell).toBe('/bin/bash');
    expect(env).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/agent',
      LANG: 'C.UTF-8',
      SHELL: '/bin/bash',
      TERM: 'xterm-256color',
    });
  });

  test('when no shell is configured and $SHELL is unset, then /bin/sh runs; an explicit shell wins', () => {
    expect(terminalCommand({ workdir: '/tmp', baseEnv: {} }).shell).toBe('/bin/sh');
    expect(terminalCommand({ workdir: '/tmp', baseEnv: { SHELL: '/bin/zsh' }, shell: '/bin/dash' })).toEqual({
      shell: '/bin/dash',
      env: { SHELL: '/bin/dash', TERM: 'xterm-256color' },
    });
  });
});
