import type { DoctorCheck } from '../domain/doctor-checks';
import type { DoctorReport } from '../use-cases/config/run-doctor';

const MARK: Record<DoctorCheck['status'], string> = { pass: '✓', warn: '!', fail: '✗' };

/** One line per check: mark, id, what was found and, when it did not pass, the fix. */
export function presentDoctorCheck(check: DoctorCheck): string {
  const fix = check.fix && check.status !== 'pass' ? ` — fix: ${check.fix}` : '';
  return `${MARK[check.status]} ${check.id}: ${check.detail}${fix}`;
}

export function presentDoctor(report: DoctorReport): string[] {
  const { passed, warned, failed } = report.summary;
  return [
    ...report.checks.map(presentDoctorCheck),
    `${passed} passed, ${warned} warning${warned === 1 ? '' : 's'}, ${failed} failed`,
  ];
}
