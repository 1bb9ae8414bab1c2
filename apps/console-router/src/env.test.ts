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
      hubIssuer: 'http://127.0.0.1:8080',
      runtimeInstanceId: undefined,
      runtimeKey: undefined,
      runtimeKeyFile: undefined,
      publicBaseUrl: undefined,
      allowedOrigins: [],
      upstreamSecret: undefined,
      pollMs: 5000,
      redisUrl: undefined,
      redisPrefix: 'svc',
      wsIdleMs: 600_000,
      wsLimits: { maxConnections: 10_000, maxPerRoute: 1_000, maxPerCaller: 100, maxMessageBytes: 1_048_576 },
      logLevel: 'info',
    });
  });

  test('when every variable is set, then each is parsed', () => {
    expect(
      loadConsoleRouterConfig({
        CONSOLE_ROUTER_HOST: '0.0.0.0',
        CONSOLE_ROUTER_PORT: '9100',
        HUB_URL: 'https://hub.example.test',
        HUB_ISSUER: 'https://issuer.example.test',
        SVC_RUNTIME_INSTANCE_ID: 'rti_abc123',
        SVC_WORKSPACE_API_KEY: 'svk_runtime-key',
        SVC_WORKSPACE_API_KEY_FILE: '/run/svc/runtime.key',
        CONSOLE_ROUTER_PUBLIC_BASE_URL: 'https://console.example.test/',
        CONSOLE_ROUTER_ALLOWED_ORIGINS: 'https://control.example.test, http://127.0.0.1:4200/',
        CONSOLE_ROUTER_UPSTREAM_SECRET: 'x'.repeat(32),
        CONSOLE_ROUTER_POLL_MS: '2000',
        CONSOLE_ROUTER_REDIS_URL: 'redis://127.0.0.1:6379/2',
        CONSOLE_ROUTER_REDIS_PREFIX: 'edge',
        CONSOLE_ROUTER_WS_IDLE_MS: '60000',
        CONSOLE_ROUTER_WS_MAX_CONNECTIONS: '20000',
        CONSOLE_ROUTER_WS_MAX_PER_ROUTE: '50',
        CONSOLE_ROUTER_WS_MAX_PER_CALLER: '5',
        CONSOLE_ROUTER_WS_MAX_MESSAGE_BYTES: '65536',
        LOG_LEVEL: 'warn',
      }),
    ).toEqual({
      host: '0.0.0.0',
      port: 9100,
      hubUrl: 'https://hub.example.test',
      hubIssuer: 'https://issuer.example.test',
      runtimeInstanceId: 'rti_abc123',
      runtimeKey: 'svk_runtime-key',
      runtimeKeyFile: '/run/svc/runtime.key',
      publicBaseUrl: 'https://console.example.test',
      allowedOrigins: ['https://control.example.test', 'http://127.0.0.1:4200'],
      upstreamSecret: 'x'.repeat(32),
      pollMs: 2000,
      redisUrl: 'redis://127.0.0.1:6379/2',
      redisPrefix: 'edge',
      wsIdleMs: 60_000,
      wsLimits: { maxConnections: 20_000, maxPerRoute: 50, maxPerCaller: 5, maxMessageBytes: 65_536 },
      logLevel: 'warn',
    });
  });

  test('when a WebSocket limit is zero or not a number, then its variable is named', () => {
    expect(
      configError({ HUB_URL: 'http://127.0.0.1:8080', CONSOLE_ROUTER_WS_MAX_PER_CALLER: '0' }),
    ).toContain('CONSOLE_ROUTER_WS_MAX_PER_CALLER');
    expect(
      configError({ HUB_URL: 'http://127.0.0.1:8080', CONSOLE_ROUTER_WS_MAX_MESSAGE_BYTES: 'lots' }),
    ).toContain('CONSOLE_ROUTER_WS_MAX_MESSAGE_BYTES');
  });

  test('when SVC_WORKSPACE_API_KEY_FILE is not an absolute path, then it is named', () => {
    expect(
      configError({ HUB_URL: 'http://127.0.0.1:8080', SVC_WORKSPACE_API_KEY_FILE: 'runtime.key' }),
    ).toContain('SVC_WORKSPACE_API_KEY_FILE');
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

  test('when SVC_RUNTIME_INSTANCE_ID is a runtime bundle id (wrt_…), then one line says to use the host id', () => {
    const message = configError({ HUB_URL: 'http://127.0.0.1:8080', SVC_RUNTIME_INSTANCE_ID: 'wrt_abc' });
    expect(message).toMatch(
      /SVC_RUNTIME_INSTANCE_ID: wrt_… is a runtime bundle id; set the host inventory id \(rti_…\)/,
    );
    expect(message).not.toContain('\n');
  });

  test('when SVC_RUNTIME_INSTANCE_ID is no host id or the secret is short, then each is named', () => {
    expect(configError({ HUB_URL: 'http://127.0.0.1:8080', SVC_RUNTIME_INSTANCE_ID: 'agt_1' })).toContain(
      'SVC_RUNTIME_INSTANCE_ID: must be a runtime host id (rti_…)',
    );
    expect(
      configError({ HUB_URL: 'http://127.0.0.1:8080', CONSOLE_ROUTER_UPSTREAM_SECRET: 'short' }),
    ).toContain('CONSOLE_ROUTER_UPSTREAM_SECRET');
    expect(
      configError({ HUB_URL: 'http://127.0.0.1:8080', CONSOLE_ROUTER_PUBLIC_BASE_URL: 'console' }),
    ).toContain('CONSOLE_ROUTER_PUBLIC_BASE_URL');
    for (const bad of ['control.example.test', 'https://control.example.test/console', 'ftp://x.test']) {
      expect(
        configError({ HUB_URL: 'http://127.0.0.1:8080', CONSOLE_ROUTER_ALLOWED_ORIGINS: bad }),
      ).toContain('CONSOLE_ROUTER_ALLOWED_ORIGINS');
    }
  });

  test('when the host settings are empty strings, then they count as not set', () => {
    const config = loadConsoleRouterConfig({
      HUB_URL: 'http://127.0.0.1:8080',
      SVC_RUNTIME_INSTANCE_ID: '',
      SVC_WORKSPACE_API_KEY: '',
    });
    expect(config.runtimeInstanceId).toBeUndefined();
    expect(config.runtimeKey).toBeUndefined();
  });
});
