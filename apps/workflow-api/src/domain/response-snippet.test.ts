import { redactResponseSnippet } from './response-snippet';

describe('redactResponseSnippet', () => {
  test('when an answer echoes a signing secret, an API key and a bearer token, then each is masked', () => {
    const text = [
      'secret whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=',
      `key svc_abcdefgh2345_${'A'.repeat(43)}`,
      'Authorization: Bearer abcdefghijklmnop',
    ].join('\n');
    const out = redactResponseSnippet(text);
    expect(out).not.toContain('c2VjcmV0');
    expect(out).not.toContain('A'.repeat(43));
    expect(out).not.toContain('abcdefghijklmnop');
    expect(out).toContain('whsec_[REDACTED]');
  });

  test('when JSON names a secret field, then its value is masked, also when the snippet cuts it off', () => {
    expect(redactResponseSnippet('{"ok":true,"password":"hunter2 x","Token" : "t\\"q"}')).toBe(
      '{"ok":true,"password":"[REDACTED]","Token" : "[REDACTED]"}',
    );
    expect(redactResponseSnippet('{"ok":true,"client_secret":"abcd')).toBe(
      '{"ok":true,"client_secret":"[REDACTED]',
    );
  });

  test('when a form or header block carries a secret-named pair, then its value is masked', () => {
    expect(redactResponseSnippet('a=1&token=xyz&b=2')).toBe('a=1&token=[REDACTED]&b=2');
    expect(redactResponseSnippet('cookie: sid=abc\nx: y')).toBe('cookie: [REDACTED]\nx: y');
  });

  test('when an answer holds nothing secret, then it is kept as it came', () => {
    const text = '{"received":true,"id":"msg_123","status":"ok"}';
    expect(redactResponseSnippet(text)).toBe(text);
  });
});
