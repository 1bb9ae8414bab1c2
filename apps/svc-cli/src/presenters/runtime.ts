import type { RuntimePlan } from '../domain/runtime-plan';
import type { RuntimeControlStatus } from '../data/control-server';
import type { HostDrainReport } from '../use-cases/runtime/change-host-drain';

/** Human lines of a runtime plan (`runtime up --dry-run`). Variable names only, never values. */
export function planLines(plan: RuntimePlan): string[] {
  const lines = [
    `runtime ${plan.runtime_instance_id} of workspace ${plan.workspace} (profile ${plan.profile})`,
    `hub             ${plan.hub_url}`,
    `bundle          ${plan.bundle_id ?? '-'}`,
  ];
  for (const p of plan.processes) {
    lines.push(`process ${p.name}: ${p.argv.join(' ')}`);
    lines.push(`  listens       ${p.url}`);
    lines.push(`  environment   ${p.env.join(' ')}`);
    lines.push(`  log           ${p.log_file}`);
  }
  if (plan.console_balancer_url)
    lines.push(`console address ${plan.console_balancer_url} (the load balancer in front of the routers)`);
  lines.push(`control socket  ${plan.control_socket}`);
  lines.push(`heartbeat       every ${plan.heartbeat_interval_ms / 1000} s`);
  lines.push(`state files     ${plan.state_files.join(' ')}`);
  lines.push(`systemd unit    ${plan.systemd_unit}`);
  lines.push('(dry run: nothing was started or written)');
  return lines;
}

function age(at: string | null, now = Date.now()): string {
  if (!at) return 'never';
  const s = Math.max(0, Math.round((now - Date.parse(at)) / 1000));
  return `${s} s ago`;
}

/** Human lines of the control API's status (`runtime status`, `internal status`). */
export function controlStatusLines(status: RuntimeControlStatus): string[] {
  const proc = (label: string, p: RuntimeControlStatus['relay']) =>
    `${label.padEnd(15)} ${p.ready ? 'ready' : 'NOT READY'}  pid ${p.pid ?? '-'}  ${p.url}${p.detail ? `  (${p.detail})` : ''}`;
  const lines = [
    `runtime up      pid ${status.pid}, since ${status.started_at}, profile ${status.profile}`,
    `host            ${status.runtime_instance_id} (workspace ${status.workspace})`,
    proc('relay', status.relay),
    ...(status.console_routers && status.console_routers.length > 1
      ? status.console_routers.map((r) => proc(r.name, r))
      : [proc('console router', status.console_router)]),
    `heartbeat       last ok ${age(status.heartbeat.last_ok_at)}${status.heartbeat.last_error ? `; last error: ${status.heartbeat.last_error}` : ''}`,
  ];
  if (status.agents.length === 0) lines.push('agents          none supervised');
  for (const a of status.agents) {
    lines.push(
      `agent ${a.name.padEnd(10)} ${a.state}  pid ${a.pid ?? '-'}  restarts ${a.restarts}${a.serve_port ? `  serve ${a.serve_port}` : ''}  ${a.agent_id}`,
    );
  }
  return lines;
}

export { age as ageText };

/** Human lines of a drain or resume (`runtime drain`, `runtime resume`). */
export function drainLines(report: HostDrainReport): string[] {
  const { drain } = report;
  const lines = [`host ${report.runtime_instance_id}: ${drain.state}`];
  if (drain.requested_at) {
    lines.push(
      `  drain asked   ${drain.requested_at}${drain.requested_by ? ` by ${drain.requested_by}` : ''}`,
    );
  }
  if (drain.drained_at) lines.push(`  drained       ${drain.drained_at}`);
  if (report.running_agents !== null) lines.push(`  agents        ${report.running_agents} running`);
  if (report.waited_seconds !== null) lines.push(`  waited        ${report.waited_seconds} s`);
  if (drain.state === 'draining') {
    lines.push('  its agents stop once they hold no open stage; wait with: svc runtime drain --wait');
  }
  return lines;
}
