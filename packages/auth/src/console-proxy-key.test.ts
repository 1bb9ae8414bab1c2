import { createHmac } from 'node:crypto';
import { CONSOLE_SECRET_MIN_LENGTH, deriveConsoleProxyKey } from './console-proxy-key';

const secret = 's'.repeat(CONSOLE_SECRET_MIN_LENGTH);

describe('the console proxy key', () => {
  test('when derived twice for one agent, then both are equal and 43 base64url characters', () => {
    const key = deriveConsoleProxyKey(secret, 'agt_1');
    expect(deriveConsoleProxyKey(secret, 'agt_1')).toBe(key);
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  test('when the agent or the secret differs, then the key differs', () => {
    const key = deriveConsoleProxyKey(secret, 'agt_1');
    expect(deriveConsoleProxyKey(secret, 'agt_2')).not.toBe(key);
    expect(deriveConsoleProxyKey(`${secret}x`, 'agt_1')).not.toBe(key);
  });

  test('when derived, then it is the HMAC-SHA256 of the labelled agent id (what another implementation must compute)', () => {
    const expected = createHmac('sha256', secret).update('svc-console-proxy-key:agt_1').digest('base64url');
    expect(deriveConsoleProxyKey(secret, 'agt_1')).toBe(expected);
  });

  test('when the secret is short or the agent id empty, then it refuses', () => {
    expect(() => deriveConsoleProxyKey('short', 'agt_1')).toThrow(RangeError);
    expect(() => deriveConsoleProxyKey(secret, '')).toThrow(TypeError);
  });
});
