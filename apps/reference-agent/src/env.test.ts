import { ConfigError } from '@svc/service-kit';
import { loadReferenceAgentConfig } from './env';

const TOKEN = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhZ3RfMSJ9.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg';
const RUNTIME_CREDENTIAL = 'eyJhbGciOiJFUzI1NiJ9.eyJhdWQiOiJydW50aW1lIn0.cnVudGltZS1zaWduYXR1cmU';

describe('loadReferenceAgentConfig', () => {
  it('when only the token is set, then the defaults apply', () => {
    expect(loadReferenceAgentConfig({ AGENT_TOKEN: TOKEN })).toEqual({
      token: TOKEN,
      hubUrl: 'http://127.0.0.1:4000',
      workflowUrl: 'http://127.0.0.1:4100',
      handlerPath: undefined,
      pollWaitSeconds: 20,
      concurrency: 16,
      hubHeartbeatSeconds: 15,
      logLevel: 'info',
      hubIssuer: 'http://127.0.0.1:4000',
      serve: undefined,
      runtime: { credential: undefined, home: undefined },
    });
  });

  it('when the runtime credential, its expiry and the runtime home are set, then they are parsed', () => {
    const config = loadReferenceAgentConfig({
      AGENT_TOKEN: TOKEN,
      AGENT_RUNTIME_CREDENTIAL: RUNTIME_CREDENTIAL,
      AGENT_RUNTIME_CREDENTIAL_EXPIRES_AT: '2026-05-01T10:15:00.000Z',
      AGENT_RUNTIME_HOME: '/srv/agents/one/.runtime',
    });
    expect(config.runtime).toEqual({
      credential: { token: RUNTIME_CREDENTIAL, expiresAt: new Date('2026-05-01T10:15:00.000Z') },
      home: '/srv/agents/one/.runtime',
    });
    expect(
      loadReferenceAgentConfig({
        AGENT_TOKEN: TOKEN,
        AGENT_RUNTIME_CREDENTIAL: '',
        AGENT_RUNTIME_CREDENTIAL_EXPIRES_AT: '',
        AGENT_RUNTIME_HOME: '',
      }).runtime,
    ).toEqual({ credential: undefined, home: undefined });
  });

  it('when the runtime credential comes without its expiry (or the other way round), a bad expiry or a relative home, then it is refused by name, never by value', () => {
    const withoutExpiry = () =>
      loadReferenceAgentConfig({ AGENT_TOKEN: TOKEN, AGENT_RUNTIME_CREDENTIAL: RUNTIME_CREDENTIAL });
    expect(withoutExpiry).toThrow(/AGENT_RUNTIME_CREDENTIAL_EXPIRES_AT/);
    expect(withoutExpiry).not.toThrow(new RegExp(RUNTIME_CREDENTIAL.slice(0, 20)));
    expect(() =>
      loadReferenceAgentConfig({
        AGENT_TOKEN: TOKEN,
        AGENT_RUNTIME_CREDENTIAL_EXPIRES_AT: '2026-05-01T10:15:00Z',
      }),
    ).toThrow(/AGENT_RUNTIME_CREDENTIAL: /);
    expect(() =>
      loadReferenceAgentConfig({
        AGENT_TOKEN: TOKEN,
        AGENT_RUNTIME_CREDENTIAL: RUNTIME_CREDENTIAL,
        AGENT_RUNTIME_CREDENTIAL_EXPIRES_AT: 'in ten minutes',
      }),
    ).toThrow(/AGENT_RUNTIME_CREDENTIAL_EXPIRES_AT/);
    const short = () =>
      loadReferenceAgentConfig({
        AGENT_TOKEN: TOKEN,
        AGENT_RUNTIME_CREDENTIAL: 'short-runtime-value',
        AGENT_RUNTIME_CREDENTIAL_EXPIRES_AT: '2026-05-01T10:15:00Z',
      });
    expect(short).toThrow(/AGENT_RUNTIME_CREDENTIAL: must be at least 32 characters/);
    expect(short).not.toThrow(/short-runtime-value/);
    expect(() => loadReferenceAgentConfig({ AGENT_TOKEN: TOKEN, AGENT_RUNTIME_HOME: 'runtime' })).toThrow(
      /AGENT_RUNTIME_HOME: must be an absolute path/,
    );
  });

  it('when AGENT_SERVE_PORT is set, then the console is served there in AGENT_WORKDIR (default the working directory)', () => {
    expect(loadReferenceAgentConfig({ AGENT_TOKEN: TOKEN, AGENT_SERVE_PORT: '0' }).serve).toEqual({
      port: 0,
      workdir: process.cwd(),
      proxyKey: undefined,
    });
    const config = loadReferenceAgentConfig({
      AGENT_TOKEN: TOKEN,
      AGENT_SERVE_PORT: '4341',
      AGENT_WORKDIR: '/srv/agents/one',
      AGENT_CONSOLE_PROXY_KEY: 'k'.repeat(64),
      HUB_URL: 'https://hub.example.com',
      HUB_ISSUER: 'https://issuer.example.com',
    });
    expect(config.serve).toEqual({ port: 4341, workdir: '/srv/agents/one', proxyKey: 'k'.repeat(64) });
    expect(config.hubIssuer).toBe('https://issuer.example.com');
    // An empty value counts as unset: no console.
    expect(loadReferenceAgentConfig({ AGENT_TOKEN: TOKEN, AGENT_SERVE_PORT: '' }).serve).toBeUndefined();
  });

  it('when the serve port is out of range or the proxy key is short, then it is refused by name, never by value', () => {
    expect(() => loadReferenceAgentConfig({ AGENT_TOKEN: TOKEN, AGENT_SERVE_PORT: '65536' })).toThrow(
      /AGENT_SERVE_PORT/,
    );
    expect(() => loadReferenceAgentConfig({ AGENT_TOKEN: TOKEN, AGENT_SERVE_PORT: 'http' })).toThrow(
      /AGENT_SERVE_PORT/,
    );
    const short = () =>
      loadReferenceAgentConfig({
        AGENT_TOKEN: TOKEN,
        AGENT_SERVE_PORT: '0',
        AGENT_CONSOLE_PROXY_KEY: 'tiny-key',
      });
    expect(short).toThrow(/AGENT_CONSOLE_PROXY_KEY/);
    expect(short).not.toThrow(/tiny-key/);
  });

  it('when every variable is set, then each is parsed (an empty handler counts as unset)', () => {
    const config = loadReferenceAgentConfig({
      AGENT_TOKEN: TOKEN,
      HUB_URL: 'https://hub.example.com',
      WORKFLOW_URL: 'https://workflow.example.com',
      AGENT_HANDLER: '',
      AGENT_POLL_WAIT_SECONDS: '5',
      AGENT_CONCURRENCY: '8',
      AGENT_HUB_HEARTBEAT_SECONDS: '30',
      LOG_LEVEL: 'debug',
    });
    expect(config).toMatchObject({
      pollWaitSeconds: 5,
      concurrency: 8,
      hubHeartbeatSeconds: 30,
      handlerPath: undefined,
    });
    expect(loadReferenceAgentConfig({ AGENT_TOKEN: TOKEN, AGENT_HANDLER: './h.js' }).handlerPath).toBe(
      './h.js',
    );
  });

  it('when the token is missing or short, then a ConfigError names the variable and never the value', () => {
    expect(() => loadReferenceAgentConfig({})).toThrow(ConfigError);
    expect(() => loadReferenceAgentConfig({})).toThrow(/AGENT_TOKEN/);
    const attempt = () => loadReferenceAgentConfig({ AGENT_TOKEN: 'short-secret-value' });
    expect(attempt).toThrow(/AGENT_TOKEN: must be at least 32 characters/);
    expect(attempt).not.toThrow(/short-secret-value/);
  });

  it('when a number is out of range or a URL is not http(s), then it is refused', () => {
    expect(() => loadReferenceAgentConfig({ AGENT_TOKEN: TOKEN, AGENT_POLL_WAIT_SECONDS: '31' })).toThrow(
      /AGENT_POLL_WAIT_SECONDS/,
    );
    expect(() => loadReferenceAgentConfig({ AGENT_TOKEN: TOKEN, AGENT_CONCURRENCY: '0' })).toThrow(
      /AGENT_CONCURRENCY/,
    );
    expect(() => loadReferenceAgentConfig({ AGENT_TOKEN: TOKEN, AGENT_HUB_HEARTBEAT_SECONDS: '90' })).toThrow(
      /AGENT_HUB_HEARTBEAT_SECONDS/,
    );
    expect(() => loadReferenceAgentConfig({ AGENT_TOKEN: TOKEN, HUB_URL: 'ftp://hub' })).toThrow(/HUB_URL/);
  });
});
