/**
 * Exit codes of every `svc` command. Scripts branch on these; they never change meaning.
 * Documented in apps/svc-cli/README.md ("Exit codes").
 */
export const EXIT = {
  /** The command did what it was asked. */
  ok: 0,
  /** It failed: the hub refused, a process did not start, a rule was broken. The message says which. */
  failure: 1,
  /** The command line itself is wrong: unknown flag, missing argument, bad value. */
  usage: 2,
  /** `config doctor` ran and at least one check failed. */
  doctorFailed: 3,
  /** No usable credential: log in (`svc login`) or pull the runtime config again. */
  authRequired: 4,
  /** A wait ran out of time (`ask --timeout-seconds`, waiting for a process to become ready). */
  timeout: 5,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
