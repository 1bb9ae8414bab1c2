import path from 'node:path';
import {
  assertValidProfileName,
  defaultConfigDir,
  resolveConfigPaths,
  resolveInsideDir,
} from './config-paths';

describe('config paths', () => {
  it('when no directory is configured, then the default is ~/.config/svc', () => {
    expect(defaultConfigDir('/home/ops', undefined)).toBe('/home/ops/.config/svc');
  });

  it('when XDG_CONFIG_HOME is an absolute path, then the default is $XDG_CONFIG_HOME/svc', () => {
    expect(defaultConfigDir('/home/ops', '/xdg')).toBe('/xdg/svc');
    expect(defaultConfigDir('/home/ops', 'relative')).toBe('/home/ops/.config/svc');
  });

  it('when a profile is selected, then its file is profiles/<profile>.json under the config directory', () => {
    expect(resolveConfigPaths({ configDir: '/etc/svc', profile: 'staging' })).toEqual({
      config_dir: '/etc/svc',
      profile: 'staging',
      profile_path: '/etc/svc/profiles/staging.json',
      runtime_env_path: '/etc/svc/profiles/staging.runtime.env',
      state_dir: '/etc/svc/run/staging',
    });
  });

  it('when the config directory is relative, then it is resolved against the working directory', () => {
    expect(resolveConfigPaths({ configDir: 'conf', profile: 'default' }).config_dir).toBe(
      path.resolve('conf'),
    );
  });

  it.each(['default', 'prod-eu.1', 'A_b'])('when the profile name is %p, then it is accepted', (name) => {
    expect(assertValidProfileName(name)).toBe(name);
  });

  it.each(['', '../etc', 'a/b', '.hidden', '-flag', 'x'.repeat(65)])(
    'when the profile name is %p, then it is rejected',
    (name) => {
      expect(() => assertValidProfileName(name)).toThrow(/invalid profile name/);
    },
  );

  it.each(['runtime.env', 'profiles/default.json', './a/../b.json'])(
    'when a secret file path %p stays inside the config directory, then it resolves under it',
    (relative) => {
      expect(resolveInsideDir('/etc/svc', relative)).toBe(path.join('/etc/svc', relative));
    },
  );

  it.each(['../escape', '/etc/passwd', '.', 'a/../..', '..'])(
    'when a secret file path %p leaves the config directory, then it is rejected',
    (relative) => {
      expect(() => resolveInsideDir('/etc/svc', relative)).toThrow(/outside the directory/);
    },
  );
});
