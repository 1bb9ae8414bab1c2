import { randomBytes } from 'node:crypto';
import { createSecretBox } from '@svc/service-kit';
import { contentSecurityPolicy } from './security-headers';
import { clearedCookie, openSession, readCookie, sealSession, sessionCookie } from './session-cookie';

const box = createSecretBox([{ id: 'k1', key: randomBytes(32) }]);
const session = {
  token: 'header.payload.signature',
  expiresAt: Date.now() + 3_600_000,
  participantId: 'prt_1',
};

describe('the session cookie', () => {
  test('when a session is sealed, then it opens to the same session and its value shows no token', () => {
    const sealed = sealSession(box, session);
    expect(sealed).not.toContain('payload');
    expect(openSession(box, sealed)).toEqual(session);
  });

  test('when the value is altered, sealed with another key, or expired, then it does not open', () => {
    const sealed = sealSession(box, session);
    const parts = sealed.split('.');
    parts[3] = `${parts[3]!.slice(0, -2)}${parts[3]!.endsWith('AA') ? 'BB' : 'AA'}`;
    expect(openSession(box, parts.join('.'))).toBeUndefined();
    const other = createSecretBox([{ id: 'k1', key: randomBytes(32) }]);
    expect(openSession(other, sealed)).toBeUndefined();
    expect(openSession(box, sealed, session.expiresAt)).toBeUndefined();
    expect(openSession(box, 'not-a-sealed-value')).toBeUndefined();
  });

  test('when the cookie is written, then it is HttpOnly, SameSite=Strict, Path=/, expiring with the token, Secure over https', () => {
    const now = session.expiresAt - 120_000;
    const plain = sessionCookie({ name: 'svc_session', secure: false }, 'v', session, now);
    expect(plain).toBe(
      `svc_session=v; Path=/; HttpOnly; SameSite=Strict; Max-Age=120; Expires=${new Date(session.expiresAt).toUTCString()}`,
    );
    expect(sessionCookie({ name: '__Host-svc_session', secure: true }, 'v', session, now)).toMatch(
      /; Secure$/,
    );
    expect(clearedCookie({ name: 'svc_session', secure: false })).toContain('Max-Age=0');
  });

  test('when a Cookie header is read, then the named cookie is found among others', () => {
    expect(readCookie('a=1; svc_session=v1.k.x; b=2', 'svc_session')).toBe('v1.k.x');
    expect(readCookie('svc_session_other=1', 'svc_session')).toBeUndefined();
    expect(readCookie(undefined, 'svc_session')).toBeUndefined();
  });
});

describe('the content security policy', () => {
  test('when console origins are configured, then connect-src allows each and its WebSocket twin, and nothing inline runs', () => {
    const csp = contentSecurityPolicy({
      consoleOrigins: ['https://console.example.com', 'http://127.0.0.1:8790'],
      secure: true,
    });
    expect(csp).toContain(
      "connect-src 'self' https://console.example.com wss://console.example.com http://127.0.0.1:8790 ws://127.0.0.1:8790",
    );
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/unsafe/);
    expect(csp).toContain('upgrade-insecure-requests');
  });
});
