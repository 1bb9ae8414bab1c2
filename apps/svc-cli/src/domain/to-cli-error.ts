import { ApiError } from '@svc/contracts';
import { CliError } from './cli-error';
import { EXIT } from './exit-codes';
import { redactText } from './redact';

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
]);

/**
 * Turns whatever a command threw into a {@link CliError}: hub problems keep their `code` (401 becomes "log in
 * again", exit 4), unreachable services say which URL, oclif's parse errors are usage errors (exit 2). The
 * message is always passed through {@link redactText}.
 */
export function toCliError(error: unknown): CliError {
  if (error instanceof CliError) return error;
  if (error instanceof ApiError) {
    const detail = redactText(error.message);
    if (error.status === 401) {
      return new CliError({
        code: 'auth_required',
        message: `the hub refused the credential (${error.code}): ${detail}`,
        fix: 'run `svc login` (participant) or `svc config pull-runtime` (runtime key) again',
        exit: EXIT.authRequired,
        details: { status: error.status, hub_code: error.code },
      });
    }
    const fix = (error.problem as { recommended_action?: unknown } | undefined)?.recommended_action;
    return new CliError({
      code: error.code,
      message: detail,
      fix: typeof fix === 'string' ? redactText(fix) : undefined,
      details: { status: error.status, ...(error.requestId ? { request_id: error.requestId } : {}) },
    });
  }
  const e = error as { name?: string; message?: string; parse?: unknown; cause?: { code?: string } };
  // oclif's parse errors carry `parse`; a flag value refused by the flag's own parser ("Parsing --x … Expected
  // an integer") does not, but both end with oclif's help hint. Either way: one line, exit 2.
  if (e && (e.parse !== undefined || /\nSee more help with --help$/.test(e.message ?? ''))) {
    const oneLine = (e.message ?? 'invalid command line')
      .replace(/\nSee more help with --help$/, '')
      .replace(/^The following errors? occurred:\s*/, '')
      .replace(/\s*\n\s*/g, '; ')
      .replace(/^Parsing (--[\w-]+);/, '$1:');
    return new CliError({
      code: 'usage',
      message: redactText(oneLine),
      fix: "see the command's --help",
      exit: EXIT.usage,
    });
  }
  const causeCode = e?.cause?.code;
  if (e?.name === 'TypeError' && e.message === 'fetch failed' && causeCode && NETWORK_CODES.has(causeCode)) {
    return new CliError({
      code: 'service_unreachable',
      message: `a service could not be reached (${causeCode})`,
      fix: 'check the URL and that the service runs (svc config doctor)',
    });
  }
  if (e?.name === 'TimeoutError') {
    return new CliError({
      code: 'timeout',
      message: redactText(e.message ?? 'timed out'),
      exit: EXIT.timeout,
    });
  }
  return new CliError({ code: 'failure', message: redactText(e?.message ?? String(error)) });
}
