/**
 * The headers of every answer. The page runs only scripts and styles served from this origin (no inline
 * script, no eval, no inline style element), talks to this origin and to the configured console routers (the
 * terminal's WebSocket), and cannot be framed.
 */
export interface SecurityHeaderSettings {
  /** Console router origins (`https://console.example.com`) the terminal may connect to. */
  consoleOrigins: string[];
  /** Served over https: also HSTS and upgrade-insecure-requests. */
  secure: boolean;
}

/** An http(s) origin and its WebSocket twin (`https://h` → `wss://h`), as CSP source expressions. */
function withWebSocketTwin(origin: string): string[] {
  const url = new URL(origin);
  const ws = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return [url.origin, `${ws}//${url.host}`];
}

export function contentSecurityPolicy(settings: SecurityHeaderSettings): string {
  const connect = ["'self'", ...settings.consoleOrigins.flatMap(withWebSocketTwin)];
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src ${[...new Set(connect)].join(' ')}`,
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
    ...(settings.secure ? ['upgrade-insecure-requests'] : []),
  ].join('; ');
}

export function securityHeaders(settings: SecurityHeaderSettings): Record<string, string> {
  return {
    'Content-Security-Policy': contentSecurityPolicy(settings),
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
    ...(settings.secure ? { 'Strict-Transport-Security': 'max-age=31536000; includeSubDomains' } : {}),
  };
}
