import { corsHeaders, isPreflight } from './cors';
import { originRules } from './request-origin';

const rules = originRules('https://console.example.test', ['https://control.example.test']);

describe('CORS on agent routes', () => {
  test.each(['https://control.example.test', 'https://console.example.test', 'http://127.0.0.1:4200'])(
    'when the page is %s, then it may read the answer (its origin is named, no credentials)',
    (origin) => {
      const headers = corsHeaders(origin, rules);
      expect(headers).toMatchObject({ 'Access-Control-Allow-Origin': origin, Vary: 'Origin' });
      expect(headers).not.toHaveProperty('Access-Control-Allow-Credentials');
    },
  );

  test.each([undefined, 'https://evil.example', 'null', 'http://control.example.test'])(
    'when the page is %s, then no CORS header is given',
    (origin) => {
      expect(corsHeaders(origin, rules)).toBeUndefined();
    },
  );

  test('when an OPTIONS names a method to come, then it is a preflight', () => {
    expect(isPreflight({ method: 'OPTIONS', headers: { 'access-control-request-method': 'POST' } })).toBe(
      true,
    );
    expect(isPreflight({ method: 'OPTIONS', headers: {} })).toBe(false);
    expect(isPreflight({ method: 'GET', headers: { 'access-control-request-method': 'POST' } })).toBe(false);
  });
});
