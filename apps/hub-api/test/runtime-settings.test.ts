import { randomBytes } from 'node:crypto';
import { loadHubConfig } from '../src/env';

const base = {
  HUB_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
  HUB_SERVICE_TOKEN: randomBytes(32).toString('hex'),
};

describe('runtime credential settings', () => {
  test('when nothing is configured, then no provider is hub-managed, server-local auth is off and credentials live 10 minutes', () => {
    const config = loadHubConfig(base);
    expect(config.HUB_MANAGED_PROVIDERS).toEqual([]);
    expect(config.HUB_SERVER_LOCAL_PROVIDER_AUTH).toBe(false);
    expect(config.HUB_RUNTIME_CREDENTIAL_TTL_SECONDS).toBe(600);
  });

  test('when the settings are given, then the provider list is trimmed and de-duplicated and the flag parsed', () => {
    const config = loadHubConfig({
      ...base,
      HUB_MANAGED_PROVIDERS: ' anthropic, openai ,,anthropic',
      HUB_SERVER_LOCAL_PROVIDER_AUTH: 'true',
      HUB_RUNTIME_CREDENTIAL_TTL_SECONDS: '900',
    });
    expect(config.HUB_MANAGED_PROVIDERS).toEqual(['anthropic', 'openai']);
    expect(config.HUB_SERVER_LOCAL_PROVIDER_AUTH).toBe(true);
    expect(config.HUB_RUNTIME_CREDENTIAL_TTL_SECONDS).toBe(900);
  });

  test.each([
    [{ HUB_RUNTIME_CREDENTIAL_TTL_SECONDS: '901' }, 'HUB_RUNTIME_CREDENTIAL_TTL_SECONDS'],
    [{ HUB_RUNTIME_CREDENTIAL_TTL_SECONDS: '30' }, 'HUB_RUNTIME_CREDENTIAL_TTL_SECONDS'],
    [{ HUB_SERVER_LOCAL_PROVIDER_AUTH: 'maybe' }, 'HUB_SERVER_LOCAL_PROVIDER_AUTH'],
    [{ HUB_MANAGED_PROVIDERS: 'Anthropic' }, 'HUB_MANAGED_PROVIDERS'],
  ])('when %j is set, then the configuration is refused naming the variable', (env, name) => {
    expect(() => loadHubConfig({ ...base, ...env })).toThrow(name);
  });
});
