import { ConfigError } from '@svc/service-kit';
import { loadConsoleRouterConfig } from './env';

function configError(env: NodeJS.ProcessEnv): string {
  try {
    loadConsoleRouterConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('console router configuration', () => {
  test('when only HUB_URL is set, then it binds 127.0.0.1:8790', () => {
    expect(loadConsoleRouterConfig({ HUB_URL: 'http://127.0.0.1:8080' })).toEqual({
      host: '127.0.0.1',
      port: 8790,
      hubUrl: 'http://127.0.0.1:8080',
      logLevel: 'info',
    });
  });

  test('when every variable is set, then each is parsed', () => {
    expect(
      loadConsoleRouterConfig({
        CONSOLE_ROUTER_HOST: '0.0.0.0',
        CONSOLE_ROUTER_PORT: '9100',
        HUB_URL: 'https://hub.example.test',
        LOG_LEVEL: 'warn',
      }),
    ).toEqual({ host: '0.0.0.0', port: 9100, hubUrl: 'https://hub.example.test', logLevel: 'warn' });
  });

  test('when HUB_URL is missing, then one line names it', () => {
    const message = configError({});
    expect(message).toMatch(/^console-router: invalid configuration: HUB_URL: /);
    expect(message).not.toContain('\n');
  });

  test('when HUB_URL is not http(s), then it is refused', () => {
    expect(configError({ HUB_URL: 'ws://hub.example.test' })).toContain('HUB_URL');
  });

  test('when the port is out of range, then CONSOLE_ROUTER_PORT is named', () => {
    expect(configError({ HUB_URL: 'http://127.0.0.1:8080', CONSOLE_ROUTER_PORT: '70000' })).toContain(
      'CONSOLE_ROUTER_PORT',
    );
  });
});
