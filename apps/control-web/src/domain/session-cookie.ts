import type { SecretBox } from '@svc/service-kit';

/**
 * The participant's session as the browser holds it: one HttpOnly cookie whose value is the participant JWT
 * sealed (AES-256-GCM) with the server's session key, so page scripts never see the token and the browser
 * cannot read or alter it. The cookie expires with the token.
 */
export interface Session {
  token: string;
  /** When the token (and so the session) ends, epoch milliseconds. */
  expiresAt: number;
  participantId: string;
}

/** Bound into every seal: a value sealed for another purpose with the same key does not open as a session. */
const PURPOSE = 'control-web-session-v1';

export function cookieName(secure: boolean): string {
  // The __Host- prefix (Secure, Path=/, no Domain) keeps subdomains from planting or shadowing the cookie.
  return secure ? '__Host-svc_session' : 'svc_session';
}

export function sealSession(box: SecretBox, session: Session): string {
  return box.seal(
    JSON.stringify({ t: session.token, e: session.expiresAt, p: session.participantId }),
    PURPOSE,
  );
}

/** The session in a cookie value, or undefined when it does not open, is malformed or has expired. */
export function openSession(box: SecretBox, value: string, now = Date.now()): Session | undefined {
  try {
    const parsed = JSON.parse(box.open(value, PURPOSE)) as { t?: unknown; e?: unknown; p?: unknown };
    if (typeof parsed.t !== 'string' || typeof parsed.e !== 'number' || typeof parsed.p !== 'string')
      return undefined;
    if (parsed.e <= now) return undefined;
    return { token: parsed.t, expiresAt: parsed.e, participantId: parsed.p };
  } catch {
    return undefined;
  }
}

/** The value of one cookie in a `Cookie` header (the first, as browsers send the most specific first). */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export interface CookieSettings {
  name: string;
  secure: boolean;
}

/** `Set-Cookie` for a new session: HttpOnly, SameSite=Strict, Path=/, Secure over https, expiring with the token. */
export function sessionCookie(
  settings: CookieSettings,
  sealed: string,
  session: Session,
  now = Date.now(),
): string {
  const maxAge = Math.max(0, Math.floor((session.expiresAt - now) / 1000));
  return [
    `${settings.name}=${sealed}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Strict',
    `Max-Age=${maxAge}`,
    `Expires=${new Date(session.expiresAt).toUTCString()}`,
    ...(settings.secure ? ['Secure'] : []),
  ].join('; ');
}

/** `Set-Cookie` that removes the session cookie. */
export function clearedCookie(settings: CookieSettings): string {
  return [
    `${settings.name}=`,
    'Path=/',
    'HttpOnly',
    'SameSite=Strict',
    'Max-Age=0',
    'Expires=Thu, 01 Jan 1970 00:00:00 GMT',
    ...(settings.secure ? ['Secure'] : []),
  ].join('; ');
}
