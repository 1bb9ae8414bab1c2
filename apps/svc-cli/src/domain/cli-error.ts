import { EXIT } from './exit-codes';
import type { ExitCode } from './exit-codes';

/**
 * An error a command reports to its user: a stable snake_case `code` scripts can branch on, one line of
 * message, the fix in one line when there is one, and the exit code. Never carries a secret.
 */
export class CliError extends Error {
  readonly code: string;
  readonly exit: ExitCode;
  readonly fix: string | undefined;
  /** Extra facts for `--json` output (never secrets). */
  readonly details: Record<string, unknown> | undefined;

  constructor(options: {
    code: string;
    message: string;
    exit?: ExitCode;
    fix?: string;
    details?: Record<string, unknown>;
  }) {
    super(options.message);
    this.name = 'CliError';
    this.code = options.code;
    this.exit = options.exit ?? EXIT.failure;
    this.fix = options.fix;
    this.details = options.details;
  }
}

export function authRequired(message: string, fix = 'run `svc login` again'): CliError {
  return new CliError({ code: 'auth_required', message, fix, exit: EXIT.authRequired });
}

export function usageError(code: string, message: string, fix?: string): CliError {
  return new CliError({ code, message, fix, exit: EXIT.usage });
}
