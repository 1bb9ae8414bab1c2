import { hoistGlobalFlags } from './hoist-global-flags';

const names = ['profile', 'config-dir'];

describe('hoistGlobalFlags', () => {
  it('when global flags come before the command, then they move after its arguments', () => {
    expect(hoistGlobalFlags(['--profile', 'prod', 'stop', 'agent-1'], names)).toEqual([
      'stop',
      'agent-1',
      '--profile',
      'prod',
    ]);
  });

  it('when a global flag uses the --name=value form, then it moves as one token', () => {
    expect(hoistGlobalFlags(['--config-dir=/etc/svc', '--profile', 'p', 'config', 'path'], names)).toEqual([
      'config',
      'path',
      '--config-dir=/etc/svc',
      '--profile',
      'p',
    ]);
  });

  it('when the arguments contain a -- separator, then the flags go before it', () => {
    expect(hoistGlobalFlags(['--profile', 'p', 'start', '--', '--profile', 'raw'], names)).toEqual([
      'start',
      '--profile',
      'p',
      '--',
      '--profile',
      'raw',
    ]);
  });

  it('when the command comes first, then the arguments are unchanged', () => {
    const argv = ['config', 'path', '--profile', 'p'];
    expect(hoistGlobalFlags(argv, names)).toEqual(argv);
  });

  it('when nothing follows the global flags or a value is missing, then the arguments are unchanged', () => {
    expect(hoistGlobalFlags(['--profile', 'p'], names)).toEqual(['--profile', 'p']);
    expect(hoistGlobalFlags(['--profile'], names)).toEqual(['--profile']);
  });

  it('when the leading flag is not a global option flag, then the arguments are unchanged', () => {
    expect(hoistGlobalFlags(['--version'], names)).toEqual(['--version']);
    expect(hoistGlobalFlags(['--profiles', 'x', 'list'], names)).toEqual(['--profiles', 'x', 'list']);
  });
});
