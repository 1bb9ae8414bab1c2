import { ConfigError } from '@svc/service-kit';
import { loadRelayConfig } from './env';

function configError(env: NodeJS.ProcessEnv): string {
  try {
    loadRelayConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('relay configuration', () => {
  test('when nothing is set, then the relay binds 127.0.0.1:8787 with no hub settings', () => {
    expect(loadRelayConfig({})).toMatchObject({
      host: '127.0.0.1',
      port: 8787,
      hubUrl: undefined,
      workspace: undefined,
      workspaceApiKey: undefined,
      relayToken: undefined,
      logLevel: 'info',
    });
  });

  test('when every variable is set, then each is parsed', () => {
    const token = 't'.repeat(32);
    expect(
      loadRelayConfig({
        RELAY_HOST: '0.0.0.0',
        RELAY_PORT: '9000',
        SVC_HUB_URL: 'https://hub.example.test',
        SVC_WORKSPACE: 'acme',
        SVC_WORKSPACE_API_KEY: 'svc_abcdefgh1234_secret',
        SVC_RELAY_TOKEN: token,
        LOG_LEVEL: 'debug',
      }),
    ).toMatchObject({
      host: '0.0.0.0',
      port: 9000,
      hubUrl: 'https://hub.example.test',
      workspace: 'acme',
      workspaceApiKey: 'svc_abcdefgh1234_secret',
      relayToken: token,
      logLevel: 'debug',
    });
  });

  test('when optional variables are empty, then they count as not set', () => {
    const config = loadRelayConfig({
      SVC_HUB_URL: '',
      SVC_WORKSPACE: '',
      SVC_WORKSPACE_API_KEY: '',
      SVC_RELAY_TOKEN: '',
    });
    expect(config).toMatchObject({
      hubUrl: undefined,
      workspace: undefined,
      workspaceApiKey: undefined,
      relayToken: undefined,
    });
  });

  test('when the port is not a number, then one line names RELAY_PORT', () => {
    const message = configError({ RELAY_PORT: 'abc' });
    expect(message).toMatch(/^relay: invalid configuration: RELAY_PORT: /);
    expect(message).not.toContain('\n');
  });

  test('when the hub URL is not http(s), then it is refused', () => {
    expect(configError({ SVC_HUB_URL: 'ftp://hub.example.test' })).toContain('SVC_HUB_URL');
  });

  test('when the relay token is shorter than 32 characters, then it is refused without echoing it', () => {
    const message = configError({ SVC_RELAY_TOKEN: 'short-relay-token' });
    expect(message).toContain('SVC_RELAY_TOKEN: must be at least 32 characters');
    expect(message).not.toContain('short-relay-token');
  });

  test('when spawn settings are set, then the allow-list, kept variables, public host and metrics port are parsed', () => {
    const config = loadRelayConfig({
      SVC_RELAY_COMMANDS: '{"default":null,"review":"node /opt/review.js --fast"}',
      SVC_RELAY_CHILD_ENV: 'HTTPS_PROXY, NO_PROXY',
      SVC_RELAY_PUBLIC_URL: 'https://Relay.Example.test/',
      SVC_RELAY_ALLOWED_HOSTS: 'relay.lan',
      RELAY_METRICS_PORT: '9187',
    });
    expect(config.spawn.commands).toEqual({ default: null, review: 'node /opt/review.js --fast' });
    expect(config.spawn.childEnvKeep).toEqual(['HTTPS_PROXY', 'NO_PROXY']);
    expect(config.allowedHosts).toEqual(['relay.example.test', 'relay.lan']);
    expect(config.metricsPort).toBe(9187);
    expect(loadRelayConfig({}).spawn.commands).toEqual({ default: null });
  });

  test('when the allow-list is not a JSON object of command lines, or a secret is to be kept, then it is refused', () => {
    expect(configError({ SVC_RELAY_COMMANDS: 'node agent.js' })).toContain('SVC_RELAY_COMMANDS');
    expect(configError({ SVC_RELAY_COMMANDS: '{"Bad Key":"x"}' })).toContain('command key');
    expect(configError({ SVC_RELAY_COMMANDS: '{"x":""}' })).toContain('non-empty');
    expect(configError({ SVC_RELAY_CHILD_ENV: 'PATH,SVC_RELAY_TOKEN' })).toContain(
      'may not pass SVC_RELAY_TOKEN',
    );
    expect(configError({ SVC_RELAY_CHILD_ENV: 'SVC_WORKSPACE_API_KEY_FILE' })).toContain(
      'may not pass SVC_WORKSPACE_API_KEY_FILE',
    );
  });

  test('when SVC_WORKSPACE_API_KEY_FILE is set, then it is kept as an absolute path; a relative one is refused', () => {
    expect(loadRelayConfig({ SVC_WORKSPACE_API_KEY_FILE: '/run/svc/runtime.key' })).toMatchObject({
      workspaceApiKeyFile: '/run/svc/runtime.key',
    });
    expect(configError({ SVC_WORKSPACE_API_KEY_FILE: 'runtime.key' })).toContain(
      'SVC_WORKSPACE_API_KEY_FILE',
    );
  });
});
