import { BaseCommand } from '../../base-command';
import { CliError } from '../../domain/cli-error';
import { EXIT } from '../../domain/exit-codes';
import { presentDoctor } from '../../presenters/doctor';
import { runDoctor } from '../../use-cases/config/run-doctor';
import type { DoctorReport } from '../../use-cases/config/run-doctor';

export default class ConfigDoctor extends BaseCommand<typeof ConfigDoctor> {
  static override summary = "Check this host's svc configuration; exit 3 when a check fails.";

  static override description =
    'Hub reachable (and its version), participant token valid and not near expiry, runtime config present and ' +
    'fresh, runtime key valid, SVC_RUNTIME_INSTANCE_ID (an rti_… id, the pulled one), SVC_AGENT_WORKDIR_ROOT ' +
    "(the host's workdir_root), relay and console router ready, host heartbeat fresh, file modes, clock skew " +
    'against the hub. Each check passes, warns or fails with a one-line fix; warnings do not fail. Changes nothing. ' +
    'With --json, a passing run prints {ok:true,result:{checks,…}}; a failing one prints ' +
    '{ok:false,error:{code:"doctor_checks_failed",exit_code:3,checks,…}}.';

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --json',
  ];

  public async run(): Promise<DoctorReport> {
    const report = await this.progress('Checking', () =>
      runDoctor({ store: this.store(), env: process.env, clientName: this.clientName() }),
    );
    for (const line of presentDoctor(report)) this.log(line);
    if (report.summary.failed > 0) {
      const first = report.checks.find((c) => c.status === 'fail')!;
      throw new CliError({
        code: 'doctor_checks_failed',
        message: `${report.summary.failed} of ${report.checks.length} checks failed (first: ${first.id})`,
        fix: first.fix ?? undefined,
        exit: EXIT.doctorFailed,
        details: { ...report },
      });
    }
    return report;
  }
}
