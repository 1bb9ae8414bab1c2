import { browserResponseHeaders, forwardedPath, upstreamRequestHeaders } from './forward-rules';

describe('forwarded paths', () => {
  test('when a path is under the public API or the API reference, then it is forwarded with its query', () => {
    expect(forwardedPath('/api/v1/me')).toBe('/api/v1/me');
    expect(forwardedPath('/api/v1/workspaces/dev/audit-events?limit=5&cursor=a%3Db')).toBe(
      '/api/v1/workspaces/dev/audit-events?limit=5&cursor=a%3Db',
    );
    expect(forwardedPath('/docs')).toBe('/docs');
    expect(forwardedPath('/docs/errors/invalid_credentials')).toBe('/docs/errors/invalid_credentials');
  });

  test('when a path is internal, spelled around the rule, or the sign-in, then it is not forwarded', () => {
    for (const path of [
      '/',
      '/internal/v1/roster',
      '/api/v2/me',
      '/api/v1x/me',
      '/apis/v1/me',
      '/openapi.json',
      '/healthz',
      '/api/v1/../internal/v1/roster',
      '/api/v1/./me',
      '/api/v1/%2e%2e/internal',
      '/api/v1/%2E%2E/internal',
      '/api/v1/a%2Fb',
      '/api/v1\\..\\internal',
      '/api/v1//me',
      '/api/v1/auth/login',
      '/api/v1/auth/login/',
      '/docsx',
    ]) {
      expect({ path, forwarded: forwardedPath(path) }).toEqual({ path, forwarded: undefined });
    }
  });
});

describe('forwarded headers', () => {
  test('when a browser request is forwarded, then only allow-listed headers pass and the session token is the only credential', () => {
    const headers = upstreamRequestHeaders(
      {
        accept: 'application/json',
        'content-type': 'application/json',
        'idempotency-key': 'k-1',
        cookie: 'svc_session=v1.sealed',
        authorization: 'Bearer forged',
        'x-api-key': 'svc_key',
        'x-svc-service-token': 'svs_x',
        'x-forwarded-for': '203.0.113.9',
        host: 'control.example',
      },
      { token: 'jwt.of.session', clientAddress: '127.0.0.1', protocol: 'https', host: 'control.example' },
    );
    expect(headers).toEqual({
      accept: 'application/json',
      'content-type': 'application/json',
      'idempotency-key': 'k-1',
      authorization: 'Bearer jwt.of.session',
      'x-forwarded-for': '127.0.0.1',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'control.example',
    });
    expect(
      upstreamRequestHeaders(
        { authorization: 'Bearer forged' },
        { token: undefined, clientAddress: undefined, protocol: 'http', host: undefined },
      ),
    ).toEqual({ 'x-forwarded-proto': 'http' });
  });

  test('when an answer comes back, then cookies and hop-by-hop headers are dropped and an upstream Location is rewritten', () => {
    expect(
      browserResponseHeaders(
        {
          'content-type': 'application/json',
          'set-cookie': ['a=b'],
          connection: 'keep-alive',
          'transfer-encoding': 'chunked',
          location: 'http://127.0.0.1:4000/api/v1/projects/prj_1',
          'retry-after': '30',
        },
        'http://127.0.0.1:4000',
        '/hub',
      ),
    ).toEqual({
      'content-type': 'application/json',
      location: '/hub/api/v1/projects/prj_1',
      'retry-after': '30',
    });
  });
});
