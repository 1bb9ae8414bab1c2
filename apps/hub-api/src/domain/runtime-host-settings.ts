import { AppError } from '@svc/service-kit';

/** Hosts that may be reached over plain http (the runtime host itself, in development). */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

const invalid = (code: string, field: string, detail: string) =>
  new AppError({ status: 400, code, detail, extra: { field } });

/**
 * A public URL of a runtime host (console base URL, relay URL): https, or http for loopback only; no
 * credentials, query or fragment. Returned without a trailing slash, so `<url>/<workspace>/agents/…` joins
 * cleanly.
 */
export function normalizePublicUrl(value: string, field: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid('runtime_url_invalid', field, `${field} must be an absolute URL.`);
  }
  const hostname = url.hostname.toLowerCase();
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(hostname)) {
    throw invalid(
      'runtime_url_insecure',
      field,
      `${field} must use https; plain http is accepted for 127.0.0.1 and localhost only.`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw invalid('runtime_url_invalid', field, `${field} must be an https URL.`);
  }
  if (url.username || url.password) {
    throw invalid('runtime_url_invalid', field, `${field} must not carry credentials.`);
  }
  if (url.search || url.hash || value.includes('?') || value.includes('#')) {
    throw invalid('runtime_url_invalid', field, `${field} must not have a query or a fragment.`);
  }
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
}

const POSIX_ABSOLUTE = /^\//;
const WINDOWS_ABSOLUTE = /^[A-Za-z]:[\\/]/;

/**
 * The root under which agent workdirs are created: an absolute POSIX (`/srv/agents`) or Windows
 * (`D:\agents`) path, not the filesystem root, without `.`/`..` segments or control characters. Trailing
 * separators are dropped so the value compares equal to what hosts set as `SVC_AGENT_WORKDIR_ROOT`.
 */
export function normalizeWorkdirRoot(value: string, field = 'workdir_root'): string {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) {
    throw invalid('workdir_root_invalid', field, `${field} must not contain control characters.`);
  }
  const windows = WINDOWS_ABSOLUTE.test(value);
  if (!windows && !POSIX_ABSOLUTE.test(value)) {
    throw invalid(
      'workdir_root_invalid',
      field,
      `${field} must be an absolute path, such as /srv/agents (or D:\\agents on Windows).`,
    );
  }
  const segments = (windows ? value.slice(2) : value).split(windows ? /[\\/]+/ : /\/+/).filter(Boolean);
  if (segments.some((segment) => segment === '.' || segment === '..')) {
    throw invalid('workdir_root_invalid', field, `${field} must not contain '.' or '..' segments.`);
  }
  if (segments.length === 0) {
    throw invalid('workdir_root_invalid', field, `${field} cannot be the filesystem root.`);
  }
  return windows ? value.replace(/[\\/]+$/, '') : value.replace(/\/+$/, '');
}
